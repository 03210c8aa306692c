// Conversions for the reduced-precision storage types of numeric.hpp.
// Every float format goes through one encoder and one decoder; a format is described by its
// field widths, bias and special-value rules, so the rounding logic exists exactly once.
#include "core/numeric.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace kiln {
namespace {

// What a format does with its all-ones exponent field.
enum class specials {
    ieee,        // Inf when the mantissa is zero, NaN otherwise
    finite_nan,  // "fn" formats: no Inf; only all-ones exponent and mantissa is NaN
    fnuz,        // "fnuz" formats: no Inf, no -0; the sign bit alone is the one NaN
    finite,      // no Inf and no NaN (fp4e2m1)
};

struct float_format {
    int exp_bits;
    int man_bits;
    int bias;
    specials kind;

    constexpr std::uint32_t sign_bit() const { return 1u << (exp_bits + man_bits); }
    constexpr std::uint32_t all_ones_exp() const { return ((1u << exp_bits) - 1) << man_bits; }
    constexpr std::uint32_t inf_bits() const { return all_ones_exp(); }  // ieee only
    // A quiet NaN: top mantissa bit set for ieee formats, the single NaN pattern for fn ones.
    // For fnuz the full pattern (sign included); finite formats have none.
    constexpr std::uint32_t nan_bits() const {
        switch (kind) {
        case specials::ieee: return all_ones_exp() | 1u << (man_bits - 1);
        case specials::finite_nan: return sign_bit() - 1;
        default: return sign_bit();
        }
    }
    constexpr std::uint32_t max_finite_bits() const {
        switch (kind) {
        case specials::ieee: return all_ones_exp() - 1;
        case specials::finite_nan: return sign_bit() - 2;
        default: return sign_bit() - 1;
        }
    }
    constexpr bool is_nan(std::uint32_t bits) const {
        std::uint32_t magnitude = bits & (sign_bit() - 1);
        switch (kind) {
        case specials::ieee: return magnitude > inf_bits();
        case specials::finite_nan: return magnitude == nan_bits();
        case specials::fnuz: return bits == sign_bit();
        default: return false;
        }
    }
    // Exponents (unbiased) of the smallest normal and the largest finite binade.
    constexpr int min_exp() const { return 1 - bias; }
    constexpr int max_exp() const {
        int top_field = (1 << exp_bits) - (kind == specials::ieee ? 2 : 1);   // fn formats use the top one
        return top_field - bias;
    }
};

constexpr float_format half_format{5, 10, 15, specials::ieee};
constexpr float_format bfloat16_format{8, 7, 127, specials::ieee};
constexpr float_format e4m3fn_format{4, 3, 7, specials::finite_nan};
constexpr float_format e5m2_format{5, 2, 15, specials::ieee};
constexpr float_format e4m3fnuz_format{4, 3, 8, specials::fnuz};
constexpr float_format e5m2fnuz_format{5, 2, 16, specials::fnuz};
constexpr float_format e2m1_format{2, 1, 1, specials::finite};

// x / 2^shift rounded to nearest, ties to even. x < 2^53 (a double significand), so for
// shift > 53 the quotient is below one half and rounds to zero.
std::uint64_t shift_right_round_even(std::uint64_t x, int shift) {
    if (shift > 53) return 0;
    std::uint64_t quotient = x >> shift;
    std::uint64_t rest = x & ((std::uint64_t{1} << shift) - 1);
    std::uint64_t half = std::uint64_t{1} << (shift - 1);
    if (rest > half || (rest == half && (quotient & 1))) ++quotient;
    return quotient;
}

// Rounds a finite a > 0 to the format, working on the exact significand of the double so that
// nothing is rounded twice. Returns the magnitude bits; a result above max_finite_bits() means
// overflow. A carry out of the mantissa moves into the exponent field by plain addition,
// which is also how the largest subnormal rounds up to the smallest normal.
std::uint64_t round_magnitude(double a, const float_format& f) {
    auto raw = std::bit_cast<std::uint64_t>(a);
    int biased = static_cast<int>(raw >> 52);
    std::uint64_t significand = raw & ((std::uint64_t{1} << 52) - 1);
    if (biased != 0) significand |= std::uint64_t{1} << 52;
    int q = std::max(biased, 1) - 1075;  // a == significand * 2^q exactly
    int k = static_cast<int>(std::bit_width(significand)) - 1 + q;  // 2^k <= a < 2^(k+1)
    if (k > f.max_exp()) return std::uint64_t{f.max_finite_bits()} + 1;
    int binade = std::max(k, f.min_exp());  // below min_exp the spacing stays subnormal
    // Every format here has fewer mantissa bits than a double, so the shift is positive.
    std::uint64_t units = shift_right_round_even(significand, binade - f.man_bits - q);
    return (static_cast<std::uint64_t>(binade - f.min_exp()) << f.man_bits) + units;
}

// The full pattern (sign included) of an overflow of sign `sign`.
std::uint32_t overflow_bits(const float_format& f, std::uint32_t sign, bool saturate) {
    if (saturate || f.kind == specials::finite) return sign | f.max_finite_bits();
    if (f.kind == specials::ieee) return sign | f.inf_bits();
    return f.kind == specials::fnuz ? f.nan_bits() : sign | f.nan_bits();
}

// saturate=false is IEEE behaviour for ieee formats (overflow and Inf give Inf) and gives NaN
// for fn and fnuz formats, as ONNX Cast prescribes; saturate=true clamps to the largest finite
// value. fnuz formats have one unsigned NaN and no -0; a finite format saturates always and
// turns NaN into -0 (see fp4e2m1_to_nibble).
std::uint32_t encode(double v, const float_format& f, bool saturate) {
    std::uint32_t sign = std::signbit(v) ? f.sign_bit() : 0;
    if (std::isnan(v)) {
        if (f.kind == specials::finite) return f.sign_bit();
        return f.kind == specials::fnuz ? f.nan_bits() : sign | f.nan_bits();
    }
    double a = std::fabs(v);
    if (std::isinf(a)) return overflow_bits(f, sign, saturate);
    std::uint64_t magnitude = a == 0 ? 0 : round_magnitude(a, f);
    if (magnitude > f.max_finite_bits()) return overflow_bits(f, sign, saturate);
    if (magnitude == 0 && f.kind == specials::fnuz) return 0;   // no -0: it is the NaN pattern
    return sign | static_cast<std::uint32_t>(magnitude);
}

double decode(std::uint32_t bits, const float_format& f) {
    bool negative = (bits & f.sign_bit()) != 0;
    std::uint32_t magnitude = bits & (f.sign_bit() - 1);
    double v;
    if (f.is_nan(bits)) {
        v = std::numeric_limits<double>::quiet_NaN();
    } else if (f.kind == specials::ieee && magnitude == f.inf_bits()) {
        v = std::numeric_limits<double>::infinity();
    } else {
        std::uint32_t exp_field = magnitude >> f.man_bits;
        std::uint32_t mantissa = magnitude & ((1u << f.man_bits) - 1);
        if (exp_field == 0) {
            v = std::ldexp(mantissa, f.min_exp() - f.man_bits);
        } else {
            std::uint32_t with_implicit_one = mantissa | 1u << f.man_bits;
            v = std::ldexp(with_implicit_one, static_cast<int>(exp_field) - f.bias - f.man_bits);
        }
    }
    return std::copysign(v, negative ? -1.0 : 1.0);  // also signs NaN and zero
}

// Round to nearest, ties to even, without depending on the floating-point rounding mode.
double round_half_even(double x) {
    double floor = std::floor(x);
    double fraction = x - floor;
    bool odd = std::fmod(floor, 2.0) != 0;
    return (fraction > 0.5 || (fraction == 0.5 && odd)) ? floor + 1 : floor;
}

// ONNX's int4 note says Cast rounds to the nearest integer, ties to even, "and truncating",
// without saying how out-of-range values are brought in. We saturate, as ONNX's own helpers
// do (subbyte.float32_to_4bit_unpacked: clip then rint; numpy_helper.saturate_cast). NaN has no
// integer value; it maps to 0, which keeps the conversion total.
std::uint8_t to_nibble_saturating(double v, double lo, double hi) {
    if (std::isnan(v)) return 0;
    double r = round_half_even(std::clamp(v, lo, hi));
    return static_cast<std::uint8_t>(static_cast<int>(r) & 0x0F);
}

}  // namespace

