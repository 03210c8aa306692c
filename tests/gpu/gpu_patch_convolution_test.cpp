// Patch convolutions as GEMMs (targets/gpu/patch_convolution.hpp): which convolutions the pass
// rewrites, that the rewritten program computes what the convolution did (on ref, no device), that
// a ViT-like stem's flatten and transpose become views of the GEMM's result, and the stem on the
// device against ref on fresh random inputs and weights in float16, bfloat16 and float32.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "core/printer.hpp"
#include "core/random.hpp"
#include "core/reflect.hpp"
#include "core/target.hpp"
#include "ops/convolution.hpp"
#include "ops/data_movement.hpp"
#include "ops/gemm.hpp"
#include "ops/views.hpp"
#include "targets/gpu/lowering.hpp"
#include "targets/gpu/patch_convolution.hpp"
#include "tools/compare.hpp"
#include "gpu_test_util.hpp"

namespace kiln {
namespace {

using namespace gpu_test;

value conv_attrs(ints stride, ints padding, ints dilation, std::int64_t group = 1) {
    return value{{"padding", to_value(padding)}, {"stride", to_value(stride)}, {"dilation", to_value(dilation)}, {"group", value(group)}};
}

// A ViT-like stem in float32 on x [2, 3, 36, 40]: an 8x8 stride-8 convolution (36 leaves 4 rows
// no patch reads), flattened and transposed to [2, 20, 8] tokens, a class token in front, a
// position embedding added; main also returns the convolution's relu (read standard).
program stem_program() {
    program p;
    module& m = p.main();
    builder b{m};
    auto lit = [&](const lens_t& lens) { return b.lit(lens); };
    auto op = [&](const char* name, std::vector<instruction_ref> in, value attrs = value()) { return b.op(name, std::move(in), attrs); };
    auto x = m.add_parameter("x", shape(dtype::float32, lens_t{2, 3, 36, 40}));
    auto c = op("convolution", {x, lit({8, 3, 8, 8})}, conv_attrs({8, 8}, {0, 0, 0, 0}, {1, 1}));
    auto f = op("reshape", {c}, value{{"dims", to_value(ints{2, 8, 20})}});
    auto t = op("transpose", {f}, value{{"permutation", to_value(ints{0, 2, 1})}});
    auto cls = op("multibroadcast", {lit({1, 1, 8})}, value{{"out_lens", to_value(ints{2, 1, 8})}});
    auto tokens = op("concat", {cls, t}, value{{"axis", value(std::int64_t{1})}});
    auto y = op("add", {tokens, lit({1, 21, 8})});
    m.add_return({y, op("relu", {c})});
    return p;
}

TEST(gpu_no_device, patch_convolutions_are_the_ones_with_kernel_equal_to_stride) {
    program p;
    module& m = p.main();
    auto x = m.add_parameter("x", shape(dtype::float16, lens_t{1, 8, 16, 16}));
    auto lit = [&](lens_t lens) { return m.add_literal(literal(random_argument(shape(dtype::float16, lens), seed(), 0))); };
    auto conv = [&](lens_t w, value a) { return m.add_instruction(make_op("convolution", a), {x, lit(w)}); };
    auto patch = conv({4, 8, 4, 4}, conv_attrs({4, 4}, {0, 0, 0, 0}, {1, 1}));
    auto rect = conv({4, 8, 2, 1}, conv_attrs({2, 1}, {0, 0, 0, 0}, {1, 1}));
    auto pointwise = conv({4, 8, 1, 1}, conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}));
    auto padded = conv({4, 8, 4, 4}, conv_attrs({4, 4}, {1, 1, 1, 1}, {1, 1}));
    auto overlapping = conv({4, 8, 4, 4}, conv_attrs({2, 2}, {0, 0, 0, 0}, {1, 1}));
    auto dilated = conv({4, 8, 2, 2}, conv_attrs({2, 2}, {0, 0, 0, 0}, {2, 2}));
    auto grouped = conv({4, 4, 2, 2}, conv_attrs({2, 2}, {0, 0, 0, 0}, {1, 1}, 2));
    auto x8 = m.add_parameter("x8", shape(dtype::fp8e4m3fn, lens_t{1, 8, 16, 16}));
    auto w8 = m.add_literal(literal(random_argument(shape(dtype::fp8e4m3fn, lens_t{4, 8, 4, 4}), seed(), 1)));
    auto fp8 = m.add_instruction(make_op("convolution", conv_attrs({4, 4}, {0, 0, 0, 0}, {1, 1})), {x8, w8});
    m.add_return({patch, rect, pointwise, padded, overlapping, dilated, grouped, fp8});
    EXPECT_TRUE(gpu::is_patch_convolution(*patch));
    EXPECT_TRUE(gpu::is_patch_convolution(*rect));
    EXPECT_FALSE(gpu::is_patch_convolution(*pointwise));   // 1x1 stride 1: cuDNN's
    EXPECT_FALSE(gpu::is_patch_convolution(*padded));
    EXPECT_FALSE(gpu::is_patch_convolution(*overlapping));
    EXPECT_FALSE(gpu::is_patch_convolution(*dilated));
    EXPECT_FALSE(gpu::is_patch_convolution(*grouped));
    EXPECT_FALSE(gpu::is_patch_convolution(*fp8));   // no cuBLASLt product in fp8
}

