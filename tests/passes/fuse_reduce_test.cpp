// fuse_reduce: a reduction with its pointwise producers and consumers becomes one fused_reduce;
// reductions over the same axes share one; different axes do not; results agree before and after.
#include <gtest/gtest.h>

#include "fuse_check.hpp"
#include "pass_check.hpp"
#include "passes/fuse/fuse_pointwise.hpp"
#include "passes/fuse/fuse_reduce.hpp"

namespace kiln {
namespace {

const char* softmax_ir =
    "x = @param:x -> float_type, {4, 6}\n"
    "@0 = reduce_max[axes={1}](x)\n"
    "@1 = multibroadcast[out_lens={4, 6}](@0)\n"
    "@2 = sub(x, @1)\n"
    "@3 = exp(@2)\n"
    "@4 = reduce_sum[axes={-1}](@3)\n"
    "@5 = multibroadcast[out_lens={4, 6}](@4)\n"
    "@6 = div(@3, @5)\n"
    "@7 = @return(@6)\n";

TEST(fuse_reduce, softmax_is_one_kernel) {
    program p = run_and_check(softmax_ir, {fuse_reduce{}});
    auto fused = fused_of(p, "fused_reduce");
    ASSERT_EQ(fused.size(), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
    EXPECT_EQ(body_count(*fused[0], "reduce_max"), 1u);
    EXPECT_EQ(body_count(*fused[0], "reduce_sum"), 1u);
    EXPECT_EQ(body_size(*fused[0]), 7u);
    EXPECT_EQ(to_string(fused[0]->get_operator()), "fused_reduce[axes={1}]");
    EXPECT_EQ(fused[0]->module_inputs()[0]->name(), "fused_reduce0");
    expect_text_round_trip(p);
}

// Layer norm written out: mean, variance, normalise, scale and shift by per-feature vectors.
TEST(fuse_reduce, mean_and_variance_with_their_consumers) {
    program p = run_and_check(
        "x = @param:x -> float_type, {2, 3, 8}\n"
        "g = @param:g -> float_type, {8}\n"
        "b = @param:b -> float_type, {8}\n"
        "@0 = reduce_mean[axes={2}](x)\n"
        "@1 = multibroadcast[out_lens={2, 3, 8}](@0)\n"
        "@2 = sub(x, @1)\n"
        "@3 = mul(@2, @2)\n"
        "@4 = reduce_mean[axes={2}](@3)\n"
        "@5 = @literal{1e-5} -> float_type, {}\n"
        "@6 = add(@4, @5)\n"
        "@7 = rsqrt(@6)\n"
        "@8 = multibroadcast[out_lens={2, 3, 8}](@7)\n"
        "@9 = mul(@2, @8)\n"
        "@10 = multibroadcast[out_lens={2, 3, 8}](g)\n"
        "@11 = mul(@9, @10)\n"
        "@12 = multibroadcast[out_lens={2, 3, 8}](b)\n"
        "@13 = add(@11, @12)\n"
        "@14 = @return(@13)\n",
        {fuse_reduce{}});
    auto fused = fused_of(p, "fused_reduce");
    ASSERT_EQ(fused.size(), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
    EXPECT_EQ(fused[0]->inputs().size(), 3u);   // x, g, b
    EXPECT_EQ(body_count(*fused[0], "reduce_mean"), 2u);
    EXPECT_EQ(body_size(*fused[0]), 13u);
    expect_text_round_trip(p);
}

TEST(fuse_reduce, different_axes_make_different_kernels) {
    program p = run_and_check(
        "x = @param:x -> float_type, {3, 5}\n"
        "@0 = exp(x)\n"
        "@1 = reduce_sum[axes={1}](@0)\n"
        "@2 = neg(@1)\n"
        "@3 = reduce_max[axes={0}](@2)\n"
        "@4 = sqrt(@3)\n"
        "@5 = @return(@4)\n",
        {fuse_reduce{}});
    auto fused = fused_of(p, "fused_reduce");
    ASSERT_EQ(fused.size(), 2u);
    EXPECT_EQ(to_string(fused[0]->get_operator()), "fused_reduce[axes={1}]");
    EXPECT_EQ(to_string(fused[1]->get_operator()), "fused_reduce[axes={0}]");
    EXPECT_EQ(body_size(*fused[0]), 2u);   // exp, reduce_sum
    EXPECT_EQ(body_size(*fused[1]), 3u);   // neg, reduce_max, sqrt
    expect_text_round_trip(p);
}

// The sum is returned and also feeds the division: it must stay an output of its own region.
TEST(fuse_reduce, a_reduction_used_outside_ends_its_region) {
    program p = run_and_check(
        "x = @param:x -> float_type, {3, 5}\n"
        "@0 = exp(x)\n"
        "@1 = reduce_sum[axes={1}](@0)\n"
        "@2 = multibroadcast[out_lens={3, 5}](@1)\n"
        "@3 = div(@0, @2)\n"
        "@4 = @return(@3, @1)\n",
        {fuse_reduce{}, fuse_pointwise{}});
    EXPECT_EQ(fused_of(p, "fused_reduce").size(), 1u);
    EXPECT_EQ(fused_of(p, "pointwise").size(), 2u);   // exp (two users), div
    expect_text_round_trip(p);
}

TEST(fuse_reduce, leaves_pointwise_only_regions_to_fuse_pointwise) {
    program p = run_and_check(
        "x = @param:x -> float_type, {3, 5}\n"
        "@0 = exp(x)\n"
        "@1 = neg(@0)\n"
        "@2 = @return(@1)\n",
        {fuse_reduce{}});
    EXPECT_EQ(fused_of(p, "fused_reduce").size(), 0u);
    EXPECT_EQ(count_ops(p, "exp"), 1u);
    EXPECT_EQ(p.modules().size(), 1u);   // no module left behind
}

// A reduction of a scalar reduces no axis (ONNX's empty axes mean all of none): it stays a lone
// op, since a fused_reduce must reduce something.
TEST(fuse_reduce, a_scalar_reduction_is_not_fused) {
    program p = run_and_check(
        "x = @param:x -> float_type, {}\n"
        "@0 = exp(x)\n"
        "@1 = reduce_sum(@0)\n"
        "@2 = @return(@1)\n",
        {fuse_reduce{}});
    EXPECT_EQ(fused_of(p, "fused_reduce").size(), 0u);
    EXPECT_EQ(count_ops(p, "reduce_sum"), 1u);
}

}  // namespace
}  // namespace kiln
