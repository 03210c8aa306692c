// The bulk float32 -> float16 / bfloat16 conversions give, at every SIMD level this CPU runs,
// exactly the bits of the scalar encoder (half(double), bfloat16(double)): on random bit
// patterns, on every tie and its neighbours, and on the special values (NaN payloads, float32
// subnormals, float16 subnormals, overflow to Inf).
#include "core/numeric_bulk.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/numeric.hpp"

namespace kiln {
namespace {

float from_bits(std::uint32_t b) { return std::bit_cast<float>(b); }

std::vector<float> inputs() {
    std::vector<float> x;
    auto both_signs = [&](float v) {
        x.push_back(v);
        x.push_back(-v);
    };
    // Specials: zeros, Inf, NaNs with payloads (signalling and quiet), float32 subnormals, the
    // largest float, float16's largest finite, the float16 overflow tie (65520) and its neighbours.
    for (std::uint32_t b : {0x00000000u, 0x7F800000u, 0x7F800001u, 0x7FC00000u, 0x7FBFFFFFu, 0x7FFFFFFFu, 0x7FC12345u,
                            0x7F80F00Du, 0x00000001u, 0x00000002u, 0x007FFFFFu, 0x00400000u, 0x7F7FFFFFu, 0x7F7F8000u,
                            0x7F7F7FFFu, 0x00008000u, 0x00018000u})
        both_signs(from_bits(b));
    for (float v : {65504.0f, 65519.996f, 65520.0f, 65520.004f, 65536.0f, 0x1p-24f, 0x1p-25f, 0x1.000002p-25f,
                    0x1.8p-24f, 0x1p-14f, 0x1.ff8p-15f, 1.0f, 1.0009765625f, 1.00048828125f})
        both_signs(v);
    // Every float16 tie (the midpoint of consecutive finite values, exact in float32) and the
    // floats next to it; the last one is the overflow tie.
    for (std::uint32_t p = 0; p < 0x7C00; ++p) {
        double m = (static_cast<double>(half::from_bits(static_cast<std::uint16_t>(p))) +
                    static_cast<double>(half::from_bits(static_cast<std::uint16_t>(p + 1)))) / 2;
        auto f = static_cast<float>(m);
        for (float v : {f, std::nextafter(f, 0.0f), std::nextafter(f, INFINITY)}) both_signs(v);
    }
    // Every bfloat16 tie (bits p.8000) and its neighbours, subnormals and the overflow tie included.
    for (std::uint32_t p = 0; p < 0x7F80; ++p)
        for (std::uint32_t low : {0x7FFFu, 0x8000u, 0x8001u}) both_signs(from_bits(p << 16 | low));
    std::mt19937 gen(20261124);
    for (int i = 0; i < (1 << 22); ++i) x.push_back(from_bits(static_cast<std::uint32_t>(gen())));
    x.push_back(1.5f);   // an odd length: the vector loops leave a tail
    return x;
}

template <class Bulk, class Scalar>
void expect_exact(Bulk bulk, Scalar scalar, const char* what) {
    static const std::vector<float> x = inputs();
    std::vector<std::uint16_t> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = scalar(static_cast<double>(x[i]));
    for (auto level : {simd_level::scalar, simd_level::avx2, simd_level::avx512}) {
        if (static_cast<int>(level) > static_cast<int>(best_simd_level())) continue;
        // From the second element: the vector loads are unaligned.
        std::vector<std::uint16_t> got(x.size());
        bulk(x.data() + 1, got.data() + 1, x.size() - 1, level);
        std::size_t wrong = 0;
        for (std::size_t i = 1; i < x.size() && wrong < 10; ++i)
            if (got[i] != want[i]) {
                ++wrong;
                ADD_FAILURE() << what << " level " << static_cast<int>(level) << ": float bits 0x" << std::hex
                              << std::bit_cast<std::uint32_t>(x[i]) << " gave 0x" << got[i] << ", expected 0x" << want[i];
            }
    }
}

TEST(numeric_bulk, float16_is_bit_exact_at_every_level) {
    expect_exact(floats_to_half, [](double v) { return half(v).bits; }, "float16");
}

TEST(numeric_bulk, bfloat16_is_bit_exact_at_every_level) {
    expect_exact(floats_to_bfloat16, [](double v) { return bfloat16(v).bits; }, "bfloat16");
}

}  // namespace
}  // namespace kiln
