// The cpu target's Winograd convolutions (F(4x4, 3x3), winograd.hpp) against ref: channel counts
// that are and are not multiples of 16, odd and non-square images, asymmetric padding, batches,
// each epilogue step (bias, relu, leaky relu, clip, residual add), chunks of tiles with a shorter
// last one, and --disable-fast-math keeping convolutions direct. Random inputs and weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "cpu_test_util.hpp"

namespace kiln {
namespace {

using namespace cpu_test;

struct conv_case {
    std::size_t n, c, k, h, w;
    std::size_t top, left, bottom, right;   // padding
    std::string tail;      // ops after the convolution, reading @0; the last one is returned
};

std::string dims(std::initializer_list<std::size_t> v) {
    std::string s = "{";
    for (auto x : v) s += (s.size() > 1 ? ", " : "") + std::to_string(x);
    return s + "}";
}

std::string program_text(const conv_case& t) {
    std::size_t oh = t.h + t.top + t.bottom - 2, ow = t.w + t.left + t.right - 2;
    return "module: \"main\"\nx = @param:x -> float_type, " + dims({t.n, t.c, t.h, t.w}) +
           "\nr = @param:r -> float_type, " + dims({t.n, t.k, oh, ow}) +
           "\nb = @param:b -> float_type, " + dims({t.k, 1, 1}) + "\nw = " + literal_text(t.k * t.c * 9, 7) +
           " -> float_type, " + dims({t.k, t.c, 3, 3}) +
           "\nlo = @literal{0} -> float_type, {}\nhi = @literal{6} -> float_type, {}\n"
           "@0 = convolution[padding=" + dims({t.top, t.left, t.bottom, t.right}) + ",stride={1, 1},dilation={1, 1},group=1](x,w)\n" + t.tail;
}

// Compiles `text` for cpu (-O) and ref and compares them on random inputs (seeds 0 and 1):
// Winograd's rounding error scales with the largest values of the transformed tiles, not with
// each output, so the bound is relative to the largest output (measured: 0.3-6e-6 of it on these
// cases, 1e-5 where a clip caps the largest; a wrong tap or tile is off by a whole term, ~1e-1 of
// it). Returns the placement.
std::vector<std::string> check_winograd_against_ref(const std::string& text) {
    program p = parse_text(text);
    auto cpu = make_target("cpu")->compile(parse_text(text));
    auto ref = make_target("ref")->compile(parse_text(text), {.optimize = false});
    for (std::uint64_t seed : {0, 1}) {
        param_map in = random_inputs(p, seed);
        auto g = to_doubles(cpu->run(in).at(0)), w = to_doubles(ref->run(in).at(0));
        EXPECT_EQ(g.size(), w.size());
        double largest = 0, worst = 0;
        for (std::size_t i = 0; i < w.size(); ++i) {
            largest = std::max(largest, std::abs(w[i]));
            worst = std::max(worst, std::abs(g[i] - w[i]));
        }
        EXPECT_LE(worst, 3e-5 * largest) << "seed " << seed << ", largest output " << largest;
    }
    return cpu->stats().placement;
}

TEST(cpu_winograd, convolutions_match_ref) {
    const std::string bias_relu = "@1 = add(@0,b)\n@2 = relu(@1)\n@3 = @return(@2)\n";
    const std::string residual = "@1 = add(@0,b)\n@2 = add(@1,r)\n@3 = relu(@2)\n@4 = @return(@3)\n";
    const std::string clip = "@1 = add(@0,b)\n@2 = clip(@1,lo,hi)\n@3 = @return(@2)\n";
    const std::string leaky = "@1 = leaky_relu[alpha=0.1](@0)\n@2 = @return(@1)\n";
    const conv_case cases[] = {
        {1, 16, 16, 12, 12, 1, 1, 1, 1, bias_relu},   // 3x3 tiles: the smallest image taken
        {1, 24, 40, 13, 17, 1, 0, 2, 1, residual},    // masked channel blocks, partial tiles
        {2, 32, 20, 14, 14, 0, 0, 0, 0, clip},        // a batch; output 12x12
        {1, 64, 64, 28, 28, 1, 1, 1, 1, residual},    // resnet's shape: the residual in place
        {1, 17, 33, 15, 21, 2, 2, 2, 2, leaky},       // padding beyond a tile's halo
        {1, 16, 16, 8, 8, 1, 1, 1, 1, "@1 = @return(@0)\n"},   // 4 tiles: direct
    };
    for (const auto& t : cases) {
        std::string text = program_text(t);
        SCOPED_TRACE(text.substr(0, 300));
        auto placement = check_winograd_against_ref(text);
        bool winograd = t.h >= 12;
        EXPECT_EQ(placed(placement, "winograd: 1 instruction"), winograd) << ::testing::PrintToString(placement);
    }
}

// 1900 tiles of 16 channels in and out: chunks of 1820 tiles (8 MB of transformed inputs and GEMM
// results) and a last one of 80, each on its own GEMM.
TEST(cpu_winograd, chunks_of_tiles_match_ref) {
    conv_case t{19, 16, 16, 40, 40, 1, 1, 1, 1, "@1 = add(@0,b)\n@2 = relu(@1)\n@3 = @return(@2)\n"};
    auto placement = check_winograd_against_ref(program_text(t));
    EXPECT_TRUE(placed(placement, "winograd: 1 instruction")) << ::testing::PrintToString(placement);
}

// Winograd's results differ from the direct sum by rounding: --disable-fast-math keeps the
// convolution on oneDNN's direct one.
TEST(cpu_winograd, disable_fast_math_keeps_convolutions_direct) {
    conv_case t{1, 32, 32, 16, 16, 1, 1, 1, 1, "@1 = relu(@0)\n@2 = @return(@1)\n"};
    std::string text = program_text(t);
    auto fast = make_target("cpu")->compile(parse_text(text));
    auto exact = make_target("cpu")->compile(parse_text(text), {.fast_math = false});
    EXPECT_TRUE(placed(fast->stats().placement, "winograd: 1 instruction"));
    EXPECT_FALSE(placed(exact->stats().placement, "winograd"));
    EXPECT_TRUE(placed(exact->stats().placement, "onednn: 1 instruction"));
    param_map in = random_inputs(parse_text(text), 0);
    expect_close(fast->run(in).at(0), exact->run(in).at(0));
}

}  // namespace
}  // namespace kiln
