// The scalar functions of kiln's pointwise ops, as code generators print them. Each pointwise op's
// scalar_expr() returns a call such as `kiln_leaky_relu(x0, 0.0099999997764825821)`: the helper
// named after the op, its inputs, then its attributes as literals in declaration order.
//
// Why calls to helpers rather than inline expressions: one template serves every compute type
// (float or double for float elements, long long / unsigned long long for integers, bool), the
// semantics that are more than an operator (NaN-propagating min/max, the sign rules of mod,
// wrapping integer arithmetic, overflow-safe softplus) are written once and read like the op, and
// the same printed text compiles as host C++ and as CUDA (NVRTC), where this header is embedded.
//
// Contract with the generator: arguments are in the op's compute type (what the reference computes
// in: double, or float where the generator chooses; 64-bit integers; bool); the result is in that
// type (bool for comparisons, isnan, isinf) and the generator converts it to the output element
// type. Generated code cannot raise: an integer division or modulus by zero gives 0, 0 to a
// negative integer power gives 0, where the reference throws. tests/ops/scalar_expr_test.cpp
// compiles every op's expression against this header and compares it with the reference compute.
#pragma once
#ifdef __CUDACC__
#define KILN_SCALAR __host__ __device__ inline
#else
#include <math.h>   // libstdc++'s <math.h> puts the float and double overloads in the global namespace
#define KILN_SCALAR inline
#endif

template <class C> struct kiln_is_float { static constexpr bool value = false; };
template <> struct kiln_is_float<float> { static constexpr bool value = true; };
template <> struct kiln_is_float<double> { static constexpr bool value = true; };
template <class C> struct kiln_is_signed { static constexpr bool value = C(-1) < C(0); };

// Integer + - * wrap (two's complement), computed unsigned because signed overflow is undefined.
template <class C> KILN_SCALAR C kiln_wrap_add(C a, C b) {
    if constexpr (kiln_is_float<C>::value) return a + b;
    else return C((unsigned long long)a + (unsigned long long)b);
}
template <class C> KILN_SCALAR C kiln_wrap_sub(C a, C b) {
    if constexpr (kiln_is_float<C>::value) return a - b;
    else return C((unsigned long long)a - (unsigned long long)b);
}
template <class C> KILN_SCALAR C kiln_wrap_mul(C a, C b) {
    if constexpr (kiln_is_float<C>::value) return a * b;
    else return C((unsigned long long)a * (unsigned long long)b);
}
// std::clamp's order of comparisons, so NaN passes through.
template <class C> KILN_SCALAR C kiln_clamp01(C v) { return v < C(0) ? C(0) : C(1) < v ? C(1) : v; }

