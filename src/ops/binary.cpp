// Elementwise binary arithmetic with numpy broadcasting (the binary_op base in pointwise.hpp).
// Float ops compute in double and round once to the element type. Integer ops wrap on overflow
// (two's complement), as ONNX Runtime does; integer division or modulus by zero is an error.
// Comparisons, logic and bit ops are in binary_logic.cpp.
#include <cmath>
#include <limits>

#include "ops/binary.hpp"

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

}  // namespace

template <number C> C add::apply(C a, C b) const { return plus(a, b); }
KILN_REGISTER_OP(add)

template <number C> C sub::apply(C a, C b) const { return minus(a, b); }
KILN_REGISTER_OP(sub)

template <number C> C mul::apply(C a, C b) const { return times(a, b); }
KILN_REGISTER_OP(mul)

// Integer division truncates toward zero (C, and ONNX Div since opset 14's note).
template <number C> C div::apply(C a, C b) const {
    if constexpr (floating<C>) {
        return a / b;
    } else {
        if (b == 0) fail(name, ": integer division by zero");
        if constexpr (std::is_signed_v<C>)
            if (b == -1) return minus(C(0), a);   // INT64_MIN / -1 overflows in C++
        return a / b;
    }
}
KILN_REGISTER_OP(div)

// fmod=false: Python's %, numpy's mod (for floats since opset 28, a zero result keeps the
// divisor's sign); fmod=true: C's fmod and %.
template <number C> C mod::apply(C a, C b) const {
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
KILN_REGISTER_OP(mod)

// ONNX Pow allows an exponent type different from the base's; kiln's pow takes one type (the
// ONNX frontend converts the exponent to the base's type).
template <number C> C pow::apply(C a, C b) const {
    if constexpr (floating<C>) return std::pow(a, b);
    else return int_pow(a, b);
}
KILN_REGISTER_OP(pow)

// NaN in either input gives NaN, as numpy's minimum/maximum and ONNX Min/Max.
template <number C> C min::apply(C a, C b) const {
    if constexpr (floating<C>)
        if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    return b < a ? b : a;
}
KILN_REGISTER_OP(min)

template <number C> C max::apply(C a, C b) const {
    if constexpr (floating<C>)
        if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    return b > a ? b : a;
}
KILN_REGISTER_OP(max)

// x where x >= 0, slope * x elsewhere; the output has x's shape.
shape prelu::compute_shape(std::span<const shape> in) const {
    shape out = binary_op::compute_shape(in);
    if (out.dims() != in[0].dims())
        fail("slope (input 1) ", to_string(in[1]), " does not broadcast to the shape of x (input 0) ",
             to_string(in[0]));
    return out;
}
template <number C> C prelu::apply(C x, C slope) const {
    if constexpr (std::is_unsigned_v<C>) return x;
    else return x < 0 ? times(slope, x) : x;
}
KILN_REGISTER_OP(prelu)

template <number C> C sqdiff::apply(C a, C b) const {
    C d = minus(a, b);
    return times(d, d);
}
KILN_REGISTER_OP(sqdiff)

}  // namespace kiln::ops
