// Tests for the reduced-precision conversions: every bit pattern of every format, every
// rounding boundary between adjacent values, the special values, and spot checks against
// numpy/ml_dtypes/onnx.
#include "core/numeric.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <vector>

namespace {

using kiln::bfloat16;
using kiln::fp8e4m3fn;
using kiln::fp8e5m2;
using kiln::half;

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// The layout of each format, written out here independently of numeric.cpp.
struct layout {
    int exp_bits;
    int man_bits;
    int bias;
    bool has_inf;  // false: the "fn" rule, NaN only at all-ones exponent and mantissa

    std::uint32_t sign_bit() const { return 1u << (exp_bits + man_bits); }
    std::uint32_t pattern_count() const { return sign_bit() << 1; }
    // The pattern below the all-ones exponent (Inf formats) or below the single NaN (fn).
    std::uint32_t max_finite() const {
        return has_inf ? (((1u << exp_bits) - 1) << man_bits) - 1 : sign_bit() - 2;
    }
};

// Value of a bit pattern from its sign, exponent and mantissa fields.
double reference_decode(std::uint32_t bits, const layout& f) {
    std::uint32_t exp_mask = (1u << f.exp_bits) - 1;
    std::uint32_t man_mask = (1u << f.man_bits) - 1;
    bool negative = ((bits >> (f.exp_bits + f.man_bits)) & 1) != 0;
    std::uint32_t e = (bits >> f.man_bits) & exp_mask;
    std::uint32_t m = bits & man_mask;
    double magnitude;
    if (f.has_inf && e == exp_mask) {
        magnitude = m == 0 ? inf : nan;
    } else if (!f.has_inf && e == exp_mask && m == man_mask) {
        magnitude = nan;
    } else if (e == 0) {
        magnitude = std::ldexp(static_cast<double>(m), 1 - f.bias - f.man_bits);
    } else {
        double fraction = 1.0 + std::ldexp(static_cast<double>(m), -f.man_bits);
        magnitude = std::ldexp(fraction, static_cast<int>(e) - f.bias);
    }
    return negative ? -magnitude : magnitude;
}

// Uniform access to the four types; `saturate` is ignored by half and bfloat16.
template <class T>
struct codec;

template <>
struct codec<half> {
    static constexpr layout format{5, 10, 15, true};
    static constexpr bool has_saturate = false;
};
template <>
struct codec<bfloat16> {
    static constexpr layout format{8, 7, 127, true};
    static constexpr bool has_saturate = false;
};
template <>
struct codec<fp8e4m3fn> {
    static constexpr layout format{4, 3, 7, false};
    static constexpr bool has_saturate = true;
};
template <>
struct codec<fp8e5m2> {
    static constexpr layout format{5, 2, 15, true};
    static constexpr bool has_saturate = true;
};

template <class T>
std::uint32_t encode(double v, bool saturate) {
    if constexpr (codec<T>::has_saturate) {
        return T(v, saturate).bits;
    } else {
        (void)saturate;
        return T(v).bits;
    }
}

template <class T>
double decode(std::uint32_t bits) {
    return static_cast<double>(T::from_bits(static_cast<decltype(T::bits)>(bits)));
}

template <class T>
std::vector<bool> saturate_modes() {
    if constexpr (codec<T>::has_saturate) return {true, false};
    return {false};
}

template <class T>
bool is_nan_bits(std::uint32_t bits) {
    return std::isnan(reference_decode(bits, codec<T>::format));
}

template <class T>
class FloatFormat : public ::testing::Test {};
using float_types = ::testing::Types<half, bfloat16, fp8e4m3fn, fp8e5m2>;
TYPED_TEST_SUITE(FloatFormat, float_types);

TYPED_TEST(FloatFormat, EveryPatternDecodesLikeTheFieldFormula) {
    const layout f = codec<TypeParam>::format;
    for (std::uint32_t b = 0; b < f.pattern_count(); ++b) {
        double expected = reference_decode(b, f);
        double got = decode<TypeParam>(b);
        if (std::isnan(expected)) {
            EXPECT_TRUE(std::isnan(got)) << "bits 0x" << std::hex << b;
        } else {
            EXPECT_EQ(got, expected) << "bits 0x" << std::hex << b;
        }
        EXPECT_EQ(std::signbit(got), (b & f.sign_bit()) != 0) << "bits 0x" << std::hex << b;
    }
}

TYPED_TEST(FloatFormat, FloatOperatorAgreesWithDouble) {
    // Every value of these formats is exact in float.
    const layout f = codec<TypeParam>::format;
    for (std::uint32_t b = 0; b < f.pattern_count(); ++b) {
        auto x = TypeParam::from_bits(static_cast<decltype(TypeParam::bits)>(b));
        float as_float = static_cast<float>(x);
        double as_double = static_cast<double>(x);
        if (std::isnan(as_double)) {
            EXPECT_TRUE(std::isnan(as_float)) << "bits 0x" << std::hex << b;
        } else {
            EXPECT_EQ(static_cast<double>(as_float), as_double) << "bits 0x" << std::hex << b;
        }
    }
}

TYPED_TEST(FloatFormat, EveryPatternRoundTrips) {
    const layout f = codec<TypeParam>::format;
    for (bool saturate : saturate_modes<TypeParam>()) {
        for (std::uint32_t b = 0; b < f.pattern_count(); ++b) {
            double v = reference_decode(b, f);
            std::uint32_t got = encode<TypeParam>(v, saturate);
            std::uint32_t sign = b & f.sign_bit();
            if (std::isnan(v)) {
                EXPECT_TRUE(is_nan_bits<TypeParam>(got)) << "bits 0x" << std::hex << b;
                EXPECT_EQ(got & f.sign_bit(), sign) << "bits 0x" << std::hex << b;
            } else if (std::isinf(v) && saturate) {
                EXPECT_EQ(got, sign | f.max_finite()) << "bits 0x" << std::hex << b;
            } else {
                EXPECT_EQ(got, b) << "bits 0x" << std::hex << b << " saturate " << saturate;
            }
        }
    }
}

// Between each pair of adjacent finite values: the exact midpoint goes to the even pattern,
// anything off the midpoint (down to one double ulp, which rounding through float would lose)
// goes to the nearer one. Pattern order equals value order for non-negative patterns.
TYPED_TEST(FloatFormat, MidpointsTieToEvenAndNeighboursGoToTheNearer) {
    const layout f = codec<TypeParam>::format;
    for (bool saturate : saturate_modes<TypeParam>()) {
        for (std::uint32_t lo = 0; lo < f.max_finite(); ++lo) {
            std::uint32_t hi = lo + 1;
            double a = reference_decode(lo, f);
            double b = reference_decode(hi, f);
            double mid = (a + b) / 2;  // exact: both have few significant bits
            double quarter = (b - a) / 4;
            std::uint32_t even = (lo % 2 == 0) ? lo : hi;
            for (std::uint32_t sign : {0u, f.sign_bit()}) {
                double s = sign ? -1.0 : 1.0;
                EXPECT_EQ(encode<TypeParam>(s * mid, saturate), sign | even) << "mid " << mid;
                EXPECT_EQ(encode<TypeParam>(s * std::nextafter(mid, 0.0), saturate), sign | lo)
                    << "just below " << mid;
                EXPECT_EQ(encode<TypeParam>(s * std::nextafter(mid, inf), saturate), sign | hi)
                    << "just above " << mid;
                EXPECT_EQ(encode<TypeParam>(s * (a + quarter), saturate), sign | lo);
                EXPECT_EQ(encode<TypeParam>(s * (b - quarter), saturate), sign | hi);
            }
        }
    }
}

TYPED_TEST(FloatFormat, SignedZeros) {
    const layout f = codec<TypeParam>::format;
    for (bool saturate : saturate_modes<TypeParam>()) {
        EXPECT_EQ(encode<TypeParam>(0.0, saturate), 0u);
        EXPECT_EQ(encode<TypeParam>(-0.0, saturate), f.sign_bit());
    }
    double negative_zero = decode<TypeParam>(f.sign_bit());
    EXPECT_EQ(negative_zero, 0.0);
    EXPECT_TRUE(std::signbit(negative_zero));
    EXPECT_FALSE(std::signbit(decode<TypeParam>(0)));
}

TYPED_TEST(FloatFormat, SmallestSubnormalAndUnderflow) {
    const layout f = codec<TypeParam>::format;
    const double smallest = std::ldexp(1.0, 1 - f.bias - f.man_bits);
    const std::uint32_t neg = f.sign_bit();
    for (bool saturate : saturate_modes<TypeParam>()) {
        EXPECT_EQ(encode<TypeParam>(smallest, saturate), 1u);
        EXPECT_EQ(encode<TypeParam>(-smallest, saturate), neg | 1u);
        // Half of the smallest subnormal is a tie between 0 (even) and 1.
        EXPECT_EQ(encode<TypeParam>(smallest / 2, saturate), 0u);
        EXPECT_EQ(encode<TypeParam>(-smallest / 2, saturate), neg);  // negative zero
        EXPECT_EQ(encode<TypeParam>(std::nextafter(smallest / 2, inf), saturate), 1u);
        EXPECT_EQ(encode<TypeParam>(-std::nextafter(smallest / 2, inf), saturate), neg | 1u);
        EXPECT_EQ(encode<TypeParam>(std::nextafter(smallest / 2, 0.0), saturate), 0u);
        EXPECT_EQ(encode<TypeParam>(smallest * 0.25, saturate), 0u);
        EXPECT_EQ(encode<TypeParam>(smallest * 1.5, saturate), 2u);  // tie: 1 is odd
        EXPECT_EQ(encode<TypeParam>(smallest * 2.5, saturate), 2u);  // tie: 2 is even
        EXPECT_EQ(encode<TypeParam>(1e-300, saturate), 0u);
        EXPECT_EQ(encode<TypeParam>(std::numeric_limits<double>::denorm_min(), saturate), 0u);
        EXPECT_EQ(encode<TypeParam>(-std::numeric_limits<double>::denorm_min(), saturate), neg);
    }
}

TYPED_TEST(FloatFormat, OneAndTwo) {
    // Normal numbers away from any edge, in case everything else is symmetric by accident.
    const layout f = codec<TypeParam>::format;
    const std::uint32_t one = static_cast<std::uint32_t>(f.bias) << f.man_bits;
    const std::uint32_t two = one + (1u << f.man_bits);
    EXPECT_EQ(encode<TypeParam>(1.0, true), one);
    EXPECT_EQ(encode<TypeParam>(-2.0, true), f.sign_bit() | two);
    EXPECT_EQ(decode<TypeParam>(one + 1), 1.0 + std::ldexp(1.0, -f.man_bits));
}

// Literal values so that an error shared by numeric.cpp and reference_decode still shows.
TEST(FloatFormatLiterals, SmallestSubnormalAndLargestFinite) {
    EXPECT_EQ(static_cast<double>(half::from_bits(0x0001)), 5.9604644775390625e-08);  // 2^-24
    EXPECT_EQ(static_cast<double>(half::from_bits(0x7BFF)), 65504.0);
    EXPECT_EQ(static_cast<double>(half::from_bits(0x0400)), 6.103515625e-05);  // 2^-14
    EXPECT_EQ(static_cast<double>(bfloat16::from_bits(0x0001)), 9.183549615799121e-41);  // 2^-133
    EXPECT_EQ(static_cast<double>(bfloat16::from_bits(0x7F7F)), 3.3895313892515355e+38);
    EXPECT_EQ(static_cast<double>(fp8e4m3fn::from_bits(0x01)), 0.001953125);  // 2^-9
    EXPECT_EQ(static_cast<double>(fp8e4m3fn::from_bits(0x7E)), 448.0);
    EXPECT_EQ(static_cast<double>(fp8e4m3fn::from_bits(0xFE)), -448.0);
    EXPECT_EQ(static_cast<double>(fp8e5m2::from_bits(0x01)), 1.52587890625e-05);  // 2^-16
    EXPECT_EQ(static_cast<double>(fp8e5m2::from_bits(0x7B)), 57344.0);
    EXPECT_TRUE(std::isinf(static_cast<double>(fp8e5m2::from_bits(0x7C))));
    EXPECT_TRUE(std::isnan(static_cast<double>(fp8e4m3fn::from_bits(0x7F))));
    EXPECT_TRUE(std::isnan(static_cast<double>(fp8e4m3fn::from_bits(0xFF))));
    EXPECT_EQ(static_cast<double>(fp8e4m3fn::from_bits(0x78)), 256.0);  // 0x78 is finite in fn
}

TEST(Half, OverflowRoundsToInfinity) {
    // 65520 is halfway between the largest finite value and 2^16; 65504 has an odd mantissa.
    EXPECT_EQ(half(65504.0).bits, 0x7BFF);
    EXPECT_EQ(half(std::nextafter(65520.0, 0.0)).bits, 0x7BFF);
    EXPECT_EQ(half(65520.0).bits, 0x7C00);
    EXPECT_EQ(half(-65520.0).bits, 0xFC00);
    EXPECT_EQ(half(1e300).bits, 0x7C00);
    EXPECT_EQ(half(std::numeric_limits<double>::max()).bits, 0x7C00);
    EXPECT_EQ(half(inf).bits, 0x7C00);
    EXPECT_EQ(half(-inf).bits, 0xFC00);
}

TEST(Bfloat16, OverflowRoundsToInfinity) {
    const double max = std::ldexp(255.0, 120);        // 0x7F7F
    const double threshold = std::ldexp(511.0, 119);  // max + half an ulp
    EXPECT_EQ(bfloat16(max).bits, 0x7F7F);
    EXPECT_EQ(bfloat16(std::nextafter(threshold, 0.0)).bits, 0x7F7F);
    EXPECT_EQ(bfloat16(threshold).bits, 0x7F80);
    EXPECT_EQ(bfloat16(-threshold).bits, 0xFF80);
    EXPECT_EQ(bfloat16(1e39).bits, 0x7F80);  // beyond float's range too
    EXPECT_EQ(bfloat16(inf).bits, 0x7F80);
    EXPECT_EQ(bfloat16(-inf).bits, 0xFF80);
}

TEST(Fp8e4m3fn, OverflowSaturatesOrGivesNan) {
    // 464 is halfway between 448 (mantissa 110, even) and 480, which would be the NaN pattern.
    for (bool saturate : {true, false}) {
        EXPECT_EQ(fp8e4m3fn(448.0, saturate).bits, 0x7E);
        EXPECT_EQ(fp8e4m3fn(464.0, saturate).bits, 0x7E);
        EXPECT_EQ(fp8e4m3fn(-464.0, saturate).bits, 0xFE);
    }
    const double above = std::nextafter(464.0, inf);
    EXPECT_EQ(fp8e4m3fn(above, true).bits, 0x7E);
    EXPECT_EQ(fp8e4m3fn(above, false).bits, 0x7F);
    EXPECT_EQ(fp8e4m3fn(-above, false).bits, 0xFF);
    EXPECT_EQ(fp8e4m3fn(480.0, true).bits, 0x7E);
    EXPECT_EQ(fp8e4m3fn(480.0, false).bits, 0x7F);
    EXPECT_EQ(fp8e4m3fn(1e300, true).bits, 0x7E);
    EXPECT_EQ(fp8e4m3fn(-1e300, true).bits, 0xFE);
    EXPECT_EQ(fp8e4m3fn(1e300, false).bits, 0x7F);
    EXPECT_EQ(fp8e4m3fn(inf, true).bits, 0x7E);
    EXPECT_EQ(fp8e4m3fn(-inf, true).bits, 0xFE);
    EXPECT_EQ(fp8e4m3fn(inf, false).bits, 0x7F);
    EXPECT_EQ(fp8e4m3fn(-inf, false).bits, 0xFF);
    EXPECT_EQ(fp8e4m3fn(1000.0).bits, 0x7E);  // saturate is the default, as in ONNX
}

TEST(Fp8e5m2, OverflowSaturatesOrGivesInfinity) {
    // 61440 is halfway between 57344 (mantissa 11, odd) and 2^16, so it rounds up: overflow.
    for (bool saturate : {true, false}) {
        EXPECT_EQ(fp8e5m2(57344.0, saturate).bits, 0x7B);
        EXPECT_EQ(fp8e5m2(std::nextafter(61440.0, 0.0), saturate).bits, 0x7B);
        EXPECT_EQ(fp8e5m2(-std::nextafter(61440.0, 0.0), saturate).bits, 0xFB);
    }
    EXPECT_EQ(fp8e5m2(61440.0, true).bits, 0x7B);
    EXPECT_EQ(fp8e5m2(61440.0, false).bits, 0x7C);
    EXPECT_EQ(fp8e5m2(-61440.0, true).bits, 0xFB);
    EXPECT_EQ(fp8e5m2(-61440.0, false).bits, 0xFC);
    EXPECT_EQ(fp8e5m2(1e300, true).bits, 0x7B);
    EXPECT_EQ(fp8e5m2(1e300, false).bits, 0x7C);
    EXPECT_EQ(fp8e5m2(inf, true).bits, 0x7B);
    EXPECT_EQ(fp8e5m2(-inf, true).bits, 0xFB);
    EXPECT_EQ(fp8e5m2(inf, false).bits, 0x7C);
    EXPECT_EQ(fp8e5m2(-inf, false).bits, 0xFC);
    EXPECT_EQ(fp8e5m2(1e6).bits, 0x7B);  // saturate is the default, as in ONNX
}

TEST(FloatFormatLiterals, NanIsQuietAndKeepsItsSign) {
    // The same patterns numpy and ml_dtypes 0.5.4 produce from float32 +-NaN.
    const double minus_nan = -nan;
    ASSERT_TRUE(std::signbit(minus_nan));
    EXPECT_EQ(half(nan).bits, 0x7E00);
    EXPECT_EQ(half(minus_nan).bits, 0xFE00);
    EXPECT_EQ(bfloat16(nan).bits, 0x7FC0);
    EXPECT_EQ(bfloat16(minus_nan).bits, 0xFFC0);
    for (bool saturate : {true, false}) {
        EXPECT_EQ(fp8e4m3fn(nan, saturate).bits, 0x7F);
        EXPECT_EQ(fp8e4m3fn(minus_nan, saturate).bits, 0xFF);
        EXPECT_EQ(fp8e5m2(nan, saturate).bits, 0x7E);
        EXPECT_EQ(fp8e5m2(minus_nan, saturate).bits, 0xFE);
    }
}

TEST(FloatFormatLiterals, NoDoubleRoundingThroughFloat) {
    // Each input is a tie point plus 2^-40: float would drop the 2^-40 and then tie to even
    // (down); rounding straight from double must go up.
    const double tiny = std::ldexp(1.0, -40);
    EXPECT_EQ(half(1.0 + std::ldexp(1.0, -11) + tiny).bits, 0x3C01);
    EXPECT_EQ(bfloat16(1.0 + std::ldexp(1.0, -8) + tiny).bits, 0x3F81);
    EXPECT_EQ(fp8e4m3fn(1.0 + std::ldexp(1.0, -4) + tiny).bits, 0x39);
    EXPECT_EQ(fp8e5m2(1.0 + std::ldexp(1.0, -3) + tiny).bits, 0x3D);
    // Without the extra bit the tie goes to the even pattern.
    EXPECT_EQ(half(1.0 + std::ldexp(1.0, -11)).bits, 0x3C00);
    EXPECT_EQ(bfloat16(1.0 + std::ldexp(1.0, -8)).bits, 0x3F80);
}

// Inputs are float32 values (so converting them never involves double rounding anywhere).
// Expected bits were generated with numpy 1.26.4, ml_dtypes 0.5.4 and onnx 1.23.2:
//   half:  x.astype(np.float16);  bfloat16: x.astype(ml_dtypes.bfloat16)
//   fp8 saturate=true:  onnx.numpy_helper.saturate_cast(x, ml_dtypes.float8_*)  (ONNX reference)
//   fp8 saturate=false: x.astype(ml_dtypes.float8_*)
const double spot_inputs[] = {
    3.1415927410125732,     0.10000000149011612, -2.7182817459106445, 9.999999747378752e-06,
    -9.999999747378752e-06, 6.0999998822808266e-05, 300.0, 500.0, -1000.0, 0.0234375, 65519.0,
    65520.0, 1.0000000116860974e-07, 0.0024999999441206455, 240.0, 250.0, -52000.0, 60000.0,
    1000000.0, 3.0000000054977558e+38, 9.99994610111476e-41, 0.3333333432674408};
constexpr std::size_t spot_count = std::size(spot_inputs);

const std::uint16_t spot_half[spot_count] = {
    0x4248, 0x2E66, 0xC170, 0x00A8, 0x80A8, 0x03FF, 0x5CB0, 0x5FD0, 0xE3D0, 0x2600, 0x7BFF,
    0x7C00, 0x0002, 0x191F, 0x5B80, 0x5BD0, 0xFA59, 0x7B53, 0x7C00, 0x7C00, 0x0000, 0x3555};
const std::uint16_t spot_bfloat16[spot_count] = {
    0x4049, 0x3DCD, 0xC02E, 0x3728, 0xB728, 0x3880, 0x4396, 0x43FA, 0xC47A, 0x3CC0, 0x4780,
    0x4780, 0x33D7, 0x3B24, 0x4370, 0x437A, 0xC74B, 0x476A, 0x4974, 0x7F62, 0x0001, 0x3EAB};
const std::uint8_t spot_e4m3fn_saturate[spot_count] = {
    0x45, 0x1D, 0xC3, 0x00, 0x80, 0x00, 0x79, 0x7E, 0xFE, 0x0C, 0x7E,
    0x7E, 0x00, 0x01, 0x77, 0x78, 0xFE, 0x7E, 0x7E, 0x7E, 0x00, 0x2B};
const std::uint8_t spot_e4m3fn_no_saturate[spot_count] = {
    0x45, 0x1D, 0xC3, 0x00, 0x80, 0x00, 0x79, 0x7F, 0xFF, 0x0C, 0x7F,
    0x7F, 0x00, 0x01, 0x77, 0x78, 0xFF, 0x7F, 0x7F, 0x7F, 0x00, 0x2B};
const std::uint8_t spot_e5m2_saturate[spot_count] = {
    0x42, 0x2E, 0xC1, 0x01, 0x81, 0x04, 0x5D, 0x60, 0xE4, 0x26, 0x7B,
    0x7B, 0x00, 0x19, 0x5C, 0x5C, 0xFA, 0x7B, 0x7B, 0x7B, 0x00, 0x35};
const std::uint8_t spot_e5m2_no_saturate[spot_count] = {
    0x42, 0x2E, 0xC1, 0x01, 0x81, 0x04, 0x5D, 0x60, 0xE4, 0x26, 0x7C,
    0x7C, 0x00, 0x19, 0x5C, 0x5C, 0xFA, 0x7B, 0x7C, 0x7C, 0x00, 0x35};

TEST(FloatFormatLiterals, SpotChecksAgainstNumpyAndMlDtypes) {
    for (std::size_t i = 0; i < spot_count; ++i) {
        const double x = spot_inputs[i];
        EXPECT_EQ(half(x).bits, spot_half[i]) << "input " << x;
        EXPECT_EQ(bfloat16(x).bits, spot_bfloat16[i]) << "input " << x;
        EXPECT_EQ(fp8e4m3fn(x, true).bits, spot_e4m3fn_saturate[i]) << "input " << x;
        EXPECT_EQ(fp8e4m3fn(x, false).bits, spot_e4m3fn_no_saturate[i]) << "input " << x;
        EXPECT_EQ(fp8e5m2(x, true).bits, spot_e5m2_saturate[i]) << "input " << x;
        EXPECT_EQ(fp8e5m2(x, false).bits, spot_e5m2_no_saturate[i]) << "input " << x;
    }
}

TEST(Int4, FromNibbleSignExtendsAndIgnoresHighBits) {
    for (int n = 0; n < 16; ++n) {
        const int expected = n < 8 ? n : n - 16;
        EXPECT_EQ(kiln::int4_from_nibble(static_cast<std::uint8_t>(n)), expected);
        EXPECT_EQ(kiln::int4_from_nibble(static_cast<std::uint8_t>(n | 0xA0)), expected);
    }
}

TEST(Int4, EveryValueRoundTrips) {
    for (int n = 0; n < 16; ++n) {
        const auto nibble = static_cast<std::uint8_t>(n);
        EXPECT_EQ(kiln::int4_to_nibble(kiln::int4_from_nibble(nibble)), nibble);
        EXPECT_EQ(kiln::uint4_to_nibble(static_cast<double>(n)), nibble);
    }
}

TEST(Int4, HalvesTieToEvenAndNeighboursGoToTheNearer) {
    for (int i = -8; i < 7; ++i) {
        const double mid = i + 0.5;
        const int even = (i % 2 == 0) ? i : i + 1;
        EXPECT_EQ(kiln::int4_from_nibble(kiln::int4_to_nibble(mid)), even) << mid;
        EXPECT_EQ(kiln::int4_from_nibble(kiln::int4_to_nibble(std::nextafter(mid, -inf))), i);
        EXPECT_EQ(kiln::int4_from_nibble(kiln::int4_to_nibble(std::nextafter(mid, inf))), i + 1);
    }
    for (int i = 0; i < 15; ++i) {
        const double mid = i + 0.5;
        const int even = (i % 2 == 0) ? i : i + 1;
        EXPECT_EQ(kiln::uint4_to_nibble(mid), even) << mid;
        EXPECT_EQ(kiln::uint4_to_nibble(std::nextafter(mid, -inf)), i);
        EXPECT_EQ(kiln::uint4_to_nibble(std::nextafter(mid, inf)), i + 1);
    }
}

TEST(Int4, SaturatesAndMapsNanToZero) {
    auto int4 = [](double v) { return kiln::int4_from_nibble(kiln::int4_to_nibble(v)); };
    EXPECT_EQ(int4(7.5), 7);
    EXPECT_EQ(int4(8.0), 7);
    EXPECT_EQ(int4(1e300), 7);
    EXPECT_EQ(int4(inf), 7);
    EXPECT_EQ(int4(-8.5), -8);
    EXPECT_EQ(int4(-9.0), -8);
    EXPECT_EQ(int4(-inf), -8);
    EXPECT_EQ(kiln::int4_to_nibble(nan), 0);
    EXPECT_EQ(kiln::int4_to_nibble(-0.0), 0);
    EXPECT_EQ(kiln::int4_to_nibble(-1.0), 0x0F);
    EXPECT_EQ(kiln::int4_to_nibble(-8.0), 0x08);
    EXPECT_EQ(kiln::uint4_to_nibble(15.5), 15);
    EXPECT_EQ(kiln::uint4_to_nibble(16.0), 15);
    EXPECT_EQ(kiln::uint4_to_nibble(inf), 15);
    EXPECT_EQ(kiln::uint4_to_nibble(-0.4), 0);
    EXPECT_EQ(kiln::uint4_to_nibble(-1.0), 0);
    EXPECT_EQ(kiln::uint4_to_nibble(-inf), 0);
    EXPECT_EQ(kiln::uint4_to_nibble(nan), 0);
}

// Expected values from onnx.numpy_helper.saturate_cast(x, ml_dtypes.int4 / uint4) in onnx
// 1.23.2 (round half to even, then clip), on float32 inputs.
TEST(Int4, SpotChecksAgainstOnnxSaturateCast) {
    const double inputs[] = {-9.0, -8.5, -7.5, -2.5, -1.5, -0.5, 0.5, 1.5,
                             2.5,  3.4000000953674316, 6.5, 7.5, 8.0, 14.5, 15.5, 100.0};
    const int int4_expected[] = {-8, -8, -8, -2, -2, 0, 0, 2, 2, 3, 6, 7, 7, 7, 7, 7};
    const int uint4_expected[] = {0, 0, 0, 0, 0, 0, 0, 2, 2, 3, 6, 8, 8, 14, 15, 15};
    for (std::size_t i = 0; i < std::size(inputs); ++i) {
        EXPECT_EQ(kiln::int4_from_nibble(kiln::int4_to_nibble(inputs[i])), int4_expected[i])
            << inputs[i];
        EXPECT_EQ(kiln::uint4_to_nibble(inputs[i]), uint4_expected[i]) << inputs[i];
    }
}

}  // namespace
