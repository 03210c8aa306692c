// The cpu target against ref on programs that reach each of its kernel kinds: generated pointwise
// code (broadcast operands, literals, column-major inputs), oneDNN convolution epilogues with a
// residual, and blocked layouts passed between consecutive convolutions. Random inputs, seed 0.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <thread>

#include "../core/expect_error.hpp"
#include "core/error.hpp"
#include "core/random.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "tools/saved_program.hpp"
#include "tools/verify.hpp"
#include "cpu_test_util.hpp"

namespace kiln {
namespace {

using namespace cpu_test;

TEST(cpu_target, pointwise_regions_run_as_generated_code) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {2, 3, 4, 5}
b = @param:b -> float_type, {3, 1, 1}
c = @param:c -> float_type, {5}
@0 = add(x,b)
@1 = @literal{0.5} -> float_type, {}
@2 = mul(@0,@1)
@3 = sigmoid(@2)
@4 = sub(@3,c)
@5 = relu(@4)
@6 = @return(@5)
)";
    for (bool cm : {false, true}) {
        SCOPED_TRACE(cm ? "column-major inputs" : "standard inputs");
        auto placement = check_against_ref(text, cm);
        EXPECT_TRUE(placed(placement, "generated code: 1 instruction (pointwise 1)")) << ::testing::PrintToString(placement);
        EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
    }
}

// The float functions of float32 regions call libm's vector variants (libmvec, at most 4 ulp from
// the correctly rounded result where libm's scalar ones are within 1): each against ref, which
// computes in double, over a sweep of its domain with infinities, NaN and signed zeros, within
// the op cases' float32 tolerance (rtol 1e-5, atol 1e-6). The region is generated code.
TEST(cpu_target, vectorised_math_matches_ref_in_float32) {
    struct sweep { const char* op; double lo, hi; };
    const sweep sweeps[] = {{"exp", -104, 89}, {"log", 0, 1e30}, {"sin", -200, 200}, {"cos", -200, 200},
                            {"tan", -20, 20}, {"asin", -1, 1}, {"acos", -1, 1}, {"atan", -1e4, 1e4},
                            {"sinh", -90, 90}, {"cosh", -90, 90}, {"tanh", -12, 12}, {"asinh", -1e4, 1e4},
                            {"acosh", 1, 1e4}, {"atanh", -1, 1}, {"erf", -5, 5}, {"sigmoid", -90, 90},
                            {"softplus", -90, 90}, {"mish", -30, 30}, {"gelu", -10, 10},
                            {"gelu[approximate=tanh]", -10, 10}, {"elu[alpha=1]", -90, 10}};
    const std::size_t n = 65536;
    for (const auto& s : sweeps) {
        SCOPED_TRACE(s.op);
        std::string text = std::string("module: \"main\"\nx = @param:x -> float_type, {65536}\n@0 = ") + s.op +
                           "(x)\n@1 = @return(@0)\n";
        argument x(shape(dtype::float32, std::vector<std::size_t>{n}));
        auto* xv = reinterpret_cast<float*>(x.data());
        for (std::size_t i = 0; i < n; ++i) xv[i] = static_cast<float>(s.lo + (s.hi - s.lo) * static_cast<double>(i) / (n - 1));
        const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-30f, -1e-30f, 1.0f};
        for (std::size_t k = 0; k < std::size(special); ++k) xv[n / 2 + 17 * k] = special[k];
        auto exe = make_target("cpu")->compile(parse_text(text));
        ASSERT_TRUE(placed(exe->stats().placement, "generated code: 1 instruction (pointwise 1)"))
            << ::testing::PrintToString(exe->stats().placement);
        auto g = to_doubles(exe->run({{"x", x}})[0]);
        auto w = to_doubles(make_target("ref")->compile(parse_text(text), {.optimize = false})->run({{"x", x}})[0]);
        for (std::size_t i = 0; i < n; ++i) {
            if (std::isnan(w[i]) || std::isinf(w[i])) {
                ASSERT_TRUE(std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i]) << "x " << xv[i] << ": " << g[i] << ", ref " << w[i];
                continue;
            }
            ASSERT_LE(std::abs(g[i] - w[i]), 1e-6 + 1e-5 * std::abs(w[i])) << "x " << xv[i] << ": " << g[i] << ", ref " << w[i];
        }
    }
}