half::half(double v) : bits(static_cast<std::uint16_t>(encode(v, half_format, false))) {}
half::operator double() const { return decode(bits, half_format); }

bfloat16::bfloat16(double v)
    : bits(static_cast<std::uint16_t>(encode(v, bfloat16_format, false))) {}
bfloat16::operator double() const { return decode(bits, bfloat16_format); }

fp8e4m3fn::fp8e4m3fn(double v, bool saturate)
    : bits(static_cast<std::uint8_t>(encode(v, e4m3fn_format, saturate))) {}
fp8e4m3fn::operator double() const { return decode(bits, e4m3fn_format); }

fp8e5m2::fp8e5m2(double v, bool saturate)
    : bits(static_cast<std::uint8_t>(encode(v, e5m2_format, saturate))) {}
fp8e5m2::operator double() const { return decode(bits, e5m2_format); }

fp8e4m3fnuz::fp8e4m3fnuz(double v, bool saturate)
    : bits(static_cast<std::uint8_t>(encode(v, e4m3fnuz_format, saturate))) {}
fp8e4m3fnuz::operator double() const { return decode(bits, e4m3fnuz_format); }

fp8e5m2fnuz::fp8e5m2fnuz(double v, bool saturate)
    : bits(static_cast<std::uint8_t>(encode(v, e5m2fnuz_format, saturate))) {}
