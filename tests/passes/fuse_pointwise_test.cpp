// fuse_pointwise: trees of pointwise ops become one `pointwise` instruction each; literals and
// broadcast views are copied into bodies; producers used outside a region stay outside (so no
// cycle forms) unless the cost model copies them into every user's region; results agree before
// and after on random inputs; fused programs round-trip as text.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "fuse_check.hpp"
#include "pass_check.hpp"
#include "passes/fuse/fuse_pointwise.hpp"
#include "passes/analysis/kernel_count.hpp"

namespace kiln {
namespace {

TEST(fuse_pointwise, diamond_becomes_one_kernel) {
    program p = run_and_check(
        "x = @param:x -> float_type, {2, 3}\n"
        "@0 = exp(x)\n"
        "@1 = sin(x)\n"
        "@2 = add(@0, @1)\n"
        "@3 = @return(@2)\n",
        {fuse_pointwise{}});
    auto fused = fused_of(p, "pointwise");
    ASSERT_EQ(fused.size(), 1u);
    EXPECT_EQ(body_size(*fused[0]), 3u);
    EXPECT_EQ(fused[0]->inputs().size(), 1u);   // x is read once
    EXPECT_EQ(fused[0]->module_inputs()[0]->name(), "pointwise0");
    EXPECT_EQ(count_instructions(p), 1u);
    expect_text_round_trip(p);
}

TEST(fuse_pointwise, chain_with_broadcasts_and_scalars) {
    program p = run_and_check(
        "x = @param:x -> float_type, {2, 3, 4}\n"
        "b = @param:b -> float_type, {4}\n"
        "y = @param:y -> float_type, {3, 1}\n"
        "@0 = @literal{0.5} -> float_type, {1}\n"
        "@1 = multibroadcast[out_lens={2, 3, 4}](b)\n"
        "@2 = add(x, @1)\n"
        "@3 = multibroadcast[out_lens={2, 3, 4}](@0)\n"
        "@4 = mul(@2, @3)\n"
        "@5 = add(@4, y)\n"             // implicit numpy broadcasting
        "@6 = tanh(@5)\n"
        "@7 = @literal{2.0} -> float_type, {}\n"
        "@8 = pow(@6, @7)\n"
        "@9 = @return(@8)\n",
        {fuse_pointwise{}});
    auto fused = fused_of(p, "pointwise");
    ASSERT_EQ(fused.size(), 1u);
    EXPECT_EQ(count_instructions(p), 1u);   // the views and literals went into the body
    EXPECT_EQ(fused[0]->inputs().size(), 3u);   // x, b, y
    EXPECT_EQ(body_size(*fused[0]), 7u);        // 2 views and 5 pointwise ops
    EXPECT_EQ(body_count(*fused[0], "@literal"), 2u);
    expect_text_round_trip(p);
}

TEST(fuse_pointwise, large_literals_stay_inputs) {
    program p = run_and_check(
        "x = @param:x -> float_type, {4, 5}\n"
        "@0 = @literal{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20} -> float_type, {4, 5}\n"
        "@1 = mul(x, @0)\n"
        "@2 = relu(@1)\n"
        "@3 = @return(@2)\n",
        {fuse_pointwise{}});
    auto fused = fused_of(p, "pointwise");
    ASSERT_EQ(fused.size(), 1u);
    EXPECT_EQ(fused[0]->inputs().size(), 2u);
    EXPECT_EQ(body_count(*fused[0], "@literal"), 0u);
}

// exp(x) feeds the add directly and through a dot: merging it into the add's region would make
// the region both feed the dot and need its result. exp is copied instead (the cost model: both
// its users are pointwise and it reads no more than it writes), so each region computes it from x.
TEST(fuse_pointwise, does_not_fuse_across_a_path_through_another_op) {
    program p = run_and_check(
        "x = @param:x -> float_type, {3, 3}\n"
        "w = @param:w -> float_type, {3, 3}\n"
        "@0 = exp(x)\n"
        "@1 = neg(@0)\n"
        "@2 = dot(@1, w)\n"
        "@3 = sin(@0)\n"
        "@4 = add(@3, @2)\n"
        "@5 = @return(@4)\n",
        {fuse_pointwise{}});
    auto fused = fused_of(p, "pointwise");
    ASSERT_EQ(fused.size(), 2u);   // {exp, neg}, {exp, sin, add}
    EXPECT_EQ(body_size(*fused[0]), 2u);
    EXPECT_EQ(body_size(*fused[1]), 3u);
    EXPECT_EQ(count_ops(p, "exp"), 0u);
    EXPECT_EQ(count_ops(p, "dot"), 1u);
    expect_text_round_trip(p);
}

// A producer that is returned, or read by a dot, is not duplicated (it would stay anyway): it is
// its own kernel and both regions read its result; a region's result may have many consumers.
TEST(fuse_pointwise, producers_with_several_users_stay_outside) {
    program p = run_and_check(
        "x = @param:x -> float_type, {4, 4}\n"
        "w = @param:w -> float_type, {4, 4}\n"
        "@0 = exp(x)\n"
        "@1 = sin(@0)\n"
        "@2 = cos(@0)\n"
        "@3 = neg(@2)\n"
        "@4 = dot(@3, w)\n"
        "@5 = dot(@3, @3)\n"
        "@6 = @return(@1, @4, @5, @0)\n",
        {fuse_pointwise{}});
    auto fused = fused_of(p, "pointwise");
    ASSERT_EQ(fused.size(), 3u);   // {exp}, {sin}, {cos, neg}
    EXPECT_EQ(body_size(*fused[2]), 2u);
    EXPECT_EQ(fused[2]->outputs().size(), 2u);   // both dots read the fused result
    EXPECT_EQ(kernel_count(p.main()), 5u);
    expect_text_round_trip(p);
}

// The cost model: a convert read by two pointwise ops that feed different dots is computed again
// in both of their kernels (each reads the half input, fewer bytes than the float result), so the
// convert's own kernel, its write and two reads of it go away.
TEST(fuse_pointwise, a_cheap_producer_is_copied_into_its_users_regions) {
    program p = run_and_check(
        "x = @param:x -> half_type, {4, 4}\n"
        "w = @param:w -> float_type, {4, 4}\n"
        "@0 = convert[target_type=float_type](x)\n"
        "@1 = exp(@0)\n"
        "@2 = neg(@0)\n"
        "@3 = dot(@1, w)\n"
        "@4 = dot(@2, w)\n"
        "@5 = @return(@3, @4)\n",
        {fuse_pointwise{}});
    auto fused = fused_of(p, "pointwise");
    ASSERT_EQ(fused.size(), 2u);   // {convert, exp}, {convert, neg}
    for (const auto* f : fused) {
        EXPECT_EQ(body_size(*f), 2u);
        EXPECT_EQ(body_count(*f, "convert"), 1u);
        ASSERT_EQ(f->inputs().size(), 1u);
        EXPECT_EQ(f->inputs()[0]->name(), "@param");   // x itself, not a converted copy
    }
    EXPECT_EQ(count_ops(p, "convert"), 0u);
    EXPECT_EQ(kernel_count(p.main()), 4u);
    expect_text_round_trip(p);
}

// Copying an add of two inputs would make each user's kernel read two tensors instead of one: it
// stays its own kernel. So does a producer with a user that is not pointwise.
TEST(fuse_pointwise, a_producer_that_would_read_more_is_not_copied) {
    program p = run_and_check(
        "x = @param:x -> float_type, {4, 4}\n"
        "y = @param:y -> float_type, {4, 4}\n"
        "w = @param:w -> float_type, {4, 4}\n"
        "@0 = add(x, y)\n"
        "@1 = exp(@0)\n"
        "@2 = neg(@0)\n"
        "@3 = dot(@1, w)\n"
        "@4 = dot(@2, w)\n"
        "@5 = sin(x)\n"
        "@6 = cos(@5)\n"
        "@7 = dot(@5, @6)\n"
        "@8 = @return(@3, @4, @7)\n",
        {fuse_pointwise{}});
    auto fused = fused_of(p, "pointwise");
    ASSERT_EQ(fused.size(), 5u);   // {add}, {exp}, {neg}, {sin}, {cos}
    for (const auto* f : fused) EXPECT_EQ(body_size(*f), 1u);
    expect_text_round_trip(p);
}

TEST(fuse_pointwise, fuses_inside_submodules_with_unique_names) {
    program p = run_and_check(
        "c = @param:c -> bool_type, {}\n"
        "x = @param:x -> float_type, {2, 3}\n"
        "@0 = abs(x)\n"
        "@1 = sqrt(@0)\n"
        "@2 = if(c, @1), [then_b, else_b]\n"
        "@3 = get_tuple_elem[index=0](@2)\n"
        "@4 = @return(@3)\n"
        "module: \"then_b\"\n"
        "a = @param:a -> float_type, {2, 3}\n"
        "@0 = exp(a)\n"
        "@1 = neg(@0)\n"
        "@2 = @return(@1)\n"
        "module: \"else_b\"\n"
        "a = @param:a -> float_type, {2, 3}\n"
        "@0 = sin(a)\n"
        "@1 = @return(@0)\n",
        {fuse_pointwise{}});
    for (const char* name : {"pointwise0", "pointwise1", "pointwise2"}) EXPECT_NE(p.find_module(name), nullptr) << name;
    EXPECT_EQ(p.modules().size(), 6u);
    expect_text_round_trip(p);
}

TEST(fuse_pointwise, names_skip_taken_ones_and_bodies_are_left_alone) {
    program p = run_and_check(
        "c = @param:c -> bool_type, {}\n"
        "x = @param:x -> float_type, {2, 3}\n"
        "@0 = exp(x)\n"
        "@1 = neg(@0)\n"
        "@2 = if(c, @1), [pointwise0, pointwise0]\n"
        "@3 = get_tuple_elem[index=0](@2)\n"
        "@4 = @return(@3)\n"
        "module: \"pointwise0\"\n"
        "a = @param:a -> float_type, {2, 3}\n"
        "@0 = @return(a)\n",
        {fuse_pointwise{}, fuse_pointwise{}});
    auto fused = fused_of(p, "pointwise");
    ASSERT_EQ(fused.size(), 1u);   // the second run finds no pointwise op (bodies are not rewritten)
    EXPECT_EQ(fused[0]->module_inputs()[0]->name(), "pointwise1");
    EXPECT_EQ(body_size(*fused[0]), 2u);
    EXPECT_EQ(p.modules().size(), 3u);
}

TEST(kernel_count, counts_computing_instructions_only) {
    program p = parse_text(
        "x = @param:x -> float_type, {2, 3}\n"
        "@0 = @literal{1.0} -> float_type, {1}\n"
        "@1 = multibroadcast[out_lens={2, 3}](@0)\n"
        "@2 = add(x, @1)\n"
        "@3 = transpose[permutation={1, 0}](@2)\n"
        "@4 = relu(@3)\n"
        "@5 = @return(@4)\n");
    EXPECT_EQ(kernel_count(p.main()), 2u);
}

}  // namespace
}  // namespace kiln
