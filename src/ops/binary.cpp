// Elementwise binary arithmetic with numpy broadcasting (the binary_op base in pointwise.hpp).
// Float ops compute in double and round once to the element type. Integer ops wrap on overflow
// (two's complement), as ONNX Runtime does; integer division or modulus by zero is an error.
// Comparisons, logic and bit ops are in binary_logic.cpp.
#include <cmath>
#include <limits>

#include "ops/pointwise.hpp"

namespace kiln::ops {
namespace {

// Signed int64 overflow is undefined behaviour; uint64 arithmetic wraps, and converting the
// result back to a signed type is modular since C++20. Narrower types computed in int64 wrap
// correctly too: the final cast keeps the low bits.
template <number C> C plus(C a, C b) {
    if constexpr (floating<C>) return a + b;
    else return static_cast<C>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
template <number C> C minus(C a, C b) {
    if constexpr (floating<C>) return a - b;
    else return static_cast<C>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
template <number C> C times(C a, C b) {
    if constexpr (floating<C>) return a * b;
    else return static_cast<C>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

struct add : binary_op<add, numeric_type, false, true> {
    static constexpr std::string_view name = "add";
    template <number C> C apply(C a, C b) const { return plus(a, b); }
};
KILN_REGISTER_OP(add)

struct sub : binary_op<sub> {
    static constexpr std::string_view name = "sub";
    template <number C> C apply(C a, C b) const { return minus(a, b); }
};
KILN_REGISTER_OP(sub)

struct mul : binary_op<mul, numeric_type, false, true> {
    static constexpr std::string_view name = "mul";
    template <number C> C apply(C a, C b) const { return times(a, b); }
};
KILN_REGISTER_OP(mul)

// Integer division truncates toward zero (C, and ONNX Div since opset 14's note).
struct div : binary_op<div> {
    static constexpr std::string_view name = "div";
    template <number C> C apply(C a, C b) const {
        if constexpr (floating<C>) {
            return a / b;
        } else {
            if (b == 0) fail(name, ": integer division by zero");
            if constexpr (std::is_signed_v<C>)
                if (b == -1) return minus(C(0), a);   // INT64_MIN / -1 overflows in C++
            return a / b;
        }
    }
};
KILN_REGISTER_OP(div)

// ONNX Mod: fmod=false takes the sign of the divisor (Python's %, numpy's mod; for floats since
// opset 28, a zero result keeps the divisor's sign); fmod=true takes the sign of the dividend
// (C's fmod and %).
struct mod : binary_op<mod> {
    static constexpr std::string_view name = "mod";
    bool fmod = false;
    auto attributes() { return fields(field("fmod", fmod)); }
    template <number C> C apply(C a, C b) const {
        if constexpr (floating<C>) {
            C r = std::fmod(a, b);
            if (fmod) return r;
            if (r == 0) return std::copysign(C(0), b);
            return (r < 0) != (b < 0) ? r + b : r;
        } else {
            if (b == 0) fail(name, ": integer modulus by zero");
            if constexpr (std::is_signed_v<C>) {
                if (b == -1) return 0;   // INT64_MIN % -1 overflows in C++
                C r = a % b;
                if (!fmod && r != 0 && (r < 0) != (b < 0)) r += b;
                return r;
            } else {
                return a % b;
            }
        }
    }
};
KILN_REGISTER_OP(mod)

// base^exp for integers by squaring (wrapping). A negative exponent gives the truncated real
// result (0 unless |base| is 1), as ONNX Runtime's cast of std::pow does; 0 to a negative power
// is a division by zero.
template <integer C> C int_pow(C base, C exp) {
    if constexpr (std::is_signed_v<C>) {
        if (exp < 0) {
            if (base == 0) fail("pow: 0 raised to the negative power ", exp);
            if (base == 1 || base == -1) return exp % 2 == 0 ? C(1) : base;
            return 0;
        }
    }
    C r = 1;
    for (; exp != 0; exp /= 2) {
        if (exp % 2 != 0) r = times(r, base);
        base = times(base, base);
    }
    return r;
}

// ONNX Pow allows an exponent type different from the base's; kiln's pow takes one type (the
// ONNX frontend converts the exponent to the base's type).
struct pow : binary_op<pow> {
    static constexpr std::string_view name = "pow";
    template <number C> C apply(C a, C b) const {
        if constexpr (floating<C>) return std::pow(a, b);
        else return int_pow(a, b);
    }
};
KILN_REGISTER_OP(pow)

// NaN in either input gives NaN, as numpy's minimum/maximum and ONNX Min/Max.
struct min : binary_op<min, numeric_type, false, true> {
    static constexpr std::string_view name = "min";
    template <number C> C apply(C a, C b) const {
        if constexpr (floating<C>)
            if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
        return b < a ? b : a;
    }
};
KILN_REGISTER_OP(min)

struct max : binary_op<max, numeric_type, false, true> {
    static constexpr std::string_view name = "max";
    template <number C> C apply(C a, C b) const {
        if constexpr (floating<C>)
            if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
        return b > a ? b : a;
    }
};
KILN_REGISTER_OP(max)

// prelu(x, slope): x where x >= 0, slope * x elsewhere. As ONNX PRelu, slope broadcasts to x's
// shape one way: the output has x's shape.
struct prelu : binary_op<prelu> {
    static constexpr std::string_view name = "prelu";
    shape compute_shape(std::span<const shape> in) const {
        shape out = binary_op::compute_shape(in);
        if (out.dims() != in[0].dims())
            fail("slope (input 1) ", to_string(in[1]), " does not broadcast to the shape of x (input 0) ",
                 to_string(in[0]));
        return out;
    }
    template <number C> C apply(C x, C slope) const {
        if constexpr (std::is_unsigned_v<C>) return x;
        else return x < 0 ? times(slope, x) : x;
    }
};
KILN_REGISTER_OP(prelu)

// (a - b)^2, the squared difference that variance and layer-norm fusions use.
struct sqdiff : binary_op<sqdiff, numeric_type, false, true> {
    static constexpr std::string_view name = "sqdiff";
    template <number C> C apply(C a, C b) const {
        C d = minus(a, b);
        return times(d, d);
    }
};
KILN_REGISTER_OP(sqdiff)

}  // namespace
}  // namespace kiln::ops