fp8e5m2fnuz::operator double() const { return decode(bits, e5m2fnuz_format); }

// ONNX's reference works on the float32 bits: the biased float32 exponent is the e8m0 pattern
// (float32 subnormals have exponent 0, which is 2^-127 in e8m0), and the mantissa decides the
// rounding: "up" when any mantissa bit is set, "nearest" when the value is at least 1.5 times
// the power of two (the linear midpoint; exactly 1.5 rounds up), "down" never.
fp8e8m0::fp8e8m0(double v, bool saturate, e8m0_rounding r) {
    auto f = std::bit_cast<std::uint32_t>(static_cast<float>(v));
    std::uint32_t exponent = (f >> 23) & 0xFF, mantissa = f & 0x7FFFFF;
    if (exponent == 0xFF) {
        bits = saturate && mantissa == 0 ? 0xFE : 0xFF;   // Inf saturates; NaN stays NaN
        return;
    }
    bool up = false;
    if (r == e8m0_rounding::up) up = mantissa != 0;
    else if (r == e8m0_rounding::nearest) up = (mantissa & 0x400000) && ((mantissa & 0x3FFFFF) || exponent > 0);
    if (up && !(saturate && exponent == 0xFE)) ++exponent;
    bits = static_cast<std::uint8_t>(exponent);
}
fp8e8m0::operator double() const {
    if (bits == 0xFF) return std::numeric_limits<double>::quiet_NaN();
    return std::ldexp(1.0, int(bits) - 127);
}

std::uint8_t fp4e2m1_to_nibble(double v) { return static_cast<std::uint8_t>(encode(v, e2m1_format, true)); }
double fp4e2m1_from_nibble(std::uint8_t nibble) { return decode(nibble & 0x0F, e2m1_format); }

std::int8_t int2_from_bits(std::uint8_t b) { return static_cast<std::int8_t>(((b & 0x03) ^ 0x02) - 0x02); }
std::uint8_t int2_to_bits(double v) { return to_nibble_saturating(v, -2, 1) & 0x03; }
std::uint8_t uint2_to_bits(double v) { return to_nibble_saturating(v, 0, 3); }

// Only the low four bits are read; the caller's byte may hold the other nibble too.
std::int8_t int4_from_nibble(std::uint8_t nibble) {
    int low = nibble & 0x0F;
    return static_cast<std::int8_t>((low ^ 0x08) - 0x08);
}

std::uint8_t int4_to_nibble(double v) { return to_nibble_saturating(v, -8, 7); }
std::uint8_t uint4_to_nibble(double v) { return to_nibble_saturating(v, 0, 15); }

}  // namespace kiln
