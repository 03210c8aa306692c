// Channels-last convolutions (targets/gpu/layout_nhwc.hpp): which values the gpu target keeps in
// NHWC (no device needed), and a block of the models' shapes (convolutions with bias, relu and
// a residual add, max pooling, a depthwise convolution, an asymmetrically padded strided one, a
// squeeze-excitation, global pooling and the classifier) against ref on fresh random inputs and
// weights, in float16, bfloat16 and float32 (which stays NCHW).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "core/eval.hpp"
#include "core/printer.hpp"
#include "core/random.hpp"
#include "core/reflect.hpp"
#include "core/target.hpp"
#include "ops/pooling.hpp"
#include "targets/gpu/kernel_compiler.hpp"
#include "targets/gpu/layout_nhwc.hpp"
#include "targets/gpu/libraries.hpp"
#include "targets/gpu/lowering.hpp"
#include "tools/compare.hpp"
#include "gpu_test_util.hpp"

namespace kiln {
namespace {

using namespace gpu_test;

// The block in float32 (compiled in fp16/bf16 through the precision option, as models are); its
// weights are fresh random literals. Returns the classifier's output and the residual sum (a
// value main returns, so it must come back in NCHW).
program block_program() {
    program p;
    module& m = p.main();
    builder b{m};
    auto lit = [&](const lens_t& lens) { return b.lit(lens); };
    auto op = [&](const char* name, std::vector<instruction_ref> in, value attrs = value()) { return b.op(name, std::move(in), attrs); };
    // Filters uniform in +-sqrt(3 / fan-in), so that values stay near 1 and the tolerances measure
    // rounding: a residual sum of values near 20 cancelling to near 0 differs by bfloat16's step at
    // 20 between ref (rounding the convolution first) and cuDNN's fused call (rounding once).
    auto filter = [&](lens_t lens) {
        argument w = random_argument(shape(dtype::float32, lens), seed(), b.k++);
        float scale = std::sqrt(3.0f * static_cast<float>(lens[0]) / static_cast<float>(w.get_shape().elements()));
        auto* v = reinterpret_cast<float*>(w.data());
        for (std::size_t i = 0; i < w.get_shape().elements(); ++i) v[i] *= scale;
        return m.add_literal(literal(w));
    };
    auto conv = [&](instruction_ref x, lens_t w, ints pad, ints stride, std::int64_t group) {
        value a{{"padding", to_value(pad)}, {"stride", to_value(stride)}, {"dilation", to_value(ints{1, 1})}, {"group", value(group)}};
        return op("convolution", {x, filter(w)}, a);
    };
    auto x = m.add_parameter("x", shape(dtype::float32, lens_t{2, 8, 12, 12}));
    auto c1 = op("relu", {op("add", {conv(x, {16, 8, 3, 3}, {1, 1, 1, 1}, {1, 1}, 1), lit({1, 16, 1, 1})})});
    auto p1 = op("pooling", {c1}, value{{"mode", value("max")}, {"padding", to_value(ints{1, 1, 1, 1})},
                                         {"stride", to_value(ints{2, 2})}, {"lengths", to_value(ints{3, 3})}});
    auto c2 = op("add", {conv(p1, {16, 16, 1, 1}, {0, 0, 0, 0}, {1, 1}, 1), lit({1, 16, 1, 1})});
    auto r = op("relu", {op("add", {c2, p1})});
    auto d = op("hard_swish", {conv(r, {16, 1, 3, 3}, {1, 1, 1, 1}, {1, 1}, 16)});
    auto a = conv(d, {24, 16, 3, 3}, {0, 0, 1, 1}, {2, 2}, 1);   // asymmetric padding
    auto s = op("reduce_mean", {a}, value{{"axes", to_value(ints{2, 3})}, {"keepdims", value(true)}});
    auto e = op("mul", {a, op("sigmoid", {conv(s, {24, 24, 1, 1}, {0, 0, 0, 0}, {1, 1}, 1)})});
    auto g = op("pooling", {e}, value{{"mode", value("average")}, {"global", value(true)}});
    auto f = op("flatten", {g}, value{{"axis", value(std::int64_t{1})}});
    auto y = op("dot", {f, lit({24, 10})});
    m.add_return({y, r});
    return p;
}

program lowered(compute_precision prec) {
    program p = block_program();
    compile_options opts;
    opts.precision = prec;
    run_passes(p, gpu::gpu_passes(opts));
    return p;
}

std::size_t channels_last_filters(const module& m) {
    std::size_t n = 0;
    for (const auto& ins : m)
        if (gpu::convolution_of(ins) && gpu::nhwc_convolution(ins))
            for (auto i : ins.inputs()) n += i->get_shape().ndim() == 4 && i->inputs().size() == 1 &&
                                             i->inputs()[0]->is_literal() && gpu::is_channels_last(i->get_shape());
    return n;
}

TEST(gpu_no_device, nhwc_layouts_of_a_float16_block) {
    program p = lowered(compute_precision::fp16);
    const module& m = p.main();
    auto layouts = gpu::choose_layouts(m);
    std::size_t convs = 0, nhwc_convs = 0;
    for (const auto& ins : m) {
        if (gpu::convolution_of(ins)) {
            ++convs;
            nhwc_convs += layouts.count(&ins);
        }
        // Never a returned value, nor one a view (the flatten) or a GEMM reads.
        for (auto u : ins.outputs()) {
            if (u->is_return() || !gpu::find_lowering(*u) || !gpu::find_lowering(*u)->reads_layouts) {
                EXPECT_FALSE(layouts.count(&ins)) << describe(m, ins);
            }
        }
    }
    for (const auto& [ins, s] : layouts) EXPECT_TRUE(gpu::is_channels_last(s)) << describe(m, *ins);
    EXPECT_EQ(convs, 5u) << printed(p);
    // All of them: the residual sum main returns is converted to float32 by a kernel of its own,
    // which reads NHWC and writes NCHW.
    EXPECT_EQ(nhwc_convs, convs) << printed(p);
    // The max pooling and the input's conversion to float16 (the edge) are NHWC too.
    bool pool = false, edge = false;
    for (const auto& [ins, s] : layouts) {
        pool = pool || ins->get_operator().get_if<ops::pooling>();
        edge = edge || std::any_of(ins->inputs().begin(), ins->inputs().end(), [](auto i) { return i->is_param(); });
    }
    EXPECT_TRUE(pool) << printed(p);
    EXPECT_TRUE(edge) << printed(p);
    // Every literal filter of the NHWC convolutions was transposed once, at compile time.
    EXPECT_EQ(channels_last_filters(m), convs) << printed(p);
}

TEST(gpu_no_device, float32_convolutions_stay_nchw) {
    program p = lowered(compute_precision::fp32);
    EXPECT_TRUE(gpu::choose_layouts(p.main()).empty()) << printed(p);
    EXPECT_EQ(channels_last_filters(p.main()), 0u);
}

// A convolution over 3 channels (a model's first) runs NHWC too, and so does the input's
// conversion before it (the edge).
TEST(gpu_no_device, nhwc_takes_three_channel_convolutions) {
    program p;
    module& m = p.main();
    auto x = m.add_parameter("x", shape(dtype::float32, lens_t{1, 3, 16, 16}));
    value a{{"padding", to_value(ints{1, 1, 1, 1})}, {"stride", to_value(ints{1, 1})}, {"dilation", to_value(ints{1, 1})}};
    auto w1 = m.add_literal(literal(random_argument(shape(dtype::float16, lens_t{16, 3, 3, 3}), seed(), 0)));
    auto w2 = m.add_literal(literal(random_argument(shape(dtype::float16, lens_t{16, 16, 3, 3}), seed(), 1)));
    auto h = m.add_instruction(make_op("convert", value{{"target_type", value("half_type")}}), {x});
    auto c1 = m.add_instruction(make_op("convolution", a), {h, w1});
    auto r = m.add_instruction(make_op("relu"), {c1});
    auto c2 = m.add_instruction(make_op("convolution", a), {r, w2});
    m.add_return({c2});
    auto layouts = gpu::choose_layouts(m);
    EXPECT_TRUE(gpu::nhwc_convolution(*c1));
    EXPECT_TRUE(layouts.count(&*c1));
    EXPECT_TRUE(layouts.count(&*h));
    EXPECT_TRUE(layouts.count(&*r));
    EXPECT_TRUE(gpu::nhwc_convolution(*c2));
}

void check_block(compute_precision prec, dtype t) {
    program p = block_program();
    compile_options opts;
    opts.precision = prec;
    auto gpu = make_target("gpu")->compile(p.clone(), opts);
    // ref in the same precision, so that both round each op's result alike: through five
    // convolutions bfloat16's rounding alone moves a few values past the tolerance of one op.
    auto ref = make_target("ref")->compile(p.clone(), opts);
    param_map in{{"x", random_argument(shape(dtype::float32, lens_t{2, 8, 12, 12}), seed(), 99)}};
    auto want = ref->run(in);
    std::vector<argument> w;
    for (auto& a : want) w.push_back(a.copy());
    for (int run = 0; run < 2; ++run) {   // the first run launches step by step, the second replays the graph
        auto got = gpu->run(in);
        ASSERT_EQ(got.size(), 2u);
        for (std::size_t i = 0; i < 2; ++i) {
            auto c = compare_results(got[i].copy(), w[i], default_tolerances(t, prec));
            EXPECT_TRUE(c.pass) << dtype_name(t) << " output " << i << " run " << run << " seed " << seed() << "\n"
                                << describe(c);
        }
    }
}

// Poolings with windows of 32 taps or more (one warp per output): global average, max and lp over
// 14x14, and an 8x8 average window with padding, of a convolution's result (NHWC in float16).
program pools_program() {
    program p;
    module& m = p.main();
    auto x = m.add_parameter("x", shape(dtype::float32, lens_t{2, 16, 14, 14}));
    auto w = m.add_literal(literal(random_argument(shape(dtype::float32, lens_t{16, 16, 3, 3}), seed(), 7)));
    value a{{"padding", to_value(ints{1, 1, 1, 1})}, {"stride", to_value(ints{1, 1})}, {"dilation", to_value(ints{1, 1})}};
    auto c = m.add_instruction(make_op("convolution", a), {x, w});
    auto pool = [&](value attrs) { return m.add_instruction(make_op("pooling", attrs), {c}); };
    auto ga = pool(value{{"mode", value("average")}, {"global", value(true)}});
    auto gm = pool(value{{"mode", value("max")}, {"global", value(true)}});
    auto gl = pool(value{{"mode", value("lpnorm")}, {"global", value(true)}, {"lp_order", value(std::int64_t{2})}});
    auto wa = pool(value{{"mode", value("average")}, {"lengths", to_value(ints{8, 8})}, {"padding", to_value(ints{2, 2, 2, 2})},
                         {"stride", to_value(ints{2, 2})}});
    m.add_return({ga, gm, gl, wa});
    return p;
}

// The warp-per-output pooling kernels compile (no device: NVRTC only), NCHW and NHWC.
TEST(gpu_no_device, large_window_pooling_kernels_compile) {
    gpu::library_handles libs(nullptr);
    for (auto prec : {compute_precision::fp32, compute_precision::fp16}) {
        program p = pools_program();
        compile_options opts;
        opts.precision = prec;
        run_passes(p, gpu::gpu_passes(opts));
        static std::byte fake[1];
        gpu::lowering_context ctx(p.main(), libs, [](const instruction&) { return fake; }, false);
        ctx.layouts = gpu::choose_layouts(p.main());
        std::size_t pools = 0;
        for (const auto& ins : p.main()) {
            if (!ins.get_operator().get_if<ops::pooling>()) continue;
            gpu::find_lowering(ins)->lower(ctx, ins);
            ++pools;
        }
        EXPECT_EQ(pools, 4u) << printed(p);
        ASSERT_EQ(ctx.sources.size(), 4u);
        for (const auto& src : ctx.sources) {
            EXPECT_NE(src.code.find("__shfl_xor_sync"), std::string::npos) << src.code;
            EXPECT_NO_THROW(gpu::compile_to_cubin(src, {"sm_90", true, false, {}})) << src.code;
        }
    }
}

void check_pools(compute_precision prec, dtype t) {
    program p = pools_program();
    compile_options opts;
    opts.precision = prec;
    auto gpu = make_target("gpu")->compile(p.clone(), opts);
    auto ref = make_target("ref")->compile(p.clone(), opts);
    param_map in{{"x", random_argument(shape(dtype::float32, lens_t{2, 16, 14, 14}), seed(), 98)}};
    auto want = ref->run(in);
    auto got = gpu->run(in);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        auto c = compare_results(got[i].copy(), want[i].copy(), default_tolerances(t, prec));
        EXPECT_TRUE(c.pass) << dtype_name(t) << " pooling " << i << " seed " << seed() << "\n" << describe(c);
    }
}

TEST(gpu_nhwc, large_window_pooling_float32_matches_ref) { check_pools(compute_precision::fp32, dtype::float32); }
TEST(gpu_nhwc, large_window_pooling_float16_matches_ref) { check_pools(compute_precision::fp16, dtype::float16); }

TEST(gpu_nhwc, block_float16_matches_ref) { check_block(compute_precision::fp16, dtype::float16); }
TEST(gpu_nhwc, block_bfloat16_matches_ref) { check_block(compute_precision::bf16, dtype::bfloat16); }
TEST(gpu_nhwc, block_float32_matches_ref) { check_block(compute_precision::fp32, dtype::float32); }

}  // namespace
}  // namespace kiln