// pow, whose vector variant is called on |x| with the sign set apart (scalar_helpers.h): every
// sign of base and exponent, integer (odd, even, huge) and fractional exponents, zeros of both
// signs, infinities and NaN, against ref in float32's tolerance.
TEST(cpu_target, vectorised_pow_matches_ref_in_float32) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {65536}
e = @param:e -> float_type, {65536}
@0 = pow(x,e)
@1 = @return(@0)
)";
    const float exponents[] = {3, 2, -3, -2, 0.5f, -1.5f, 0, -0.0f, 1, 7, 2.5f, 16777216.0f, 33554431.0f * 2,
                               INFINITY, -INFINITY, NAN};
    const float bases[] = {0.0f, -0.0f, 1, -1, INFINITY, -INFINITY, NAN, 1e-20f};
    const std::size_t n = 65536;
    argument x(shape(dtype::float32, std::vector<std::size_t>{n})), e(shape(dtype::float32, std::vector<std::size_t>{n}));
    auto* xv = reinterpret_cast<float*>(x.data());
    auto* ev = reinterpret_cast<float*>(e.data());
    for (std::size_t i = 0; i < n; ++i) {
        ev[i] = exponents[i % std::size(exponents)];
        std::size_t k = i / std::size(exponents);
        xv[i] = k < std::size(bases) ? bases[k] : static_cast<float>(-8 + 16.0 * static_cast<double>(i) / n);
    }
    auto exe = make_target("cpu")->compile(parse_text(text));
    ASSERT_TRUE(placed(exe->stats().placement, "generated code: 1 instruction (pointwise 1)"))
        << ::testing::PrintToString(exe->stats().placement);
    param_map in{{"x", x}, {"e", e}};
    auto g = to_doubles(exe->run(in)[0]);
    auto w = to_doubles(make_target("ref")->compile(parse_text(text), {.optimize = false})->run(in)[0]);
    for (std::size_t i = 0; i < n; ++i) {
        SCOPED_TRACE(::testing::Message() << "pow(" << xv[i] << ", " << ev[i] << "): " << g[i] << ", ref " << w[i]);
        if (std::isnan(w[i]) || std::isinf(w[i]) || w[i] == 0) {
            ASSERT_TRUE(std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i] && std::signbit(g[i]) == std::signbit(w[i]));
            continue;
        }
        ASSERT_LE(std::abs(g[i] - w[i]), 1e-6 + 1e-5 * std::abs(w[i]));
    }
}

TEST(cpu_target, convolutions_with_residual_keep_blocked_layouts) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {1, 16, 12, 12}
w1 = @param:w1 -> float_type, {16, 16, 3, 3}
w2 = @param:w2 -> float_type, {16, 16, 3, 3}
b = @param:b -> float_type, {16, 1, 1}
@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w1)
@1 = add(@0,b)
@2 = relu(@1)
@3 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](@2,w2)
@4 = add(@3,x)
@5 = relu(@4)
@6 = pooling[mode=max,padding={0, 0, 0, 0},stride={2, 2},lengths={2, 2},dilations={1, 1},ceil_mode=false,count_include_pad=false,lp_order=2,global=false](@5)
@7 = @return(@6)
)";
    auto placement = check_against_ref(text);
    EXPECT_TRUE(placed(placement, "onednn: 3 instructions")) << ::testing::PrintToString(placement);
}

// mobilenet_v2's inverted residual block (1x1 expand + clip, 3x3 depthwise + clip at stride 1
// and 2, 1x1 project + residual) on random inputs, with channel counts that are and are not
// multiples of 16: the depthwise convolutions run on oneDNN's jit_dw in channels-last
// (prefer_jit_dw), and match ref.
TEST(cpu_target, inverted_residual_blocks_match_ref) {
    for (int c : {48, 24, 20}) {   // expanded to 288, 144 and 120 channels (24: AVX2 or AVX-512, timed)
        for (int stride : {1, 2}) {
            std::string e = std::to_string(c * 6), cs = std::to_string(c), s = std::to_string(stride);
            std::string text = "module: \"main\"\nx = @param:x -> float_type, {1, " + cs + ", 13, 13}\n" +
                               "we = @param:we -> float_type, {" + e + ", " + cs + ", 1, 1}\n" +
                               "wd = @param:wd -> float_type, {" + e + ", 1, 3, 3}\n" +
                               "bd = @param:bd -> float_type, {" + e + ", 1, 1}\n" +
                               "wp = @param:wp -> float_type, {" + cs + ", " + e + ", 1, 1}\n" +
                               "lo = @literal{0} -> float_type, {}\nhi = @literal{6} -> float_type, {}\n" +
                               "@0 = convolution[padding={0, 0, 0, 0},stride={1, 1},dilation={1, 1},group=1](x,we)\n" +
                               "@1 = clip(@0,lo,hi)\n" +
                               "@2 = convolution[padding={1, 1, 1, 1},stride={" + s + ", " + s + "},dilation={1, 1},group=" + e +
                               "](@1,wd)\n@3 = add(@2,bd)\n@4 = clip(@3,lo,hi)\n" +
                               "@5 = convolution[padding={0, 0, 0, 0},stride={1, 1},dilation={1, 1},group=1](@4,wp)\n" +
                               (stride == 1 ? "@6 = add(@5,x)\n@7 = @return(@6)\n" : "@6 = @return(@5)\n");
            SCOPED_TRACE(text);
            auto placement = check_against_ref(text);
            EXPECT_TRUE(placed(placement, "onednn: 3 instructions")) << ::testing::PrintToString(placement);
        }
    }
}

