// The small element types on the device: the fp8 formats (one byte each), fp8e8m0 (MX scales) and
// the packed ones (int4/uint4 and fp4e2m1 two per byte, int2/uint2 four per byte, lowest bits
// first). The encoder is core/numeric.cpp's, ported: it rounds the exact significand of a double
// to nearest even once, so the device gives ref's bits, and never depends on float flags (fast
// math flushes float subnormals; these work in integers and doubles).
// Self-contained: NVRTC compiles it without the CUDA headers.
#pragma once
#include "kiln_types.cuh"

namespace kiln {

struct fp8e4m3fn { u8 bits; };
struct fp8e5m2 { u8 bits; };
struct fp8e4m3fnuz { u8 bits; };
struct fp8e5m2fnuz { u8 bits; };
struct fp8e8m0 { u8 bits; };

// What a format does with its all-ones exponent field (numeric.cpp's `specials`).
enum specials_kind { fmt_ieee = 0, fmt_finite_nan = 1, fmt_fnuz = 2, fmt_finite = 3 };

// A sign-exponent-mantissa format of E exponent bits, M mantissa bits and bias B.
template <int E, int M, int B, int K>
struct small_float {
    static constexpr u32 sign_bit = 1u << (E + M);
    static constexpr u32 all_ones_exp = ((1u << E) - 1) << M;
    static constexpr u32 nan_bits = K == fmt_ieee ? (all_ones_exp | 1u << (M - 1)) : K == fmt_finite_nan ? sign_bit - 1 : sign_bit;
    static constexpr u32 max_finite = K == fmt_ieee ? all_ones_exp - 1 : K == fmt_finite_nan ? sign_bit - 2 : sign_bit - 1;
    static constexpr int min_exp = 1 - B;
    static constexpr int max_exp = (1 << E) - (K == fmt_ieee ? 2 : 1) - B;

