// Elementwise comparisons (bool output), logical ops on bools, and bit ops on integers, with
// numpy broadcasting (declared in binary.hpp). Arithmetic is in binary.cpp.
#include <cstdint>

#include "ops/binary.hpp"

namespace kiln::ops {

// Comparisons follow IEEE: any comparison with NaN is false, except not-equal.
#define KILN_COMPARE(NAME, EXPR)                                        \
    template <class C> bool NAME::apply(C a, C b) const { return EXPR; } \
    KILN_REGISTER_OP(NAME)
KILN_COMPARE(equal, a == b)
KILN_COMPARE(greater, a > b)
KILN_COMPARE(less, a < b)
KILN_COMPARE(greater_or_equal, a >= b)
KILN_COMPARE(less_or_equal, a <= b)
#undef KILN_COMPARE

#define KILN_LOGICAL(NAME, EXPR)                                        \
    bool NAME::apply(bool a, bool b) const { return EXPR; }             \
    KILN_REGISTER_OP(NAME)
KILN_LOGICAL(logical_and, a && b)
KILN_LOGICAL(logical_or, a || b)
KILN_LOGICAL(logical_xor, a != b)
#undef KILN_LOGICAL

#define KILN_BITWISE(NAME, EXPR)                                        \
    template <integer C> C NAME::apply(C a, C b) const { return EXPR; } \
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
shape bitshift::compute_shape(std::span<const shape> in) const {
    if (direction != "left" && direction != "right") fail("direction='", direction, "'; expected left or right");
    return binary_op::compute_shape(in);
}
template <integer C> C bitshift::apply(C x, C amount) const {
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
// The helper takes whether the shift is right: a string does not print as a literal.
std::string bitshift::scalar_expr(std::span<const std::string> args) const {
    return scalar_call("kiln_bitshift", args, value{{"right", value(direction == "right")}});
}
KILN_REGISTER_OP(bitshift)

}  // namespace kiln::ops