// Unary float ops.
template <class C> KILN_SCALAR C kiln_ceil(C x) { return ceil(x); }
template <class C> KILN_SCALAR C kiln_floor(C x) { return floor(x); }
template <class C> KILN_SCALAR C kiln_round(C x) { return rint(x); }   // ties to even
template <class C> KILN_SCALAR C kiln_sqrt(C x) { return sqrt(x); }
template <class C> KILN_SCALAR C kiln_rsqrt(C x) { return C(1) / sqrt(x); }
template <class C> KILN_SCALAR C kiln_recip(C x) { return C(1) / x; }
template <class C> KILN_SCALAR C kiln_exp(C x) { return exp(x); }
template <class C> KILN_SCALAR C kiln_log(C x) { return log(x); }
template <class C> KILN_SCALAR C kiln_sin(C x) { return sin(x); }
template <class C> KILN_SCALAR C kiln_cos(C x) { return cos(x); }
template <class C> KILN_SCALAR C kiln_tan(C x) { return tan(x); }
template <class C> KILN_SCALAR C kiln_asin(C x) { return asin(x); }
template <class C> KILN_SCALAR C kiln_acos(C x) { return acos(x); }
template <class C> KILN_SCALAR C kiln_atan(C x) { return atan(x); }
template <class C> KILN_SCALAR C kiln_sinh(C x) { return sinh(x); }
template <class C> KILN_SCALAR C kiln_cosh(C x) { return cosh(x); }
template <class C> KILN_SCALAR C kiln_tanh(C x) { return tanh(x); }
template <class C> KILN_SCALAR C kiln_asinh(C x) { return asinh(x); }
template <class C> KILN_SCALAR C kiln_acosh(C x) { return acosh(x); }
template <class C> KILN_SCALAR C kiln_atanh(C x) { return atanh(x); }
template <class C> KILN_SCALAR C kiln_erf(C x) { return erf(x); }
template <class C> KILN_SCALAR C kiln_sigmoid(C x) { return C(1) / (C(1) + exp(-x)); }
template <class C> KILN_SCALAR C kiln_softsign(C x) { return x / (C(1) + fabs(x)); }
template <class C> KILN_SCALAR C kiln_mish(C x) { return x * tanh(log1p(exp(x))); }
// log(1 + e^x) without overflow for large x.
template <class C> KILN_SCALAR C kiln_softplus(C x) { return x > C(0) ? x + log1p(exp(-x)) : log1p(exp(x)); }
template <class C> KILN_SCALAR C kiln_leaky_relu(C x, double alpha) { return x >= C(0) ? x : C(alpha) * x; }
template <class C> KILN_SCALAR C kiln_elu(C x, double alpha) { return x >= C(0) ? x : C(alpha) * expm1(x); }
template <class C> KILN_SCALAR C kiln_celu(C x, double alpha) {
    C a = C(alpha);
    return fmax(C(0), x) + fmin(C(0), a * expm1(x / a));
}
template <class C> KILN_SCALAR C kiln_selu(C x, double alpha, double gamma) {
    return C(gamma) * (x > C(0) ? x : C(alpha) * expm1(x));
}
template <class C> KILN_SCALAR C kiln_thresholded_relu(C x, double alpha) { return x > C(alpha) ? x : C(0); }
template <class C> KILN_SCALAR C kiln_hard_sigmoid(C x, double alpha, double beta) {
    return kiln_clamp01(C(alpha) * x + C(beta));
}
template <class C> KILN_SCALAR C kiln_hard_swish(C x) { return x * kiln_clamp01(x / C(6) + C(0.5)); }
// sqrt(2 / pi) and 1 / sqrt(2) as literals: under the gpu's fast math, sqrt and division of
// constants are special-function instructions for every element (an eighth of the FMA rate),
// which made the erf GELU after a GEMM compute-bound.
template <class C> KILN_SCALAR C kiln_gelu(C x, bool tanh_approximation) {
    if (tanh_approximation) {
        const C k = C(0.79788456080286535588);
        return C(0.5) * x * (C(1) + tanh(k * (x + C(0.044715) * x * x * x)));
    }
    return C(0.5) * x * (C(1) + erf(x * C(0.70710678118654752440)));
}
template <class C> KILN_SCALAR C kiln_silu(C x, double beta) { return x / (C(1) + exp(-C(beta) * x)); }
template <class C> KILN_SCALAR bool kiln_isnan(C x) { return isnan(x); }
template <class C> KILN_SCALAR bool kiln_isinf(C x, bool detect_positive, bool detect_negative) {
    return isinf(x) && ((x > C(0) && detect_positive) || (x < C(0) && detect_negative));
}

// Unary numeric, bool and integer ops.
// Integers wrap as ref's do: abs and neg of the most negative value give that value back (in
// long long, -x of INT64_MIN would be undefined).
template <class C> KILN_SCALAR C kiln_abs(C x) {
    if constexpr (!kiln_is_signed<C>::value) return x;
    else if constexpr (kiln_is_float<C>::value) return x < C(0) ? -x : x;
    else return x < C(0) ? kiln_wrap_sub(C(0), x) : x;
}
template <class C> KILN_SCALAR C kiln_neg(C x) {
    if constexpr (kiln_is_float<C>::value) return -x;
    else return kiln_wrap_sub(C(0), x);
}
template <class C> KILN_SCALAR C kiln_sign(C x) { return x > C(0) ? C(1) : x < C(0) ? C(-1) : C(0); }
template <class C> KILN_SCALAR C kiln_relu(C x) { return x > C(0) || x != x ? x : C(0); }   // NaN passes through
KILN_SCALAR bool kiln_logical_not(bool x) { return !x; }
template <class C> KILN_SCALAR C kiln_bitwise_not(C x) { return ~x; }