// A convolution whose sum post-op adds a residual computed in the arena writes over it (the
// residual is in dst already: no copy), unless the residual is read again, here as the
// convolution's own input: then it gets a buffer of its own. The arena shows which.
TEST(cpu_target, convolution_writes_over_its_residual_where_nothing_reads_it_after) {
    const std::string head = R"(module: "main"
x = @param:x -> float_type, {1, 16, 12, 12}
w1 = @param:w1 -> float_type, {16, 16, 1, 1}
w2 = @param:w2 -> float_type, {16, 16, 1, 1}
w3 = @param:w3 -> float_type, {16, 16, 1, 1}
@0 = convolution[padding={0, 0, 0, 0},stride={1, 1},dilation={1, 1},group=1](x,w1)
@1 = relu(@0)
)";
    const std::size_t buffer = 16 * 12 * 12 * 4;   // a multiple of 256: buffers are adjacent
    // r = relu(conv(x)); y = relu(conv(r)); z = relu(conv(y) + r) over r; pool(z) over y: two
    // buffers. The sums feed poolings, which read the convolutions' channels-last (a returned
    // result would be reordered out of a dst of the kernel's own).
    auto in_place = check_stats_against_ref(head + R"(@2 = convolution[padding={0, 0, 0, 0},stride={1, 1},dilation={1, 1},group=1](@1,w2)
@3 = relu(@2)
@4 = convolution[padding={0, 0, 0, 0},stride={1, 1},dilation={1, 1},group=1](@3,w3)
@5 = add(@4,@1)
@6 = relu(@5)
@7 = pooling[mode=max,padding={0, 0, 0, 0},stride={2, 2},lengths={2, 2},dilations={1, 1},ceil_mode=false,count_include_pad=false,lp_order=2,global=false](@6)
@8 = @return(@7)
)");
    EXPECT_TRUE(placed(in_place.placement, "onednn: 4 instructions")) << ::testing::PrintToString(in_place.placement);
    EXPECT_EQ(in_place.arena_bytes, 2 * buffer);   // apart: 3
    // conv(r) + r: r is the convolution's input while it writes, so the result needs its own.
    auto apart = check_stats_against_ref(head + R"(@2 = convolution[padding={0, 0, 0, 0},stride={1, 1},dilation={1, 1},group=1](@1,w2)
@3 = add(@2,@1)
@4 = pooling[mode=max,padding={0, 0, 0, 0},stride={2, 2},lengths={2, 2},dilations={1, 1},ceil_mode=false,count_include_pad=false,lp_order=2,global=false](@3)
@5 = @return(@4)
)");
    EXPECT_TRUE(placed(apart.placement, "onednn: 3 instructions")) << ::testing::PrintToString(apart.placement);
    EXPECT_EQ(apart.arena_bytes, 2 * buffer);   // over r: 1 and the pool's
}

// KILN_CPU_PARALLEL_WORK (debugging: measuring the threshold) decides which kernels run on one
// thread of a larger pool: 0 none, a huge number all; a malformed value is an error naming it.
TEST(cpu_target, parallel_work_threshold_comes_from_the_environment) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {1, 16, 12, 12}
w = @param:w -> float_type, {16, 16, 3, 3}
@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w)
@1 = relu(@0)
@2 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](@1,w)
@3 = @return(@2)
)";
    auto first_line = [&](const char* value) {
        setenv("KILN_CPU_PARALLEL_WORK", value, 1);
        auto exe = make_target("cpu")->compile(parse_text(text), {.threads = 2});
        unsetenv("KILN_CPU_PARALLEL_WORK");
        return exe->stats().placement.at(0);
    };
    EXPECT_EQ(first_line("0"), "2 threads");
    EXPECT_EQ(first_line("1e12"), "2 threads (2 small kernels on 1)");
    expect_error([&] { first_line("fast"); }, "KILN_CPU_PARALLEL_WORK expects a number of multiply-adds (e.g. 2e5), got 'fast'");
    unsetenv("KILN_CPU_PARALLEL_WORK");
}

// An observer sees the blocked intermediates of a convolution chain as logical tensors: every
// value run_observed passes matches ref's value of the same instruction (what verify and dumps
// compare); read raw, the blocked layout would put the channels in another order.
TEST(cpu_target, observed_values_are_logical_tensors) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {1, 16, 12, 12}
w1 = @param:w1 -> float_type, {16, 16, 3, 3}
w2 = @param:w2 -> float_type, {16, 16, 3, 3}
w3 = @param:w3 -> float_type, {16, 16, 3, 3}
@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w1)
@1 = relu(@0)
@2 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](@1,w2)
@3 = relu(@2)
@4 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](@3,w3)
@5 = @return(@4)
)";
    param_map in;
    std::size_t k = 0;
    for (const char* name : {"x", "w1", "w2", "w3"}) {
        shape s = std::string(name) == "x" ? shape(dtype::float32, std::vector<std::size_t>{1, 16, 12, 12})
                                           : shape(dtype::float32, std::vector<std::size_t>{16, 16, 3, 3});
        in[name] = random_argument(s, 0, k++);
    }
    auto cpu = make_target("cpu")->compile(parse_text(text));
    // ref runs the lowered program, so both observe the same instructions (fused epilogues).
    auto ref = make_target("ref")->compile(cpu->get_program().clone(), {.optimize = false});
    std::vector<std::vector<double>> want;
    ref->run_observed(in, [&](const instruction& ins, const argument& a, double) {
        if (ins.get_shape().elements() == 16 * 144) want.push_back(to_doubles(a));
    });
    std::vector<std::vector<double>> got;
    cpu->run_observed(in, [&](const instruction& ins, const argument& a, double) {
        if (ins.get_shape().elements() == 16 * 144) got.push_back(to_doubles(a));
    });
    ASSERT_EQ(got.size(), want.size());
    ASSERT_GE(got.size(), 4u);   // x and the three convolutions
    for (std::size_t i = 0; i < got.size(); ++i) {
        SCOPED_TRACE("value " + std::to_string(i));
        ASSERT_EQ(got[i].size(), want[i].size());
        for (std::size_t e = 0; e < want[i].size(); ++e)
            ASSERT_NEAR(got[i][e], want[i][e], 1e-4 + 1e-4 * std::abs(want[i][e])) << "element " << e;
    }
}

