// Products of transposed rows as one GEMM (targets/gpu/row_products.hpp): torch's batch-second
// attention projection (a [B, S, E] value transposed to [S, B, E], times one matrix, plus a bias,
// split into q/k/v heads through views) computes the product in x's row order with the bias in
// its epilogue, and the same results, on ref without a device and on the device against ref in
// float16, bfloat16 and float32; a user that would copy the transposed result keeps the batch.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "core/printer.hpp"
#include "core/random.hpp"
#include "core/reflect.hpp"
#include "core/target.hpp"
#include "ops/gemm.hpp"
#include "targets/gpu/lowering.hpp"
#include "targets/gpu/row_products.hpp"
#include "tools/compare.hpp"
#include "gpu_test_util.hpp"

namespace kiln {
namespace {

using namespace gpu_test;

constexpr std::size_t S = 6, B = 2, H = 2, D = 16, E = H * D;   // heads of 16: the flash kernel in fp16/bf16

// x [B, S, E] -> relu -> [S, B, E] -> dot W [E, 3E] + bias -> q, k, v as [B, H, S, D] views ->
// attention -> relu. `merge` instead reshapes the projection to [S * B, 3E] (a copy of the
// transposed result), so the pass must leave it alone.
program projection(bool merge) {
    program p;
    module& m = p.main();
    builder b{m};
    auto lit = [&](const lens_t& lens) { return b.lit(lens); };
    auto op = [&](const char* name, std::vector<instruction_ref> in, value attrs = value()) { return b.op(name, std::move(in), attrs); };
    auto sz = [](std::size_t v) { return static_cast<std::int64_t>(v); };
    auto x = m.add_parameter("x", shape(dtype::float32, lens_t{B, S, E}));
    auto t = op("transpose", {op("relu", {x})}, value{{"permutation", to_value(ints{1, 0, 2})}});
    auto y = op("add", {op("dot", {t, lit({E, 3 * E})}), lit({3 * E})});
    if (merge) {
        m.add_return({op("relu", {op("reshape", {y}, value{{"dims", to_value(ints{sz(S * B), sz(3 * E)})}})})});
        return p;
    }
    auto heads = op("reshape", {y}, value{{"dims", to_value(ints{sz(S), sz(B), 3, sz(H), sz(D)})}});
    std::vector<instruction_ref> qkv;
    for (std::int64_t i = 0; i < 3; ++i) {
        auto part = op("slice", {heads}, value{{"axes", to_value(ints{2})}, {"starts", to_value(ints{i})}, {"ends", to_value(ints{i + 1})}});
        qkv.push_back(op("transpose", {op("squeeze", {part}, value{{"axes", to_value(ints{2})}})},
                         value{{"permutation", to_value(ints{1, 2, 0, 3})}}));
    }
    m.add_return({op("relu", {op("attention", qkv)})});
    return p;
}

// Whether the dot's left operand after the gpu passes is standard (one GEMM of B * S rows), not
// the transposed view (it may sit in a fused epilogue's body).
bool one_gemm(const program& p) {
    for (const auto& ins : p.main())
        for (const auto& b : ins.module_inputs().empty() ? p.main() : *ins.module_inputs().front())
            if (b.get_operator().get_if<ops::dot>()) return b.inputs().front()->get_shape().standard();
    return false;
}

TEST(gpu_no_device, row_products_compute_the_transposed_rows_product_once) {
    for (bool merge : {false, true}) {
        program p = projection(merge);
        param_map in{{"x", random_argument(shape(dtype::float32, lens_t{B, S, E}), seed(), 99)}};
        auto want = run_ref(p.clone(), in);
        program once = p.clone();
        run_passes(once, {gpu::row_products{}});
        auto got = run_ref(once.clone(), in);
        auto c = compare_results(got.at(0), want.at(0), default_tolerances(dtype::float32));
        EXPECT_TRUE(c.pass) << "seed " << seed() << "\n" << describe(c) << printed(once);
        compile_options opts;
        opts.optimize = true;
        opts.precision = compute_precision::fp16;
        run_passes(p, gpu::gpu_passes(opts));
        EXPECT_EQ(one_gemm(p), !merge) << printed(p);
    }
}

void check_projection(compute_precision prec, dtype t) {
    program p = projection(false);
    compile_options opts;
    opts.optimize = true;
    opts.precision = prec;
    auto gpu = make_target("gpu")->compile(p.clone(), opts);
    auto ref = make_target("ref")->compile(p.clone(), opts);
    param_map in{{"x", random_argument(shape(dtype::float32, lens_t{B, S, E}), seed(), 99)}};
    std::vector<argument> want;
    for (auto& a : ref->run(in)) want.push_back(a.copy());
    for (int run = 0; run < 2; ++run) {
        auto got = gpu->run(in);
        auto c = compare_results(got.at(0).copy(), want.at(0), default_tolerances(t, prec));
        EXPECT_TRUE(c.pass) << dtype_name(t) << " run " << run << " seed " << seed() << "\n" << describe(c);
    }
}

TEST(gpu_row_products, projection_float16_matches_ref) { check_projection(compute_precision::fp16, dtype::float16); }
TEST(gpu_row_products, projection_bfloat16_matches_ref) { check_projection(compute_precision::bf16, dtype::bfloat16); }
TEST(gpu_row_products, projection_float32_matches_ref) { check_projection(compute_precision::fp32, dtype::float32); }

}  // namespace
}  // namespace kiln
