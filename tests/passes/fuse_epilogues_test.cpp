// fuse_epilogues: a dot, gemm or convolution with the pointwise ops on its result (bias, activation,
// residual) becomes one fused_epilogue; ops feeding the contraction stay outside.
#include <gtest/gtest.h>

#include "fuse_check.hpp"
#include "pass_check.hpp"
#include "passes/fuse/fuse_epilogues.hpp"
#include "passes/fuse/fuse_pointwise.hpp"
#include "passes/fuse/fuse_reduce.hpp"
#include "passes/analysis/kernel_count.hpp"

namespace kiln {
namespace {

TEST(fuse_epilogues, conv_bias_relu_residual) {
    program p = run_and_check(
        "x = @param:x -> float_type, {1, 2, 5, 5}\n"
        "w = @param:w -> float_type, {3, 2, 3, 3}\n"
        "b = @param:b -> float_type, {3}\n"
        "r = @param:r -> float_type, {1, 3, 5, 5}\n"
        "@0 = convolution[padding={1, 1},stride={1, 1},dilation={1, 1},group=1](x, w)\n"
        "@1 = broadcast[axis=1,out_lens={1, 3, 5, 5}](b)\n"
        "@2 = add(@0, @1)\n"
        "@3 = relu(@2)\n"
        "@4 = add(@3, r)\n"
        "@5 = @return(@4)\n",
        {fuse_epilogues{}});
    auto fused = fused_of(p, "fused_epilogue");
    ASSERT_EQ(fused.size(), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
    EXPECT_EQ(fused[0]->inputs().size(), 4u);   // x, w, b, r
    EXPECT_EQ(body_size(*fused[0]), 5u);        // convolution, broadcast, add, relu, add
    EXPECT_EQ(fused[0]->module_inputs()[0]->name(), "fused_epilogue0");
    expect_text_round_trip(p);
}

// A target whose library applies bias adds but not relu keeps relu and what follows outside.
TEST(fuse_epilogues, the_target_policy_decides_which_ops_join) {
    fuse_epilogues only_add{[](const instruction& ins) { return ins.name() == "add"; }};
    program p = run_and_check(
        "x = @param:x -> float_type, {1, 2, 5, 5}\n"
        "w = @param:w -> float_type, {3, 2, 3, 3}\n"
        "b = @param:b -> float_type, {3}\n"
        "r = @param:r -> float_type, {1, 3, 5, 5}\n"
        "@0 = convolution[padding={1, 1},stride={1, 1},dilation={1, 1},group=1](x, w)\n"
        "@1 = broadcast[axis=1,out_lens={1, 3, 5, 5}](b)\n"
        "@2 = add(@0, @1)\n"
        "@3 = relu(@2)\n"
        "@4 = add(@3, r)\n"
        "@5 = @return(@4)\n",
        {only_add});
    auto fused = fused_of(p, "fused_epilogue");
    ASSERT_EQ(fused.size(), 1u);
    EXPECT_EQ(body_size(*fused[0]), 3u);        // convolution, broadcast, add
    EXPECT_EQ(count_instructions(p), 3u);       // the epilogue, relu, add
}

// gelu (erf form) reads the biased result twice: a tree, not a chain.
TEST(fuse_epilogues, dot_bias_gelu) {
    program p = run_and_check(
        "a = @param:a -> float_type, {4, 8}\n"
        "w = @param:w -> float_type, {8, 6}\n"
        "b = @param:b -> float_type, {6}\n"
        "@0 = dot(a, w)\n"
        "@1 = multibroadcast[out_lens={4, 6}](b)\n"
        "@2 = add(@0, @1)\n"
        "@3 = @literal{0.70710678} -> float_type, {}\n"
        "@4 = mul(@2, @3)\n"
        "@5 = erf(@4)\n"
        "@6 = @literal{1.0} -> float_type, {}\n"
        "@7 = add(@5, @6)\n"
        "@8 = mul(@2, @7)\n"
        "@9 = @literal{0.5} -> float_type, {}\n"
        "@10 = mul(@8, @9)\n"
        "@11 = @return(@10)\n",
        {fuse_epilogues{}});
    auto fused = fused_of(p, "fused_epilogue");
    ASSERT_EQ(fused.size(), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
    EXPECT_EQ(fused[0]->inputs().size(), 3u);
    EXPECT_EQ(body_size(*fused[0]), 8u);
    expect_text_round_trip(p);
}

// The gemm's result is returned as well: no epilogue can take it. The neg feeding the dot is a
// prologue, which an epilogue does not take either.
TEST(fuse_epilogues, leaves_shared_results_and_prologues) {
    program p = run_and_check(
        "a = @param:a -> float_type, {3, 4}\n"
        "w = @param:w -> float_type, {4, 5}\n"
        "@0 = gemm[alpha=1.5,beta=0](a, w)\n"
        "@1 = relu(@0)\n"
        "@2 = neg(a)\n"
        "@3 = dot(@2, w)\n"
        "@4 = tanh(@3)\n"
        "@5 = @return(@1, @0, @4)\n",
        {fuse_epilogues{}});
    auto fused = fused_of(p, "fused_epilogue");
    ASSERT_EQ(fused.size(), 1u);
    EXPECT_EQ(body_count(*fused[0], "dot"), 1u);
    EXPECT_EQ(body_count(*fused[0], "neg"), 0u);
    EXPECT_EQ(count_ops(p, "gemm"), 1u);
    EXPECT_EQ(count_ops(p, "relu"), 1u);
}

// A batched dot whose weights are broadcast over the batch: the view goes into the body with it.
TEST(fuse_epilogues, batched_dot_with_broadcast_weights) {
    program p = run_and_check(
        "a = @param:a -> float_type, {2, 3, 4}\n"
        "w = @param:w -> float_type, {4, 5}\n"
        "@0 = multibroadcast[out_lens={2, 4, 5}](w)\n"
        "@1 = dot(a, @0)\n"
        "@2 = sigmoid(@1)\n"
        "@3 = mul(@1, @2)\n"
        "@4 = @return(@3)\n",
        {fuse_epilogues{}});
    auto fused = fused_of(p, "fused_epilogue");
    ASSERT_EQ(fused.size(), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
    EXPECT_EQ(body_count(*fused[0], "multibroadcast"), 1u);
    EXPECT_EQ(body_size(*fused[0]), 4u);
    expect_text_round_trip(p);
}

// GPT-2's Conv1D: the gemm computes [batch * seq, N], a reshape gives [batch, seq, N], then the
// residual add. The reshape joins the epilogue; the sum, used twice afterwards, is the region's
// output.
TEST(fuse_epilogues, through_a_reshape_of_the_product) {
    program p = run_and_check(
        "a = @param:a -> float_type, {8, 4}\n"
        "w = @param:w -> float_type, {4, 3}\n"
        "r = @param:r -> float_type, {2, 4, 3}\n"
        "@0 = gemm[alpha=1,beta=1](a, w)\n"
        "@1 = reshape[dims={2, 4, 3}](@0)\n"
        "@2 = add(@1, r)\n"
        "@3 = tanh(@2)\n"
        "@4 = reshape[dims={8, 3}](@2)\n"
        "@5 = @return(@3, @4)\n",
        {fuse_epilogues{}});
    auto fused = fused_of(p, "fused_epilogue");
    ASSERT_EQ(fused.size(), 1u);
    EXPECT_EQ(body_count(*fused[0], "reshape"), 1u);
    EXPECT_EQ(body_count(*fused[0], "add"), 1u);
    EXPECT_EQ(count_ops(p, "tanh"), 1u);   // the sum has two users: the region ends at it
    expect_text_round_trip(p);
}

// A policy that does not accept views (oneDNN's post-ops) leaves the reshape and the add outside.
TEST(fuse_epilogues, views_join_only_where_the_policy_accepts_them) {
    fuse_epilogues pointwise_only{[](const instruction& ins) { return ins.get_operator().traits().pointwise; }};
    program p = run_and_check(
        "a = @param:a -> float_type, {8, 4}\n"
        "w = @param:w -> float_type, {4, 3}\n"
        "r = @param:r -> float_type, {2, 4, 3}\n"
        "@0 = dot(a, w)\n"
        "@1 = reshape[dims={2, 4, 3}](@0)\n"
        "@2 = add(@1, r)\n"
        "@3 = @return(@2)\n",
        {pointwise_only});
    EXPECT_EQ(fused_of(p, "fused_epilogue").size(), 0u);
}

// A small attention-like block through the three passes: dot + bias, softmax, dot, residual.
TEST(fuse_epilogues, with_reduce_and_pointwise_in_pipeline_order) {
    const char* ir =
        "q = @param:q -> float_type, {4, 8}\n"
        "k = @param:k -> float_type, {8, 4}\n"
        "v = @param:v -> float_type, {4, 8}\n"
        "@0 = dot(q, k)\n"
        "@1 = @literal{0.35} -> float_type, {}\n"
        "@2 = mul(@0, @1)\n"
        "@3 = reduce_max[axes={1}](@2)\n"
        "@4 = multibroadcast[out_lens={4, 4}](@3)\n"
        "@5 = sub(@2, @4)\n"
        "@6 = exp(@5)\n"
        "@7 = reduce_sum[axes={1}](@6)\n"
        "@8 = multibroadcast[out_lens={4, 4}](@7)\n"
        "@9 = div(@6, @8)\n"
        "@10 = dot(@9, v)\n"
        "@11 = add(@10, q)\n"
        "@12 = abs(v)\n"
        "@13 = sqrt(@12)\n"
        "@14 = @return(@11, @13)\n";
    program before = parse_text(ir);
    program p = run_and_check(ir, {fuse_epilogues{}, fuse_reduce{}, fuse_pointwise{}});
    EXPECT_EQ(kernel_count(before.main()), 11u);
    EXPECT_EQ(kernel_count(p.main()), 4u);
    EXPECT_EQ(fused_of(p, "fused_epilogue").size(), 2u);   // dot*scale, dot+q
    EXPECT_EQ(fused_of(p, "fused_reduce").size(), 1u);     // the softmax
    EXPECT_EQ(fused_of(p, "pointwise").size(), 1u);        // sqrt(abs(v))
    expect_text_round_trip(p);
}

}  // namespace
}  // namespace kiln