// verify --bisect on cpu with zero tolerances (so float rounding fails every convolution): the
// first convolution is found, and the error it reports is rounding (a prefix's output is a
// logical tensor even where the full program keeps that value blocked).
TEST(cpu_target, bisect_finds_the_first_convolution) {
    program p = parse_text(R"(module: "main"
x = @param:x -> float_type, {1, 16, 12, 12}
w1 = @param:w1 -> float_type, {16, 16, 3, 3}
w2 = @param:w2 -> float_type, {16, 16, 3, 3}
@0 = relu(x)
@1 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](@0,w1)
@2 = relu(@1)
@3 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](@2,w2)
@4 = @return(@3)
)");
    param_map in{{"x", random_argument(shape(dtype::float32, std::vector<std::size_t>{1, 16, 12, 12}), 0, 0)},
                 {"w1", random_argument(shape(dtype::float32, std::vector<std::size_t>{16, 16, 3, 3}), 0, 1)},
                 {"w2", random_argument(shape(dtype::float32, std::vector<std::size_t>{16, 16, 3, 3}), 0, 2)}};
    verify_options o;
    auto cpu = make_target("cpu");
    EXPECT_TRUE(verify_program(p, *cpu, in, o).pass);
    o.tolerances.rms_tol = 0, o.tolerances.atol = 0, o.tolerances.rtol = 0;
    bisect_result b = bisect_program(p, *cpu, in, o);
    ASSERT_TRUE(b.found);
    EXPECT_NE(b.instruction.find("convolution"), std::string::npos) << b.instruction;
    EXPECT_NE(b.inputs.at(1).find("w1"), std::string::npos) << b.inputs.at(1);
    EXPECT_LT(b.cmp.rms_error, 1e-5);
}

// An epilogue op oneDNN has no post-op for (div) stays out of the epilogue (the fusion policy) and
// runs as generated code; nothing falls to the reference computes ("ref compute" in the report).
TEST(cpu_target, epilogue_takes_only_post_ops) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {1, 8, 10, 10}
w = @param:w -> float_type, {8, 8, 3, 3}
b = @param:b -> float_type, {8, 1, 1}
@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w)
@1 = add(@0,b)
@2 = relu(@1)
@3 = div(@2,b)
@4 = @return(@3)
)";
    auto placement = check_against_ref(text);
    EXPECT_TRUE(placed(placement, "onednn: 1 instruction (fused_epilogue 1)")) << ::testing::PrintToString(placement);
    EXPECT_TRUE(placed(placement, "generated code: 1 instruction (pointwise 1)")) << ::testing::PrintToString(placement);
    EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
}

// What no kernel takes runs its reference compute and the report says so, by op and type, with
// the instructions (named by position in main where the model gave no node name).
TEST(cpu_target, report_names_what_runs_on_reference_computes) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {2, 3, 3}
h = @param:h -> half_type, {4, 4}
@0 = cumsum[axis=0,exclusive=false,reverse=false](x)
@1 = cumsum[axis=1,exclusive=false,reverse=false](x)
@2 = det(h)
@3 = @return(@0,@1,@2)
)";
    auto placement = check_against_ref(text);
    EXPECT_TRUE(placed(placement, "ref compute: 3 (cumsum float_type 2: '@2', '@3'; det half_type 1: '@4')"))
        << ::testing::PrintToString(placement);
}

// rms_norm with a contiguous scale, and with one constant along the row (broadcast over the rows).
const char* const rms_norm_program = R"(module: "main"
x = @param:x -> float_type, {3, 5, 64}
s = @param:s -> float_type, {64}
t = @param:t -> float_type, {5, 1}
@0 = rms_norm[axis=-1,epsilon=1e-05](x,s)
@1 = multibroadcast[out_lens={3, 5, 64}](t)
@2 = rms_norm[axis=2,epsilon=0.001](x,@1)
@3 = @return(@0,@2)
)";

