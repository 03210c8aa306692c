// Tests for the formats added after the first four (numeric_test.cpp): fp8e4m3fnuz, fp8e5m2fnuz,
// fp8e8m0, fp4e2m1 and int2/uint2. Every bit pattern decodes as an independent field formula
// says and encodes back to itself, every midpoint between neighbours ties to even, the special
// values follow the ONNX Cast tables, and spot values match ml_dtypes/onnx.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/numeric.hpp"

namespace {

using namespace kiln;

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// A sign/exponent/mantissa format; `fnuz`: 1000..0 is the NaN and there is no -0 nor Inf,
// otherwise (fp4e2m1) there are no specials at all.
struct layout {
    int exp_bits, man_bits, bias;
    bool fnuz;
    std::uint32_t sign_bit() const { return 1u << (exp_bits + man_bits); }
};

double reference_decode(std::uint32_t bits, const layout& f) {
    if (f.fnuz && bits == f.sign_bit()) return nan;
    bool negative = (bits & f.sign_bit()) != 0;
    std::uint32_t e = (bits >> f.man_bits) & ((1u << f.exp_bits) - 1), m = bits & ((1u << f.man_bits) - 1);
    double mag = e == 0 ? std::ldexp(double(m), 1 - f.bias - f.man_bits)
                        : std::ldexp(1.0 + std::ldexp(double(m), -f.man_bits), int(e) - f.bias);
    return negative ? -mag : mag;
}

struct e4m3fnuz {
    static constexpr layout format{4, 3, 8, true};
    static std::uint32_t encode(double v, bool sat) { return fp8e4m3fnuz(v, sat).bits; }
    static double decode(std::uint32_t b) { return double(fp8e4m3fnuz::from_bits(std::uint8_t(b))); }
};
struct e5m2fnuz {
    static constexpr layout format{5, 2, 16, true};
    static std::uint32_t encode(double v, bool sat) { return fp8e5m2fnuz(v, sat).bits; }
    static double decode(std::uint32_t b) { return double(fp8e5m2fnuz::from_bits(std::uint8_t(b))); }
};
struct e2m1 {
    static constexpr layout format{2, 1, 1, false};
    static std::uint32_t encode(double v, bool) { return fp4e2m1_to_nibble(v); }
    static double decode(std::uint32_t b) { return fp4e2m1_from_nibble(std::uint8_t(b)); }
};

template <class T>
class SmallFloat : public ::testing::Test {};
using small_floats = ::testing::Types<e4m3fnuz, e5m2fnuz, e2m1>;
TYPED_TEST_SUITE(SmallFloat, small_floats);

TYPED_TEST(SmallFloat, EveryPatternDecodesLikeTheFieldFormulaAndRoundTrips) {
    const layout& f = TypeParam::format;
    for (std::uint32_t b = 0; b < 2 * f.sign_bit(); ++b) {
        double want = reference_decode(b, f), got = TypeParam::decode(b);
        if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got)) << b;
            continue;
        }
        EXPECT_EQ(got, want) << "pattern " << b;
        std::uint32_t back = TypeParam::encode(got, true);
        // -0 has no pattern of its own in fnuz; it encodes as +0.
        EXPECT_EQ(back, f.fnuz && got == 0 ? 0u : b) << "pattern " << b;
    }
}

TYPED_TEST(SmallFloat, MidpointsTieToEvenAndNeighboursGoToTheNearer) {
    const layout& f = TypeParam::format;
    std::uint32_t top = f.sign_bit() - 1;  // the largest finite magnitude pattern
    for (std::uint32_t b = 0; b < top; ++b) {
        double lo = reference_decode(b, f), hi = reference_decode(b + 1, f), mid = (lo + hi) / 2;
        std::uint32_t even = (b % 2 == 0) ? b : b + 1;
        EXPECT_EQ(TypeParam::encode(mid, true), even) << "between " << lo << " and " << hi;
        EXPECT_EQ(TypeParam::encode(std::nextafter(mid, lo), true), b);
        EXPECT_EQ(TypeParam::encode(std::nextafter(mid, hi), true), b + 1);
        if (b > 0) {
            EXPECT_EQ(TypeParam::encode(-std::nextafter(mid, lo), true), b | f.sign_bit());
        }
    }
}

TYPED_TEST(SmallFloat, OverflowSaturates) {
    const layout& f = TypeParam::format;
    std::uint32_t max = f.sign_bit() - 1;
    EXPECT_EQ(TypeParam::encode(1e30, true), max);
    EXPECT_EQ(TypeParam::encode(-inf, true), max | f.sign_bit());
    EXPECT_EQ(TypeParam::encode(inf, true), max);
}

TEST(Fnuz, NanNegativeZeroAndNonSaturatingOverflow) {
    for (bool sat : {true, false}) {
        EXPECT_EQ(fp8e4m3fnuz(nan, sat).bits, 0x80);
        EXPECT_EQ(fp8e4m3fnuz(-nan, sat).bits, 0x80);
        EXPECT_EQ(fp8e5m2fnuz(-0.0, sat).bits, 0x00);
        EXPECT_EQ(fp8e4m3fnuz(-1e-9, sat).bits, 0x00);  // rounds to zero, not to the NaN pattern
    }
    EXPECT_EQ(fp8e4m3fnuz(inf, false).bits, 0x80);
    EXPECT_EQ(fp8e5m2fnuz(-1e6, false).bits, 0x80);
    EXPECT_EQ(double(fp8e4m3fnuz::from_bits(0x7F)), 240.0);
    EXPECT_EQ(double(fp8e5m2fnuz::from_bits(0x7F)), 57344.0);
}