    __device__ static bool is_nan(u32 bits) {
        const u32 magnitude = bits & (sign_bit - 1);
        if (K == fmt_ieee) return magnitude > all_ones_exp;
        if (K == fmt_finite_nan) return magnitude == nan_bits;
        if (K == fmt_fnuz) return bits == sign_bit;
        return false;
    }
    __device__ static u32 overflow(u32 sign, bool saturate) {
        if (saturate || K == fmt_finite) return sign | max_finite;
        if (K == fmt_ieee) return sign | all_ones_exp;
        return K == fmt_fnuz ? nan_bits : sign | nan_bits;
    }
    // a > 0 finite, rounded to nearest even from its exact significand; above max_finite: overflow.
    __device__ static u64 round_magnitude(double a) {
        const u64 raw = static_cast<u64>(__double_as_longlong(a));
        const int biased = static_cast<int>(raw >> 52);
        u64 significand = raw & ((1ull << 52) - 1);
        if (biased != 0) significand |= 1ull << 52;
        const int q = (biased > 1 ? biased : 1) - 1075;
        const int k = 63 - __clzll(static_cast<i64>(significand)) + q;
        if (k > max_exp) return static_cast<u64>(max_finite) + 1;
        const int binade = k > min_exp ? k : min_exp;
        const int shift = binade - M - q;
        u64 units = 0;
        if (shift <= 53) {
            units = significand >> shift;
            const u64 rest = significand & ((1ull << shift) - 1), half = 1ull << (shift - 1);
            if (rest > half || (rest == half && (units & 1))) ++units;
        }
        return (static_cast<u64>(binade - min_exp) << M) + units;
    }
    __device__ static u32 encode(double v, bool saturate) {
        const u64 raw = static_cast<u64>(__double_as_longlong(v));
        const u32 sign = (raw >> 63) ? sign_bit : 0u;
        if (v != v) return K == fmt_finite ? sign_bit : K == fmt_fnuz ? nan_bits : sign | nan_bits;
        const double a = __longlong_as_double(static_cast<i64>(raw & ~(1ull << 63)));
        if (a == __longlong_as_double(0x7ff0000000000000ll)) return overflow(sign, saturate);
        const u64 magnitude = a == 0.0 ? 0 : round_magnitude(a);
        if (magnitude > max_finite) return overflow(sign, saturate);
        if (magnitude == 0 && K == fmt_fnuz) return 0;
        return sign | static_cast<u32>(magnitude);
    }
    // Exact in float: every value of these formats is.
    __device__ static float decode(u32 bits) {
        const u32 sign = (bits & sign_bit) ? 0x80000000u : 0u;
        const u32 magnitude = bits & (sign_bit - 1);
        if (is_nan(bits)) return __uint_as_float(sign | 0x7fc00000u);
        if (K == fmt_ieee && magnitude == all_ones_exp) return __uint_as_float(sign | 0x7f800000u);
        const u32 exp_field = magnitude >> M, mantissa = magnitude & ((1u << M) - 1);
        const int e = exp_field == 0 ? min_exp - M : static_cast<int>(exp_field) - B - M;
        const u32 m = exp_field == 0 ? mantissa : (mantissa | 1u << M);
        const float scale = __uint_as_float(static_cast<u32>(e + 127) << 23);   // 2^e, a normal float here
        return __uint_as_float(__float_as_uint(static_cast<float>(m) * scale) | sign);
    }
};

typedef small_float<4, 3, 7, fmt_finite_nan> e4m3fn_format;
typedef small_float<5, 2, 15, fmt_ieee> e5m2_format;
typedef small_float<4, 3, 8, fmt_fnuz> e4m3fnuz_format;
typedef small_float<5, 2, 16, fmt_fnuz> e5m2fnuz_format;
typedef small_float<2, 1, 1, fmt_finite> e2m1_format;

template <class T> struct format_of;
template <> struct format_of<fp8e4m3fn> { typedef e4m3fn_format type; };
template <> struct format_of<fp8e5m2> { typedef e5m2_format type; };
template <> struct format_of<fp8e4m3fnuz> { typedef e4m3fnuz_format type; };
template <> struct format_of<fp8e5m2fnuz> { typedef e5m2fnuz_format type; };

// v rounded to T's values (ONNX Cast with `saturate`), as a float.
template <class T> __device__ __forceinline__ float round_to(double v, bool saturate) {
    typedef typename format_of<T>::type F;
    return F::decode(F::encode(v, saturate));
}

template <> struct compute_of<fp8e4m3fn> { typedef float type; };
template <> struct compute_of<fp8e5m2> { typedef float type; };
template <> struct compute_of<fp8e4m3fnuz> { typedef float type; };
template <> struct compute_of<fp8e5m2fnuz> { typedef float type; };
template <> struct compute_of<fp8e8m0> { typedef float type; };

__device__ __forceinline__ float load(const fp8e4m3fn& x) { return e4m3fn_format::decode(x.bits); }
__device__ __forceinline__ float load(const fp8e5m2& x) { return e5m2_format::decode(x.bits); }
__device__ __forceinline__ float load(const fp8e4m3fnuz& x) { return e4m3fnuz_format::decode(x.bits); }
__device__ __forceinline__ float load(const fp8e5m2fnuz& x) { return e5m2fnuz_format::decode(x.bits); }

// Stores take values already rounded to the format (round_to), so they keep Inf and NaN.
template <class T> struct fp8_storer {
    template <class C> __device__ __forceinline__ static T from(C c) {
        T t;
        t.bits = static_cast<u8>(format_of<T>::type::encode(static_cast<double>(c), false));
        return t;
    }
};
template <> struct storer<fp8e4m3fn> : fp8_storer<fp8e4m3fn> {};
template <> struct storer<fp8e5m2> : fp8_storer<fp8e5m2> {};
template <> struct storer<fp8e4m3fnuz> : fp8_storer<fp8e4m3fnuz> {};
template <> struct storer<fp8e5m2fnuz> : fp8_storer<fp8e5m2fnuz> {};

// fp8e8m0, as ONNX's reference encodes it from the float32 bits: their biased exponent is the
// pattern, the mantissa rounds it up (mode 0: any bit set), down (1: never) or to nearest (2: at
// least 1.5 times the power of two; float32 subnormals round from 2^-127 only past 1.5x).
__device__ __forceinline__ u32 e8m0_encode(float v, bool saturate, int mode) {
    const u32 f = __float_as_uint(v);
    u32 exponent = (f >> 23) & 0xffu;
    const u32 mantissa = f & 0x7fffffu;
    if (exponent == 0xffu) return saturate && mantissa == 0 ? 0xfeu : 0xffu;
    bool up = false;
    if (mode == 0) up = mantissa != 0;
    else if (mode == 2) up = (mantissa & 0x400000u) && ((mantissa & 0x3fffffu) || exponent > 0);
    if (up && !(saturate && exponent == 0xfeu)) ++exponent;
    return exponent;
}
__device__ __forceinline__ float e8m0_decode(u32 bits) {
    if (bits == 0xffu) return __uint_as_float(0x7fc00000u);
    return bits == 0 ? __uint_as_float(0x400000u) : __uint_as_float(bits << 23);   // 2^(bits - 127)
}
__device__ __forceinline__ float round_to_e8m0(float v, bool saturate, int mode) {
    return e8m0_decode(e8m0_encode(v, saturate, mode));
}
__device__ __forceinline__ float load(const fp8e8m0& x) { return e8m0_decode(x.bits); }
template <> struct storer<fp8e8m0> {
    // Values already rounded are powers of two (or NaN): their exponent is the pattern.
    template <class C> __device__ __forceinline__ static fp8e8m0 from(C c) {
        fp8e8m0 t;
        t.bits = static_cast<u8>(e8m0_encode(static_cast<float>(c), false, 1));
        return t;
    }
};

// v rounded to nearest even, keeping the low `bits` bits (two's complement when is_signed); NaN
// gives 0; beyond int64 clamped first. ONNX Cast to int4/uint4/int2/uint2 (convert.cpp).
__device__ __forceinline__ i64 wrap_to_bits(double v, int bits, bool is_signed) {
    if (v != v) return 0;
    const double c = v < -0x1p62 ? -0x1p62 : v > 0x1p62 ? 0x1p62 : v;
    const i64 i = static_cast<i64>(rint(c));
    const i64 mask = (1ll << bits) - 1, low = i & mask;
    return is_signed && (low >> (bits - 1)) ? low - (mask + 1) : low;
}

// Packed elements: element i of a tensor of `Bits`-bit elements sits at bit i * Bits.
template <int Bits> __device__ __forceinline__ u32 packed_bits(const u8* p, index_t i) {
    constexpr index_t per_byte = 8 / Bits;
    return (p[i / per_byte] >> ((i % per_byte) * Bits)) & ((1u << Bits) - 1);
}
__device__ __forceinline__ i64 load_int4(const u8* p, index_t i) { return static_cast<i64>((packed_bits<4>(p, i) ^ 8u)) - 8; }
__device__ __forceinline__ u64 load_uint4(const u8* p, index_t i) { return packed_bits<4>(p, i); }
__device__ __forceinline__ i64 load_int2(const u8* p, index_t i) { return static_cast<i64>((packed_bits<2>(p, i) ^ 2u)) - 2; }
__device__ __forceinline__ u64 load_uint2(const u8* p, index_t i) { return packed_bits<2>(p, i); }
__device__ __forceinline__ float load_fp4e2m1(const u8* p, index_t i) { return e2m1_format::decode(packed_bits<4>(p, i)); }

// The bits of a value already in the packed type's range (an fp4e2m1 value is encoded: fp4e2m1
// always saturates).
__device__ __forceinline__ u32 packed_code(i64 v, int bits) { return static_cast<u32>(v) & ((1u << bits) - 1); }
__device__ __forceinline__ u32 packed_code(u64 v, int bits) { return static_cast<u32>(v) & ((1u << bits) - 1); }
__device__ __forceinline__ u32 packed_code(double v, int) { return e2m1_format::encode(v, true); }
__device__ __forceinline__ u32 packed_code(float v, int) { return e2m1_format::encode(v, true); }

}  // namespace kiln