// ConvTranspose on oneDNN's deconvolution (weights [C_in, C_out / group, k...] read permuted),
// with groups, strides, asymmetric pads and output_padding; rms_norm as generated code.
TEST(cpu_target, deconvolution_on_onednn_and_rms_norm_generated) {
    for (const char* attrs : {"padding={1, 0, 1, 1},stride={2, 2},dilation={1, 1},output_padding={1, 1},group=2",
                              "padding={0, 0, 0, 0},stride={1, 1},dilation={2, 2},output_padding={},group=1"}) {
        SCOPED_TRACE(attrs);
        const std::string text = std::string(R"(module: "main"
x = @param:x -> float_type, {1, 8, 7, 6}
w = @param:w -> float_type, {8, 3, 3, 3}
@0 = deconvolution[)") + attrs + R"(](x,w)
@1 = @return(@0)
)";
        auto placement = check_against_ref(text);
        EXPECT_TRUE(placed(placement, "onednn: 1 instruction (deconvolution 1)")) << ::testing::PrintToString(placement);
    }
    auto placement = check_against_ref(rms_norm_program);
    EXPECT_TRUE(placed(placement, "generated code: 2 instructions (rms_norm 2)")) << ::testing::PrintToString(placement);
}

// fused_reduce regions as generated code: (x - max)^2 / sum((x - max)^2) over a middle axis (three
// passes per lane; softmax itself is recognized and runs on oneDNN), a
// mean over two axes without keepdims of a broadcast expression, each reduction kind over the last
// axis with a pointwise consumer, and a mean and variance whose mean (no keepdims) is broadcast
// back over the row. None runs on the reference computes.
const char* const fused_reduce_programs[] = {
        R"(module: "main"
x = @param:x -> float_type, {4, 37, 5}
@0 = reduce_max[axes={1}](x)
@1 = multibroadcast[out_lens={4, 37, 5}](@0)
@2 = sub(x,@1)
@3 = mul(@2,@2)
@4 = reduce_sum[axes={1}](@3)
@5 = multibroadcast[out_lens={4, 37, 5}](@4)
@6 = div(@3,@5)
@7 = @return(@6)
)",
        R"(module: "main"
x = @param:x -> float_type, {3, 4, 5, 6}
b = @param:b -> float_type, {6}
@0 = mul(x,x)
@1 = multibroadcast[out_lens={3, 4, 5, 6}](b)
@2 = add(@0,@1)
@3 = reduce_mean[axes={1, 2},keepdims=false](@2)
@4 = @return(@3)
)",
        R"(module: "main"
x = @param:x -> float_type, {2, 3, 5}
x0 = @param:x0 -> float_type, {2, 5}
@0 = reduce_mean[axes={-1},keepdims=false](x0)
@1 = broadcast[axis=0,out_lens={2, 5}](@0)
@2 = sub(x0,@1)
@3 = mul(@2,@2)
@4 = reduce_mean[axes={1},keepdims=false](@3)
@5 = rsqrt(@4)
@6 = reduce_sum[axes={2}](x)
@7 = @return(@5,@6)
)",
};

const char* const reductions[] = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_l1",
                                  "reduce_l2", "reduce_sum_square", "reduce_log_sum", "reduce_log_sum_exp"};

std::string reduction_program(const char* reduce) {
    return std::string(R"(module: "main"
x = @param:x -> float_type, {6, 7}
@0 = abs(x)
@1 = )") + reduce + R"([axes={-1}](@0)
@2 = @literal{2} -> float_type, {}
@3 = multibroadcast[out_lens={6, 1}](@2)
@4 = mul(@1,@3)
@5 = @return(@4)
)";
}

TEST(cpu_target, fused_reduce_regions_run_as_generated_code) {
    for (const char* text : fused_reduce_programs) {
        SCOPED_TRACE(text);
        auto placement = check_against_ref(text);
        EXPECT_TRUE(placed(placement, "generated code")) << ::testing::PrintToString(placement);
        EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
    }
    for (const char* reduce : reductions) {
        std::string text = reduction_program(reduce);
        SCOPED_TRACE(text);
        auto placement = check_against_ref(text);
        EXPECT_TRUE(placed(placement, "generated code: 1 instruction (fused_reduce 1)")) << ::testing::PrintToString(placement);
    }
}

// The same regions in float16 and bfloat16: generated code reading and writing the type, computing
// in float (sums in double), none on the reference compute.
TEST(cpu_target, fused_reduce_regions_in_float16_and_bfloat16) {
    for (const char* type : {"half_type", "bf16_type"}) {
        for (const char* text : fused_reduce_programs) {
            SCOPED_TRACE(text);
            auto placement = check_low_against_ref(text, type);
            EXPECT_TRUE(placed(placement, "generated code")) << ::testing::PrintToString(placement);
            EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
        }
        for (const char* reduce : reductions) {
            std::string text = reduction_program(reduce);
            SCOPED_TRACE(text);
            auto placement = check_low_against_ref(text, type);
            EXPECT_TRUE(placed(placement, "generated code: 1 instruction (fused_reduce 1)"))
                << ::testing::PrintToString(placement);
        }
    }
}