// Binary arithmetic.
template <class C> KILN_SCALAR C kiln_add(C a, C b) { return kiln_wrap_add(a, b); }
template <class C> KILN_SCALAR C kiln_sub(C a, C b) { return kiln_wrap_sub(a, b); }
template <class C> KILN_SCALAR C kiln_mul(C a, C b) { return kiln_wrap_mul(a, b); }
// Integer division truncates toward zero; INT64_MIN / -1 wraps instead of trapping.
template <class C> KILN_SCALAR C kiln_div(C a, C b) {
    if constexpr (kiln_is_float<C>::value) return a / b;
    else {
        if (b == C(0)) return C(0);
        if (kiln_is_signed<C>::value && b == C(-1)) return kiln_wrap_sub(C(0), a);
        return a / b;
    }
}
// fmod=false takes the divisor's sign (Python's %), fmod=true the dividend's (C's fmod and %).
template <class C> KILN_SCALAR C kiln_mod(C a, C b, bool fmod_sign) {
    if constexpr (kiln_is_float<C>::value) {
        C r = fmod(a, b);
        if (fmod_sign) return r;
        if (r == C(0)) return copysign(C(0), b);
        return (r < C(0)) != (b < C(0)) ? r + b : r;
    } else {
        if (b == C(0) || (kiln_is_signed<C>::value && b == C(-1))) return C(0);
        C r = a % b;
        if (!fmod_sign && r != C(0) && (r < C(0)) != (b < C(0))) r += b;
        return r;
    }
}
// Floats: C's pow, computed as |a|^b with the sign an odd integer exponent gives a negative base
// (and NaN for a finite negative base and a non-integer exponent), since glibc's vector powf
// takes a slow scalar path for every negative base (x^3 in a tanh GELU: 2.8x slower). Integers
// by squaring (wrapping); a negative exponent gives the truncated real result.
template <class C> KILN_SCALAR C kiln_pow(C a, C b) {
    if constexpr (kiln_is_float<C>::value) {
        // Selects without branches (& not &&), so that the loop around it vectorises.
        C m = pow(fabs(a), b), half = b * C(0.5);
        bool integer = rint(b) == b;
        bool odd = integer & (rint(half) != half);   // infinities count as even
        C r = odd & signbit(a) ? -m : m;
        return (a < C(0)) & !integer & !isinf(a) ? C(0) / C(0) : r;   // NaN (NVRTC has no NAN macro)
    } else {
        if (b < C(0)) return a == C(1) || a == C(-1) ? (b % C(2) == C(0) ? C(1) : a) : C(0);
        C r = C(1);
        for (; b != C(0); b /= C(2)) {
            if (b % C(2) != C(0)) r = kiln_wrap_mul(r, a);
            a = kiln_wrap_mul(a, a);
        }
        return r;
    }
}
// NaN in either input gives NaN, as numpy's minimum/maximum.
template <class C> KILN_SCALAR C kiln_min(C a, C b) {
    if constexpr (kiln_is_float<C>::value)
        if (isnan(a) || isnan(b)) return a + b;
    return b < a ? b : a;
}
template <class C> KILN_SCALAR C kiln_max(C a, C b) {
    if constexpr (kiln_is_float<C>::value)
        if (isnan(a) || isnan(b)) return a + b;
    return b > a ? b : a;
}
template <class C> KILN_SCALAR C kiln_prelu(C x, C slope) {
    if constexpr (!kiln_is_signed<C>::value) return x;
    else return x < C(0) ? kiln_wrap_mul(slope, x) : x;
}
template <class C> KILN_SCALAR C kiln_sqdiff(C a, C b) {
    C d = kiln_wrap_sub(a, b);
    return kiln_wrap_mul(d, d);
}

// Comparisons (IEEE: false with NaN except not-equal), logic on bools, bit ops on integers.
template <class C> KILN_SCALAR bool kiln_equal(C a, C b) { return a == b; }
template <class C> KILN_SCALAR bool kiln_greater(C a, C b) { return a > b; }
template <class C> KILN_SCALAR bool kiln_less(C a, C b) { return a < b; }
template <class C> KILN_SCALAR bool kiln_greater_or_equal(C a, C b) { return a >= b; }
template <class C> KILN_SCALAR bool kiln_less_or_equal(C a, C b) { return a <= b; }
KILN_SCALAR bool kiln_logical_and(bool a, bool b) { return a && b; }
KILN_SCALAR bool kiln_logical_or(bool a, bool b) { return a || b; }
KILN_SCALAR bool kiln_logical_xor(bool a, bool b) { return a != b; }
template <class C> KILN_SCALAR C kiln_bitwise_and(C a, C b) { return a & b; }
template <class C> KILN_SCALAR C kiln_bitwise_or(C a, C b) { return a | b; }
template <class C> KILN_SCALAR C kiln_bitwise_xor(C a, C b) { return a ^ b; }
// A shift by a negative amount or by 64 or more gives the sign fill alone.
template <class C> KILN_SCALAR C kiln_bitshift(C x, C amount, bool right) {
    bool out_of_range = amount >= C(64) || (kiln_is_signed<C>::value && amount < C(0));
    C fill = kiln_is_signed<C>::value && right && x < C(0) ? C(-1) : C(0);
    if (out_of_range) return fill;
    return right ? C(x >> amount) : C((unsigned long long)x << amount);
}

// Three inputs.
template <class C> KILN_SCALAR C kiln_where(bool cond, C a, C b) { return cond ? a : b; }
// NaN in x, lo or hi gives NaN, as numpy.clip; lo > hi gives hi.
template <class C> KILN_SCALAR C kiln_clip(C x, C lo, C hi) {
    if constexpr (kiln_is_float<C>::value)
        if (isnan(x) || isnan(lo) || isnan(hi)) return x + lo + hi;
    C y = x < lo ? lo : x;
    return y > hi ? hi : y;
}
