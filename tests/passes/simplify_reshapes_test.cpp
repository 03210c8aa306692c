// simplify_reshapes: view chains collapse and cancel, views of literals fold, transposes move
// through pointwise ops, and copies go where a view suffices (not at @return).
#include "passes/simplify/simplify_reshapes.hpp"

#include <gtest/gtest.h>

#include "core/reflect.hpp"
#include "core/text_parser.hpp"
#include "ir_text.hpp"
#include "passes/pipeline.hpp"
#include "pass_check.hpp"

namespace kiln {
namespace {

using ir_text::literal_line;
using ir_text::shape_text;

program simplify(const std::string& body) {
    return run_and_check("module: \"main\"\n" + body, {simplify_reshapes{}});
}

const std::string x234 = "x = @param:x -> " + shape_text({2, 3, 4}) + "\n";

TEST(simplify_reshapes, inverse_transposes_cancel) {
    program p = simplify(x234 + "@0 = transpose[permutation={2, 0, 1}](x) -> float_type, {4, 2, 3}, {1, 12, 4}\n"
                                "@1 = transpose[permutation={1, 2, 0}](@0) -> float_type, {2, 3, 4}, {12, 4, 1}\n"
                                "@2 = @return(@1)\n");
    EXPECT_EQ(count_instructions(p), 0u);
}

TEST(simplify_reshapes, transposes_merge_into_one) {
    program p = simplify(x234 + "@0 = transpose[permutation={2, 0, 1}](x) -> float_type, {4, 2, 3}, {1, 12, 4}\n"
                                "@1 = transpose[permutation={0, 2, 1}](@0) -> float_type, {4, 3, 2}, {1, 4, 12}\n"
                                "@2 = transpose(@1) -> float_type, {2, 3, 4}, {12, 4, 1}\n"
                                "@3 = transpose[permutation={1, 0, 2}](@0) -> float_type, {2, 4, 3}, {12, 1, 4}\n"
                                "@4 = @return(@2, @3)\n");
    // @2 cancels back to x (the empty permutation reverses); @3 composes into one transpose.
    EXPECT_EQ(count_ops(p, "transpose"), 1u);
}

TEST(simplify_reshapes, reshape_chains_become_one_reshape_or_none) {
    program p = simplify(x234 + "@0 = reshape[dims={6, 4}](x) -> float_type, {6, 4}, {4, 1}\n"
                                "@1 = unsqueeze[axes={0}](@0) -> float_type, {1, 6, 4}, {24, 4, 1}\n"
                                "@2 = flatten[axis=2](@1) -> float_type, {6, 4}, {4, 1}\n"
                                "@3 = reshape[dims={2, 3, 4}](@2) -> float_type, {2, 3, 4}, {12, 4, 1}\n"
                                "@4 = squeeze[axes={0}](@1) -> float_type, {6, 4}, {4, 1}\n"
                                "@5 = reshape[dims={24}](@4) -> float_type, {24}, {1}\n"
                                "@6 = @return(@3, @5)\n");
    EXPECT_EQ(count_instructions(p), 1u);   // one reshape to {24}
    EXPECT_EQ(count_ops(p, "reshape"), 1u);
}

TEST(simplify_reshapes, sunk_reshapes_keep_empty_dims) {
    // The sunk reshape's dims {2, 0, 3} hold a 0 that is a size, not a copy of input dim 1.
    program p = simplify("x = @param:x -> float_type, {0, 2, 3}, {6, 3, 1}\n"
                         "@0 = reshape[dims={2, 0, 3},allowzero=true](x) -> float_type, {2, 0, 3}, {3, 3, 1}\n"
                         "@1 = relu(@0) -> float_type, {2, 0, 3}, {3, 3, 1}\n"
                         "@2 = @return(@1)\n");
    EXPECT_EQ(std::prev(p.main().get_return())->name(), "reshape");
}

TEST(simplify_reshapes, squeeze_unsqueeze_pair_cancels) {
    program p = simplify(x234 + "@0 = unsqueeze[axes={1}](x) -> float_type, {2, 1, 3, 4}, {12, 12, 4, 1}\n"
                                "@1 = squeeze[axes={1}](@0) -> float_type, {2, 3, 4}, {12, 4, 1}\n"
                                "@2 = @return(@1)\n");
    EXPECT_EQ(count_instructions(p), 0u);
}

TEST(simplify_reshapes, reshape_of_a_transpose_keeps_the_transpose) {
    // The reshape copies the transposed elements in their new order: nothing cancels.
    program p = simplify(x234 + "@0 = transpose[permutation={0, 2, 1}](x) -> float_type, {2, 4, 3}, {12, 1, 4}\n"
                                "@1 = reshape[dims={2, 3, 4}](@0) -> float_type, {2, 3, 4}, {12, 4, 1}\n"
                                "@2 = @return(@1)\n");
    EXPECT_EQ(count_instructions(p), 2u);
}

// A gather by one constant index is a slice (a view), relabelled for a scalar index; run_and_check
// compares the results on random inputs.
TEST(simplify_reshapes, gather_by_a_constant_index_is_a_view) {
    program p = simplify("x = @param:x -> " + shape_text({3, 4, 8}) +
                         "\nk = @literal{-2} -> int64_type, {}, {}\n"
                         "@0 = gather[axis=0](x, k) -> float_type, {4, 8}, {8, 1}\n"
                         "@1 = relu(@0) -> float_type, {4, 8}, {8, 1}\n"
                         "j = @literal{3} -> int64_type, {1}, {1}\n"
                         "@2 = gather[axis=-1](x, j) -> float_type, {3, 4, 1}, {4, 1, 1}\n"
                         "@3 = relu(@2) -> float_type, {3, 4, 1}, {4, 1, 1}\n"
                         "@4 = @return(@1, @3)\n");
    EXPECT_EQ(count_ops(p, "gather"), 0u);
    EXPECT_EQ(count_ops(p, "slice"), 2u);
}

// An index outside [-n, n) stays a gather, whose run reports it.
TEST(simplify_reshapes, gather_by_an_out_of_range_constant_stays) {
    program p = parse_text("module: \"main\"\nx = @param:x -> " + shape_text({3, 4}) +
                              "\nk = @literal{3} -> int64_type, {}, {}\n"
                              "@0 = gather[axis=0](x, k) -> float_type, {4}, {1}\n"
                              "@1 = relu(@0) -> float_type, {4}, {1}\n@2 = @return(@1)\n");
    run_passes(p, {simplify_reshapes{}}, {.dump_dir = ""});
    EXPECT_EQ(count_ops(p, "gather"), 1u);
}

TEST(simplify_reshapes, views_of_literals_fold_once_used_once) {
    program p = simplify(x234 + literal_line("b", {4}) +
                         "@1 = unsqueeze[axes={0, 1}](b) -> float_type, {1, 1, 4}, {4, 4, 1}\n"
                         "@2 = add(x, @1) -> " + shape_text({2, 3, 4}) + "\n@3 = @return(@2)\n");
    EXPECT_EQ(count_ops(p, "unsqueeze"), 0u);
    // A literal read by two views stays one literal with its views.
    program shared = simplify(x234 + literal_line("b", {4}) +
                              "@1 = unsqueeze[axes={0}](b) -> float_type, {1, 4}, {4, 1}\n"
                              "@2 = add(x, @1) -> " + shape_text({2, 3, 4}) + "\n"
                              "@3 = unsqueeze[axes={1}](b) -> float_type, {4, 1}, {1, 1}\n"
                              "@4 = @return(@2, @3)\n");
    EXPECT_EQ(count_ops(shared, "unsqueeze"), 2u);
}

TEST(simplify_reshapes, transpose_moves_through_pointwise_so_the_pair_cancels) {
    program p = simplify(x234 + literal_line("c", {4, 1}) + "y = @param:y -> " + shape_text({2, 3, 4}) + "\n" +
                         "@1 = transpose[permutation={0, 2, 1}](x) -> float_type, {2, 4, 3}, {12, 1, 4}\n"
                         "@2 = relu(@1) -> " + shape_text({2, 4, 3}) + "\n"
                         "@3 = transpose[permutation={0, 2, 1}](@2) -> float_type, {2, 3, 4}, {12, 1, 3}\n"
                         "@4 = add(@3, y) -> " + shape_text({2, 3, 4}) + "\n"
                         "@5 = transpose[permutation={0, 2, 1}](y) -> float_type, {2, 4, 3}, {12, 1, 4}\n"
                         "@6 = mul(@5, c) -> " + shape_text({2, 4, 3}) + "\n"
                         "@7 = transpose[permutation={0, 2, 1}](@6) -> float_type, {2, 3, 4}, {12, 1, 3}\n"
                         "@8 = sub(@7, @4) -> " + shape_text({2, 3, 4}) + "\n"
                         "@9 = @return(@8)\n");
    EXPECT_EQ(count_ops(p, "transpose"), 0u);
}

TEST(simplify_reshapes, reshape_moves_through_pointwise_so_the_pair_cancels) {
    program p = simplify(x234 + "@0 = @literal{2.0} -> float_type, {1}, {1}\n"
                                "@1 = reshape[dims={6, 4}](x) -> " + shape_text({6, 4}) + "\n"
                                "@2 = mul(@1, @0) -> " + shape_text({6, 4}) + "\n"
                                "@3 = relu(@2) -> " + shape_text({6, 4}) + "\n"
                                "@4 = reshape[dims={2, 3, 4}](@3) -> " + shape_text({2, 3, 4}) + "\n"
                                "@5 = @return(@4)\n");
    EXPECT_EQ(count_ops(p, "reshape"), 0u);
    // A constant with more than one value would have to move too: the reshapes stay.
    program c = simplify(x234 + literal_line("c", {4}) +
                         "@1 = reshape[dims={6, 4}](x) -> " + shape_text({6, 4}) + "\n"
                         "@2 = mul(@1, c) -> " + shape_text({6, 4}) + "\n"
                         "@3 = reshape[dims={2, 3, 4}](@2) -> " + shape_text({2, 3, 4}) + "\n"
                         "@4 = @return(@3)\n");
    EXPECT_EQ(count_ops(c, "reshape"), 2u);
}

TEST(simplify_reshapes, transpose_through_pointwise_declines_without_a_pair) {
    program p = simplify(x234 + "@0 = relu(x) -> " + shape_text({2, 3, 4}) + "\n"
                         "@1 = transpose[permutation={0, 2, 1}](@0) -> float_type, {2, 4, 3}, {12, 1, 4}\n"
                         "@2 = exp(@1) -> " + shape_text({2, 4, 3}) + "\n@3 = @return(@2)\n");
    EXPECT_EQ(count_ops(p, "transpose"), 1u);
}

TEST(simplify_reshapes, transpose_through_pointwise_declines_when_it_would_compute_twice) {
    // The outer transpose is also an output (whose layout stays): moving the relu for the exp
    // alone would compute it twice.
    program p = simplify(x234 + "@0 = transpose[permutation={0, 2, 1}](x) -> float_type, {2, 4, 3}, {12, 1, 4}\n"
                                "@1 = relu(@0) -> " + shape_text({2, 4, 3}) + "\n"
                                "@2 = transpose[permutation={0, 2, 1}](@1) -> float_type, {2, 3, 4}, {12, 1, 3}\n"
                                "@3 = exp(@2) -> " + shape_text({2, 3, 4}) + "\n@4 = @return(@2, @3)\n");
    EXPECT_EQ(count_ops(p, "relu"), 1u);
    EXPECT_EQ(count_ops(p, "transpose"), 2u);
}

TEST(simplify_reshapes, contiguous_goes_where_a_view_suffices) {
    program p = simplify(x234 + "@0 = transpose[permutation={0, 2, 1}](x) -> float_type, {2, 4, 3}, {12, 1, 4}\n"
                                "@1 = contiguous(@0) -> " + shape_text({2, 4, 3}) + "\n"
                                "@2 = exp(@1) -> " + shape_text({2, 4, 3}) + "\n"
                                "@3 = contiguous(x) -> " + shape_text({2, 3, 4}) + "\n"
                                "@4 = @return(@2, @3)\n");
    EXPECT_EQ(count_ops(p, "contiguous"), 0u);
    // A copy that is also an output stays for the output only.
    program partial = simplify(x234 + "@0 = transpose[permutation={0, 2, 1}](x) -> float_type, {2, 4, 3}, {12, 1, 4}\n"
                                      "@1 = contiguous(@0) -> " + shape_text({2, 4, 3}) + "\n"
                                      "@2 = exp(@1) -> " + shape_text({2, 4, 3}) + "\n"
                                      "@3 = @return(@1, @2)\n");
    EXPECT_EQ(count_ops(partial, "contiguous"), 1u);
    auto exp = std::prev(partial.main().get_return(), 1);
    EXPECT_EQ(exp->inputs().front()->name(), "transpose");
}

TEST(simplify_reshapes, contiguous_stays_at_return_and_under_views) {
    program p = simplify(x234 + "@0 = transpose[permutation={0, 2, 1}](x) -> float_type, {2, 4, 3}, {12, 1, 4}\n"
                                "@1 = contiguous(@0) -> " + shape_text({2, 4, 3}) + "\n"
                                "@2 = slice[axes={1},starts={1},ends={3}](@1) -> float_type, {2, 2, 3}, {12, 3, 1}\n"
                                "@3 = @return(@1, @2)\n");
    EXPECT_EQ(count_ops(p, "contiguous"), 1u);
}

TEST(simplify_reshapes, explicit_broadcast_into_pointwise_goes) {
    program p = simplify(x234 + literal_line("c", {4}) +
                         "@1 = multibroadcast[out_lens={2, 3, 4}](c) -> float_type, {2, 3, 4}, {0, 0, 1}\n"
                         "@2 = add(x, @1) -> " + shape_text({2, 3, 4}) + "\n"
                         "y = @param:y -> " + shape_text({4}) + "\n"
                         "@3 = multibroadcast[out_lens={2, 3, 4}](y) -> float_type, {2, 3, 4}, {0, 0, 1}\n"
                         "@4 = mul(@3, y) -> " + shape_text({2, 3, 4}) + "\n"
                         "@5 = @return(@2, @4)\n");
    EXPECT_EQ(count_ops(p, "multibroadcast"), 1u);   // y * y would lose the broadcast: it stays
}

// torch's multi-head attention (batch second) exported: the fused projection [S, B, 3 * E] as
// [3, S, B, E], q, k and v picked by constant index, each split into heads as [S, B * H, D],
// transposed to [B * H, S, D] and split to [B, H, S, D], q scaled on the way. Merging B with H
// in between copies; refined through the transposes, q, k and v are views of the projection (q
// reads it through its scale, one kernel; k through the transpose to kT), and the results stay
// those of the chain.
TEST(simplify_reshapes, heads_split_through_a_transpose_are_views) {
    const std::size_t S = 5, B = 2, H = 3, D = 4, E = H * D;
    program p;
    module& m = p.main();
    auto op = [&](const char* name, std::vector<instruction_ref> in, value attrs = value()) {
        return m.add_instruction(make_op(name, attrs), std::move(in));
    };
    auto ints = [](std::vector<std::int64_t> v) { return to_value(v); };
    auto sz = [](std::size_t v) { return static_cast<std::int64_t>(v); };
    auto x = m.add_parameter("x", shape(dtype::float32, {S, B, 3 * E}));
    auto qkv = op("squeeze", {op("transpose", {op("reshape", {x}, value{{"dims", ints({1, sz(S), sz(B), 3, sz(E)})}})},
                                 value{{"permutation", ints({3, 1, 2, 0, 4})}})},
                  value{{"axes", ints({3})}});
    std::vector<instruction_ref> heads;
    for (std::int64_t i = 0; i < 3; ++i) {
        const std::vector<std::int64_t> k{i};
        auto index = m.add_literal(literal(shape(dtype::int64, std::vector<std::size_t>{}), k));
        auto part = op("gather", {qkv, index}, value{{"axis", value(std::int64_t{0})}});
        auto split = op("reshape", {part}, value{{"dims", ints({sz(S), sz(B * H), sz(D)})}});
        auto t = op("transpose", {split}, value{{"permutation", ints({1, 0, 2})}});
        const std::vector<double> half{0.5};
        if (i == 0) t = op("mul", {t, m.add_literal(literal(shape(dtype::float32, std::vector<std::size_t>{}), half))});
        heads.push_back(op("reshape", {t}, value{{"dims", ints({sz(B), sz(H), sz(S), sz(D)})}}));
    }
    // Written out as exporters do: k is read through its transpose (a view that must stay one).
    auto kt = op("transpose", {heads[1]}, value{{"permutation", ints({0, 1, 3, 2})}});
    auto scores = op("softmax", {op("dot", {heads[0], kt})}, value{{"axis", value(std::int64_t{-1})}});
    m.add_return({op("dot", {scores, heads[2]})});
    program before = p.clone();
    run_passes(p, {simplify_reshapes{}}, {.dump_dir = ""});
    std::size_t copies = 0;
    for (const auto& ins : p.main()) {
        if (ins.is_param() || ins.is_literal() || ins.is_return() || ins.name() != "reshape") continue;
        copies += ins.get_operator().output_alias(std::vector<shape>{ins.inputs().front()->get_shape()}) < 0;
    }
    EXPECT_EQ(copies, 0u);
    EXPECT_EQ(count_ops(p, "mul"), 1u);
    for (std::uint64_t seed : {1u, 2u}) expect_same_results(before, p, seed);
}

}  // namespace
}  // namespace kiln
