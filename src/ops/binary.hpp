// Elementwise binary ops with numpy broadcasting (compute bodies in binary.cpp for arithmetic and
// binary_logic.cpp for comparisons, logic and bit ops). Float ops compute in double and round once
// to the element type; integer ops wrap on overflow.
#pragma once
#include "ops/pointwise.hpp"

namespace kiln::ops {

struct add : binary_op<add, numeric_type, false, true> {
    static constexpr std::string_view name = "add";
    template <number C> C apply(C a, C b) const;
};

struct sub : binary_op<sub> {
    static constexpr std::string_view name = "sub";
    template <number C> C apply(C a, C b) const;
};

struct mul : binary_op<mul, numeric_type, false, true> {
    static constexpr std::string_view name = "mul";
    template <number C> C apply(C a, C b) const;
};

struct div : binary_op<div> {
    static constexpr std::string_view name = "div";
    template <number C> C apply(C a, C b) const;
};

// ONNX Mod: fmod=false takes the sign of the divisor, fmod=true the sign of the dividend.
struct mod : binary_op<mod> {
    static constexpr std::string_view name = "mod";
    bool fmod = false;
    auto attributes() { return fields(field("fmod", fmod)); }
    template <number C> C apply(C a, C b) const;
};

struct pow : binary_op<pow> {
    static constexpr std::string_view name = "pow";
    template <number C> C apply(C a, C b) const;
};

struct min : binary_op<min, numeric_type, false, true> {
    static constexpr std::string_view name = "min";
    template <number C> C apply(C a, C b) const;
};

struct max : binary_op<max, numeric_type, false, true> {
    static constexpr std::string_view name = "max";
    template <number C> C apply(C a, C b) const;
};

// prelu(x, slope): slope broadcasts to x's shape one way, as ONNX PRelu.
struct prelu : binary_op<prelu> {
    static constexpr std::string_view name = "prelu";
    shape compute_shape(std::span<const shape> in) const;
    template <number C> C apply(C x, C slope) const;
};

// (a - b)^2, the squared difference that variance and layer-norm fusions use.
struct sqdiff : binary_op<sqdiff, numeric_type, false, true> {
    static constexpr std::string_view name = "sqdiff";
    template <number C> C apply(C a, C b) const;
};

#define KILN_COMPARE(NAME, ACCEPTS, COMMUTATIVE)                        \
    struct NAME : binary_op<NAME, ACCEPTS, true, COMMUTATIVE> {         \
        static constexpr std::string_view name = #NAME;                 \
        template <class C> bool apply(C a, C b) const;                  \
    };
KILN_COMPARE(equal, any_type, true)
KILN_COMPARE(greater, numeric_type, false)
KILN_COMPARE(less, numeric_type, false)
KILN_COMPARE(greater_or_equal, numeric_type, false)
KILN_COMPARE(less_or_equal, numeric_type, false)
#undef KILN_COMPARE

#define KILN_LOGICAL(NAME)                                              \
    struct NAME : binary_op<NAME, bool_type, true, true> {              \
        static constexpr std::string_view name = #NAME;                 \
        bool apply(bool a, bool b) const;                               \
    };
KILN_LOGICAL(logical_and)
KILN_LOGICAL(logical_or)
KILN_LOGICAL(logical_xor)
#undef KILN_LOGICAL

#define KILN_BITWISE(NAME)                                              \
    struct NAME : binary_op<NAME, integer_type, false, true> {          \
        static constexpr std::string_view name = #NAME;                 \
        template <integer C> C apply(C a, C b) const;                   \
    };
KILN_BITWISE(bitwise_and)
KILN_BITWISE(bitwise_or)
KILN_BITWISE(bitwise_xor)
#undef KILN_BITWISE

// ONNX BitShift: direction is "left" or "right" (arithmetic for signed types).
struct bitshift : binary_op<bitshift, integer_type> {
    static constexpr std::string_view name = "bitshift";
    std::string direction;   // required, as in ONNX
    auto attributes() { return fields(field("direction", direction)); }
    shape compute_shape(std::span<const shape> in) const;
    template <integer C> C apply(C x, C amount) const;
    std::string scalar_expr(std::span<const std::string> args) const;
};

}  // namespace kiln::ops