TEST(cpu_target, rms_norm_in_float16_and_bfloat16) {
    for (const char* type : {"half_type", "bf16_type"}) {
        SCOPED_TRACE(type);
        auto placement = check_low_against_ref(rms_norm_program, type);
        EXPECT_TRUE(placed(placement, "generated code: 2 instructions (rms_norm 2)")) << ::testing::PrintToString(placement);
    }
}

// A NaN anywhere in a row makes its max and min NaN, as in ref (the vector lanes' max alone would
// drop it); other rows are unaffected.
TEST(cpu_target, fused_reduce_max_min_propagate_nan) {
    for (const char* reduce : {"reduce_max", "reduce_min"}) {
        auto exe = make_target("cpu")->compile(parse_text(std::string(R"(module: "main"
x = @param:x -> float_type, {3, 40}
@0 = )") + reduce + R"([axes={1}](x)
@1 = neg(@0)
@2 = @return(@1)
)"));
        argument x = random_argument(shape(dtype::float32, std::vector<std::size_t>{3, 40}), 0, 0);
        x.as<float>()[40 + 17] = std::nanf("");
        auto y = to_doubles(exe->run({{"x", x}}).at(0));
        EXPECT_FALSE(std::isnan(y[0])) << reduce;
        EXPECT_TRUE(std::isnan(y[1])) << reduce;
        EXPECT_FALSE(std::isnan(y[2])) << reduce;
    }
}

// Gather as row copies on any axis, int64 and int32 indices (random in [-4, 4]: negative ones
// wrap); an index out of range is the reference's error, naming the instruction.
TEST(cpu_target, gather_copies_rows) {
    for (const char* c : {"float_type, {9, 6}|int64_type, {2, 3}|0", "float_type, {3, 7, 4}|int32_type, {5}|1",
                          "half_type, {2, 3, 8}|int64_type, {4, 2}|-1", "int64_type, {8}|int64_type, {}|0"}) {
        std::string spec = c;
        auto bar1 = spec.find('|'), bar2 = spec.rfind('|');
        std::string text = "module: \"main\"\nx = @param:x -> " + spec.substr(0, bar1) + "\ni = @param:i -> " +
                           spec.substr(bar1 + 1, bar2 - bar1 - 1) + "\n@0 = gather[axis=" + spec.substr(bar2 + 1) +
                           "](x,i)\n@1 = @return(@0)\n";
        SCOPED_TRACE(text);
        auto placement = check_against_ref(text);
        EXPECT_TRUE(placed(placement, "row copies: 1 instruction (gather 1)")) << ::testing::PrintToString(placement);
    }
    auto exe = make_target("cpu")->compile(parse_text(R"(module: "main"
x = @param:x -> float_type, {4, 3}
i = @param:i -> int64_type, {2}
@0 = gather[axis=0](x,i)
@1 = @return(@0)
)"));
    argument idx(shape(dtype::int64, std::vector<std::size_t>{2}));
    idx.as<std::int64_t>()[0] = 1, idx.as<std::int64_t>()[1] = 4;
    try {
        exe->run({{"x", random_argument(shape(dtype::float32, std::vector<std::size_t>{4, 3}), 0, 0)}, {"i", idx}});
        ADD_FAILURE() << "no error for index 4 of a dim of 4";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("gather"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("index 4"), std::string::npos) << e.what();
    }
}

// A reshape of a transposed value is a copy in row-major order: oneDNN's reorder.
// Integer and bool pointwise regions as generated code, computing in 64 bits and wrapping to the
// element type as ref does (int8 products overflow here), with comparisons, where, bitwise ops
// and converts between integers, bools and floats. Integer division stays on the reference, which
// raises on a zero divisor (the generated helpers would give 0).
TEST(cpu_target, integer_and_bool_regions_run_as_generated_code) {
    for (const char* type : {"int8_type", "uint8_type", "int32_type", "int64_type"}) {
        std::string t = type;
        std::string text = "module: \"main\"\nx = @param:x -> " + t + ", {4, 33}\ny = @param:y -> " + t + ", {33}\n" +
                           R"(@0 = multibroadcast[out_lens={4, 33}](y)
@1 = mul(x,@0)
@2 = @literal{37} -> )" + t + R"(, {}
@3 = multibroadcast[out_lens={4, 33}](@2)
@4 = mul(@1,@3)
@5 = add(@4,x)
@6 = bitwise_xor(@5,@0)
@7 = greater(@6,x)
@8 = where(@7,@6,@1)
@9 = max(@8,x)
@10 = convert[target_type=float_type,saturate=false](@9)
@11 = convert[target_type=bool_type,saturate=false](@9)
@12 = @return(@10,@11)
)";
        SCOPED_TRACE(text);
        auto placement = check_against_ref(text);
        EXPECT_TRUE(placed(placement, "generated code")) << ::testing::PrintToString(placement);
        EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
    }
    const std::string division = R"(module: "main"
x = @param:x -> int32_type, {8}
y = @param:y -> int32_type, {8}
@0 = add(x,y)
@1 = div(@0,y)
@2 = @return(@1)
)";
    auto exe = make_target("cpu")->compile(parse_text(division));
    EXPECT_TRUE(placed(exe->stats().placement, "ref compute: 1 (pointwise int32_type 1:")) << ::testing::PrintToString(exe->stats().placement);
    argument x(shape(dtype::int32, std::vector<std::size_t>{8})), y(shape(dtype::int32, std::vector<std::size_t>{8}));
    std::memset(x.data(), 0, x.get_shape().bytes());
    std::memset(y.data(), 0, y.get_shape().bytes());
    EXPECT_THROW(exe->run({{"x", x}, {"y", y}}), error);
}

// neg and abs of signed integers wrap as ref's do: the most negative value of int8, int32 and
// int64 gives itself back (in the generated code's long long, -INT64_MIN would be undefined; the
// gpu target prints the same helpers). Cpu runs them as generated code and matches ref and the
// two's complement values on every element.
TEST(cpu_target, integer_neg_and_abs_wrap_as_ref) {
    const std::string program = R"(module: "main"
x = @param:x -> TYPE, {6}
@0 = neg(x)
@1 = abs(x)
@2 = @return(@0,@1)
)";
    auto check = [&]<class T>(const char* type) {
        SCOPED_TRACE(type);
        std::string text = program;
        text.replace(text.find("TYPE"), 4, type);
        const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
        const T values[6] = {lo, T(lo + 1), T(-1), T(0), T(7), hi};
        argument x(parse_text(text).main().parameters()[0]->get_shape());
        std::memcpy(x.data(), values, sizeof values);
        auto exe = make_target("cpu")->compile(parse_text(text));
        EXPECT_TRUE(placed(exe->stats().placement, "generated code")) << ::testing::PrintToString(exe->stats().placement);
        auto got = exe->run({{"x", x}});
        auto want = make_target("ref")->compile(parse_text(text), {.optimize = false})->run({{"x", x}});
        for (std::size_t k = 0; k < 2; ++k) {
            const T* g = reinterpret_cast<const T*>(got[k].data());
            const T* w = reinterpret_cast<const T*>(want[k].data());
            for (std::size_t i = 0; i < 6; ++i) {
                auto u = static_cast<std::make_unsigned_t<T>>(values[i]);
                auto wrapped_neg = static_cast<T>(static_cast<std::make_unsigned_t<T>>(0u - u));
                T expect = k == 0 || values[i] < 0 ? wrapped_neg : values[i];
                EXPECT_EQ(g[i], w[i]) << (k ? "abs" : "neg") << " of " << +values[i];
                EXPECT_EQ(g[i], expect) << (k ? "abs" : "neg") << " of " << +values[i];
            }
        }
    };
    check.template operator()<std::int8_t>("int8_type");
    check.template operator()<std::int32_t>("int32_type");
    check.template operator()<std::int64_t>("int64_type");
}

