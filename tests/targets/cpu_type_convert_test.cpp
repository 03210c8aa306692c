// The cpu target's float32 -> float16/bfloat16 reorders (type_convert.hpp) give ref's bits: round
// to nearest even, overflow to Inf, and any NaN, whatever its payload, the quiet NaN of its sign.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/numeric.hpp"
#include "targets/cpu/type_convert.hpp"

namespace kiln {
namespace {

float from_bits(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

TEST(cpu_type_convert, narrowing_gives_refs_bits) {
    // Past the threshold where the copy splits over threads, with the specials in the vector body
    // and in the tail.
    std::vector<float> x(70001);
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);
    for (auto& v : x) v = dist(gen) * std::pow(2.0f, static_cast<float>(static_cast<int>(gen() % 40) - 30));
    const float specials[] = {from_bits(0x7fc00001u), from_bits(0xff812345u), from_bits(0x7f800001u),
                              std::numeric_limits<float>::infinity(), -65520.0f, 65519.0f, 5.96e-8f, -1e-9f,
                              0.0f, -0.0f, 3.3895314e38f, from_bits(0x3f808000u), from_bits(0x3f818000u)};
    for (std::size_t k = 0; k < std::size(specials); ++k) {
        x[k * 997] = specials[k];
        x[x.size() - 1 - k] = specials[k];
    }
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream s(eng);
    using dt = dnnl::memory::data_type;
    const dnnl::memory::dims dims{static_cast<dnnl::memory::dim>(x.size())};
    for (dt t : {dt::f16, dt::bf16}) {
        std::vector<std::uint16_t> y(x.size());
        dnnl::memory from({dims, dt::f32, dnnl::memory::dims{1}}, eng, x.data());
        dnnl::memory to({dims, t, dnnl::memory::dims{1}}, eng, y.data());
        tensor_copy copy(from, to);
        copy.execute(s, from, to);
        s.wait();
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            std::uint16_t want = t == dt::f16 ? half(x[i]).bits : bfloat16(x[i]).bits;
            if (y[i] != want && wrong++ < 5)
                ADD_FAILURE() << (t == dt::f16 ? "float16" : "bfloat16") << " of element " << i << " (" << x[i]
                              << "): got 0x" << std::hex << y[i] << ", ref 0x" << want << std::dec;
        }
        EXPECT_EQ(wrong, 0u);
    }
}

}  // namespace
}  // namespace kiln