// The pass alone, run on ref: the same results as the convolution (float32, one rounding order
// apart), for the stem and for 1-d and 3-d patches.
TEST(gpu_no_device, patch_convolution_rewrite_computes_the_convolution) {
    auto check = [](program p, const lens_t& x_lens) {
        param_map in{{"x", random_argument(shape(dtype::float32, x_lens), seed(), 99)}};
        auto want = run_ref(p.clone(), in);
        run_passes(p, {gpu::patch_convolutions{}});
        for (const auto& ins : p.main()) EXPECT_FALSE(ins.get_operator().get_if<ops::convolution>()) << printed(p);
        auto got = run_ref(p.clone(), in);
        ASSERT_EQ(got.size(), want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            auto c = compare_results(got[i], want[i], default_tolerances(dtype::float32));
            EXPECT_TRUE(c.pass) << "output " << i << " seed " << seed() << "\n" << describe(c) << printed(p);
        }
    };
    check(stem_program(), {2, 3, 36, 40});
    for (std::size_t nd : {1, 3}) {
        program p;
        module& m = p.main();
        lens_t x_lens{2, 5}, w_lens{6, 5};
        ints k, pad;
        for (std::size_t d = 0; d < nd; ++d) {
            x_lens.push_back(7 + d);   // 7 = 2 * 3 + 1: a trailing element no patch reads
            w_lens.push_back(2 + d % 2);
            k.push_back(static_cast<std::int64_t>(2 + d % 2));
        }
        pad.assign(2 * nd, 0);
        auto x = m.add_parameter("x", shape(dtype::float32, x_lens));
        auto w = m.add_literal(literal(random_argument(shape(dtype::float32, w_lens), seed(), 7)));
        m.add_return({m.add_instruction(make_op("convolution", conv_attrs(k, pad, ints(nd, 1))), {x, w})});
        check(std::move(p), x_lens);
    }
}

// After the gpu passes the stem has no convolution, and the tokens its concat reads are a
// standard view of the GEMM's result (no copy between them); the relu main returns reads the
// channels-last result through its strides.
TEST(gpu_no_device, patch_convolution_stem_tokens_are_views_of_the_gemm) {
    program p = stem_program();
    compile_options opts;
    opts.optimize = true;
    opts.precision = compute_precision::fp16;
    run_passes(p, gpu::gpu_passes(opts));
    std::size_t dots = 0, copies = 0;
    for (const auto& ins : p.main()) {
        const auto& op = ins.get_operator();
        EXPECT_FALSE(op.get_if<ops::convolution>()) << printed(p);
        if (op.get_if<ops::dot>()) ++dots;
        if (op.get_if<ops::concat>()) {
            EXPECT_TRUE(ins.inputs().at(1)->get_shape().standard()) << printed(p);
        }
        if (op.get_if<ops::contiguous>()) ++copies;
    }
    EXPECT_EQ(dots, 1u) << printed(p);
    EXPECT_EQ(copies, 0u) << printed(p);
}

void check_stem(compute_precision prec, dtype t) {
    program p = stem_program();
    compile_options opts;
    opts.optimize = true;
    opts.precision = prec;
    auto gpu = make_target("gpu")->compile(p.clone(), opts);
    auto ref = make_target("ref")->compile(p.clone(), opts);
    param_map in{{"x", random_argument(shape(dtype::float32, lens_t{2, 3, 36, 40}), seed(), 99)}};
    std::vector<argument> want;
    for (auto& a : ref->run(in)) want.push_back(a.copy());
    for (int run = 0; run < 2; ++run) {   // step by step, then the graph's replay
        auto got = gpu->run(in);
        ASSERT_EQ(got.size(), 2u);
        for (std::size_t i = 0; i < 2; ++i) {
            auto c = compare_results(got[i].copy(), want[i], default_tolerances(t, prec));
            EXPECT_TRUE(c.pass) << dtype_name(t) << " output " << i << " run " << run << " seed " << seed() << "\n"
                                << describe(c);
        }
    }
}

TEST(gpu_patch_convolution, stem_float16_matches_ref) { check_stem(compute_precision::fp16, dtype::float16); }
TEST(gpu_patch_convolution, stem_bfloat16_matches_ref) { check_stem(compute_precision::bf16, dtype::bfloat16); }
TEST(gpu_patch_convolution, stem_float32_matches_ref) { check_stem(compute_precision::fp32, dtype::float32); }

}  // namespace
}  // namespace kiln