// Concat as block copies along the first, a middle and the last axis (negative too), in float,
// int64, bool and float16, with an input empty along the axis and a constant input.
TEST(cpu_target, concat_copies_blocks) {
    for (const char* type : {"float_type", "int64_type", "bool_type", "half_type"})
        for (const char* axis : {"0", "1", "-1"}) {
            std::string t = type;
            std::string text = "module: \"main\"\nx = @param:x -> " + t + ", {2, 3, 4}\ny = @param:y -> " + t +
                               ", {2, 3, 4}\ne = @param:e -> " + t + ", {0, 0, 0}\n";
            // e's dims along the other axes are those of x: rewritten per axis below.
            std::string e_lens = std::string(axis) == "0" ? "{0, 3, 4}" : std::string(axis) == "1" ? "{2, 0, 4}" : "{2, 3, 0}";
            text.replace(text.find("{0, 0, 0}"), 9, e_lens);
            text += "@0 = concat[axis=" + std::string(axis) + "](x,e,y,x)\n@1 = @return(@0)\n";
            SCOPED_TRACE(text);
            auto placement = check_against_ref(text);
            EXPECT_TRUE(placed(placement, "block copies: 1 instruction (concat 1)")) << ::testing::PrintToString(placement);
            EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
        }
}

TEST(cpu_target, reshape_copies_on_onednn) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {2, 5, 4, 3}
@0 = transpose[permutation={0, 2, 1, 3}](x)
@1 = reshape[dims={2, 4, 15}](@0)
@2 = @return(@1)
)";
    for (bool cm : {false, true}) {
        auto placement = check_against_ref(text, cm);
        EXPECT_TRUE(placed(placement, "onednn: 1 instruction (reshape 1)")) << ::testing::PrintToString(placement);
    }
}