// x = [0.3, -1.7, 100, 250, 1e-3, -1e-5, 3e4, 7e4, -0.0]; onnx.numpy_helper.saturate_cast(x,
// ml_dtypes.float8_e4m3fnuz / e5m2fnuz) and x.astype(...) with onnx 1.23.2, ml_dtypes 0.5.4.
TEST(Fnuz, SpotChecksAgainstMlDtypes) {
    std::vector<double> x{0.3, -1.7, 100, 250, 1e-3, -1e-5, 3e4, 7e4, -0.0};
    std::vector<int> e4_sat{50, 198, 116, 127, 1, 0, 127, 127, 0}, e4{50, 198, 116, 128, 1, 0, 128, 128, 0};
    std::vector<int> e5_sat{57, 195, 90, 96, 24, 129, 123, 127, 0}, e5{57, 195, 90, 96, 24, 129, 123, 128, 0};
    for (std::size_t i = 0; i < x.size(); ++i) {
        EXPECT_EQ(fp8e4m3fnuz(x[i], true).bits, e4_sat[i]) << x[i];
        EXPECT_EQ(fp8e4m3fnuz(x[i], false).bits, e4[i]) << x[i];
        EXPECT_EQ(fp8e5m2fnuz(x[i], true).bits, e5_sat[i]) << x[i];
        EXPECT_EQ(fp8e5m2fnuz(x[i], false).bits, e5[i]) << x[i];
    }
}

// y.astype(ml_dtypes.float4_e2m1fn) for the values below; NaN gives -0 there too.
TEST(Fp4e2m1, SpotChecksAgainstMlDtypes) {
    std::vector<double> y{0.3, -0.7, 2.5, 5.0, -5.1, 0.25, 0.75, 1.75, 3.5, 100.0, nan};
    std::vector<int> want{1, 9, 4, 6, 15, 0, 2, 4, 6, 7, 8};
    for (std::size_t i = 0; i < y.size(); ++i) EXPECT_EQ(fp4e2m1_to_nibble(y[i]), want[i]) << y[i];
    EXPECT_EQ(fp4e2m1_from_nibble(0xF7), 6.0);  // only the low nibble is read
}

TEST(Fp8e8m0, EveryPatternIsAPowerOfTwoOrNan) {
    for (int b = 0; b < 255; ++b) {
        double v = double(fp8e8m0::from_bits(std::uint8_t(b)));
        EXPECT_EQ(v, std::ldexp(1.0, b - 127)) << b;
        if (b >= 1) {  // float32 holds 2^-126 and up exactly, so each power encodes to itself
            for (auto r : {e8m0_rounding::up, e8m0_rounding::down, e8m0_rounding::nearest})
                EXPECT_EQ(fp8e8m0(v, true, r).bits, b) << b;
        }
    }
    EXPECT_TRUE(std::isnan(double(fp8e8m0::from_bits(0xFF))));
    EXPECT_EQ(fp8e8m0(nan).bits, 0xFF);
    EXPECT_EQ(fp8e8m0(inf, true).bits, 0xFE);  // the Cast spec's table: saturate + up
    EXPECT_EQ(fp8e8m0(inf, false).bits, 0xFF);
}

// z = float32 [0.3, 1.5, 1.4, 3, 2, 1e-40, 3e38]; onnx.numpy_helper.to_float8e8m0(z, saturate,
// round_mode) with onnx 1.23.2.
TEST(Fp8e8m0, SpotChecksAgainstOnnxReference) {
    std::vector<double> z{0.3, 1.5, 1.4, 3.0, 2.0, 1e-40, 3e38};
    struct mode {
        e8m0_rounding r;
        std::vector<int> sat, nosat;
    };
    std::vector<mode> modes{
        {e8m0_rounding::up, {126, 128, 128, 129, 128, 1, 254}, {126, 128, 128, 129, 128, 1, 255}},
        {e8m0_rounding::down, {125, 127, 127, 128, 128, 0, 254}, {125, 127, 127, 128, 128, 0, 254}},
        {e8m0_rounding::nearest, {125, 128, 127, 129, 128, 0, 254}, {125, 128, 127, 129, 128, 0, 255}}};
    for (const auto& m : modes)
        for (std::size_t i = 0; i < z.size(); ++i) {
            EXPECT_EQ(fp8e8m0(z[i], true, m.r).bits, m.sat[i]) << z[i];
            EXPECT_EQ(fp8e8m0(z[i], false, m.r).bits, m.nosat[i]) << z[i];
        }
}

TEST(Int2, EveryValueRoundTripsAndOutOfRangeSaturates) {
    for (int v = -2; v <= 1; ++v) EXPECT_EQ(int2_from_bits(int2_to_bits(v)), v);
    for (int v = 0; v <= 3; ++v) EXPECT_EQ(uint2_to_bits(v), v);
    EXPECT_EQ(int2_from_bits(0xFE), -2);  // only the low two bits are read
    EXPECT_EQ(int2_from_bits(int2_to_bits(5.0)), 1);
    EXPECT_EQ(int2_from_bits(int2_to_bits(-7.0)), -2);
    EXPECT_EQ(int2_from_bits(int2_to_bits(0.5)), 0);  // ties to even
    EXPECT_EQ(int2_from_bits(int2_to_bits(-1.5)), -2);
    EXPECT_EQ(uint2_to_bits(2.5), 2);
    EXPECT_EQ(uint2_to_bits(9.0), 3);
    EXPECT_EQ(uint2_to_bits(nan), 0);
}

}  // namespace
