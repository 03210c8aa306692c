// Elementwise comparisons (bool output), logical ops on bools, and bit ops on integers, with
// numpy broadcasting (the binary_op base in pointwise.hpp). Arithmetic is in binary.cpp.
#include <cstdint>

#include "ops/pointwise.hpp"

namespace kiln::ops {
namespace {


// Comparisons follow IEEE: any comparison with NaN is false, except not-equal.
#define KILN_COMPARE(NAME, ACCEPTS, COMMUTATIVE, EXPR)                      \
    struct NAME : binary_op<NAME, ACCEPTS, true, COMMUTATIVE> {             \
        static constexpr std::string_view name = #NAME;                     \
        template <class C> bool apply(C a, C b) const { return EXPR; }      \
    };                                                                      \
    KILN_REGISTER_OP(NAME)

KILN_COMPARE(equal, any_type, true, a == b)
KILN_COMPARE(greater, numeric_type, false, a > b)
KILN_COMPARE(less, numeric_type, false, a < b)
KILN_COMPARE(greater_or_equal, numeric_type, false, a >= b)
KILN_COMPARE(less_or_equal, numeric_type, false, a <= b)
#undef KILN_COMPARE

#define KILN_LOGICAL(NAME, EXPR)                                            \
    struct NAME : binary_op<NAME, bool_type, true, true> {                  \
        static constexpr std::string_view name = #NAME;                     \
        bool apply(bool a, bool b) const { return EXPR; }                   \
    };                                                                      \
    KILN_REGISTER_OP(NAME)

KILN_LOGICAL(logical_and, a && b)
KILN_LOGICAL(logical_or, a || b)
KILN_LOGICAL(logical_xor, a != b)
#undef KILN_LOGICAL

#define KILN_BITWISE(NAME, EXPR)                                            \
    struct NAME : binary_op<NAME, integer_type, false, true> {              \
        static constexpr std::string_view name = #NAME;                     \
        template <integer C> C apply(C a, C b) const { return EXPR; }       \
    };                                                                      \
    KILN_REGISTER_OP(NAME)

KILN_BITWISE(bitwise_and, a & b)
KILN_BITWISE(bitwise_or, a | b)
KILN_BITWISE(bitwise_xor, a ^ b)
#undef KILN_BITWISE

// ONNX BitShift (opset 28, which added signed types): "right" is arithmetic for signed types;
// "left" discards bits shifted past the top, the sign bit included. A shift amount that is
// negative or at least the element's bit width gives what the sign fill alone gives: -1 for a
// right shift of a negative x, 0 otherwise. Elements are computed in 64 bits, so amounts from the
// element's width up to 63 already give that fill once the result is narrowed.
struct bitshift : binary_op<bitshift, integer_type> {
    static constexpr std::string_view name = "bitshift";
    std::string direction;   // required, as in ONNX
    auto attributes() { return fields(field("direction", direction)); }
    shape compute_shape(std::span<const shape> in) const {
        if (direction != "left" && direction != "right")
            fail("direction='", direction, "'; expected left or right");
        return binary_op::compute_shape(in);
    }
    template <integer C> C apply(C x, C amount) const {
        bool right = direction == "right";
        bool out_of_range = amount >= 64;
        C fill = 0;
        if constexpr (std::is_signed_v<C>) {
            out_of_range = out_of_range || amount < 0;
            if (right && x < 0) fill = -1;
        }
        if (out_of_range) return fill;
        return right ? C(x >> amount) : static_cast<C>(static_cast<std::uint64_t>(x) << amount);
    }
};
KILN_REGISTER_OP(bitshift)

}  // namespace
}  // namespace kiln::ops