// Separate executables of one program run at once from several threads.
TEST(cpu_target, separate_executables_run_concurrently) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {1, 8, 16, 16}
w = @param:w -> float_type, {8, 8, 3, 3}
@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w)
@1 = relu(@0)
@2 = @return(@1)
)";
    program p = parse_text(text);
    param_map in;
    in["x"] = random_argument(p.main().parameters()[0]->get_shape(), 0, 0);
    in["w"] = random_argument(p.main().parameters()[1]->get_shape(), 0, 1);
    auto want = make_target("ref")->compile(parse_text(text), {.optimize = false})->run(in)[0].copy();
    std::vector<std::thread> threads;
    std::vector<int> ok(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            auto exe = make_target("cpu")->compile(parse_text(text), {.threads = 1});
            bool all = true;
            for (int r = 0; r < 20; ++r) {
                auto g = to_doubles(exe->run(in)[0]), w = to_doubles(want);
                for (std::size_t i = 0; i < g.size(); ++i) all = all && std::abs(g[i] - w[i]) < 1e-4;
            }
            ok[t] = all;
        });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) EXPECT_TRUE(ok[t]) << "thread " << t;
}

// Runs on two threads, alone and from several threads at once (each calling thread with its own
// 2-thread OpenMP pool), all match ref, and leave the calling thread's CPU mask as it was.
TEST(cpu_target, two_thread_runs_alone_and_at_once_match_ref) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {1, 16, 24, 24}
w = @param:w -> float_type, {16, 16, 3, 3}
@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w)
@1 = relu(@0)
@2 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](@1,w)
@3 = @return(@2)
)";
    program p = parse_text(text);
    param_map in;
    in["x"] = random_argument(p.main().parameters()[0]->get_shape(), 0, 0);
    in["w"] = random_argument(p.main().parameters()[1]->get_shape(), 0, 1);
    auto want = to_doubles(make_target("ref")->compile(parse_text(text), {.optimize = false})->run(in)[0]);
    auto check = [&](int runs) {
        cpu_set_t before, after;
        EXPECT_EQ(pthread_getaffinity_np(pthread_self(), sizeof before, &before), 0);
        auto exe = make_target("cpu")->compile(parse_text(text), {.threads = 2});
        bool all = true;
        for (int r = 0; r < runs; ++r) {
            auto got = to_doubles(exe->run(in)[0]);
            for (std::size_t i = 0; i < got.size(); ++i) all = all && std::abs(got[i] - want[i]) < 1e-3;
            EXPECT_EQ(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
            all = all && CPU_EQUAL(&before, &after);
        }
        return all;
    };
    EXPECT_TRUE(check(5));   // alone
    std::vector<std::thread> threads;
    std::vector<int> ok(3, 0);
    for (int t = 0; t < 3; ++t) threads.emplace_back([&, t] { ok[t] = check(10); });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 3; ++t) EXPECT_TRUE(ok[t]) << "thread " << t;
}

// A saved program keeps the weights in the layouts the primitives chose: loading it reads them
// as saved (no reorder) and computes the same; blobs that name another layout are reordered again.
TEST(cpu_target, saved_programs_keep_reordered_weights) {
    const std::string text = std::string(R"(module: "main"
x = @param:x -> float_type, {1, 16, 10, 10}
@0 = )") + literal_text(16 * 16 * 9, 1) + R"( -> float_type, {16, 16, 3, 3}
@1 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,@0)
@2 = relu(@1)
@3 = reshape[dims={1, 1600}](@2)
@4 = )" + literal_text(1600 * 32, 2) + R"( -> float_type, {1600, 32}
@5 = dot(@3,@4)
@6 = @return(@5)
)";
    param_map in;
    in["x"] = random_argument(shape(dtype::float32, {1, 16, 10, 10}), 0, 0);
    auto exe = make_target("cpu")->compile(parse_text(text));
    EXPECT_EQ(exe->stats().notes, std::vector<std::string>{"weights in oneDNN layouts: 2 reordered now, 0 read as saved"});
    auto want = exe->run(in)[0].copy();
    auto ref = make_target("ref")->compile(parse_text(text), {.optimize = false})->run(in)[0].copy();
    expect_close(want, ref);
    auto blobs = exe->saved().blobs;
    ASSERT_EQ(blobs.size(), 2u);
    std::string path = ::testing::TempDir() + "cpu_saved_weights.kiln";
    saved_program_info info;
    info.target = "cpu";
    save_program(exe->get_program(), info, path, {{}, blobs});
    loaded_program l = load_program(path);
    ASSERT_EQ(l.parts.blobs.size(), 2u);
    auto again = make_target("cpu")->load_saved(std::move(l.prog), {}, l.parts);
    EXPECT_EQ(again->stats().notes, std::vector<std::string>{"weights in oneDNN layouts: 0 reordered now, 2 read as saved"});
    auto got = again->run(in)[0];
    ASSERT_EQ(got.get_shape().bytes(), want.get_shape().bytes());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.get_shape().bytes()), 0);
    for (auto& b : l.parts.blobs) b.name += "/another CPU's layout";
    auto other = make_target("cpu")->load_saved(load_program(path).prog, {}, l.parts);
    EXPECT_EQ(other->stats().notes, std::vector<std::string>{"weights in oneDNN layouts: 2 reordered now, 0 read as saved"});
    expect_close(other->run(in)[0], ref);
    std::remove(path.c_str());
}

}  // namespace
}  // namespace kiln
