// simplify_algebra's weight rules: per-channel scales fold into convolution, dot and gemm weights,
// biases into gemm's C; constants that vary along another dim, or ops used twice, decline.
#include <gtest/gtest.h>

#include "ir_text.hpp"
#include "pass_check.hpp"
#include "passes/simplify/simplify_algebra.hpp"

namespace kiln {
namespace {

using ir_text::literal_line;
using ir_text::shape_text;

const std::string conv_out = " -> " + shape_text({1, 2, 4, 4}) + "\n";

// x [1, 3, 4, 4] conv w [2, 3, 3, 3] (padding 1), then `tail` on @1 (the conv).
std::string conv_prog(const std::string& tail) {
    return "module: \"main\"\nx = @param:x -> " + shape_text({1, 3, 4, 4}) + "\n" + literal_line("w", {2, 3, 3, 3}) +
           "@1 = convolution[padding={1, 1},stride={1, 1},dilation={1, 1},group=1](x, w)" + conv_out + tail;
}

program simplify(const std::string& text) { return run_and_check(text, {simplify_algebra{}}); }

TEST(simplify_weights, conv_scale_per_channel_folds) {
    for (std::vector<std::size_t> lens : {std::vector<std::size_t>{2, 1, 1}, {1, 2, 1, 1}, {1}}) {
        program p = simplify(conv_prog(literal_line("c", lens, 3) + "@2 = mul(c, @1)" + conv_out + "@3 = @return(@2)\n"));
        EXPECT_EQ(count_ops(p, "mul"), 0u) << lens.size();
        EXPECT_EQ(count_ops(p, "convolution"), 1u);
    }
}

TEST(simplify_weights, conv_bias_then_scale_folds_into_weights_and_bias) {
    program p = simplify(conv_prog(literal_line("b", {2, 1, 1}, 2) + literal_line("c", {2, 1, 1}, 3) +
                                   "@2 = add(@1, b)" + conv_out + "@3 = mul(@2, c)" + conv_out +
                                   "@4 = @return(@3)\n"));
    EXPECT_EQ(count_ops(p, "mul"), 0u);
    EXPECT_EQ(count_ops(p, "add"), 1u);
}

TEST(simplify_weights, conv_scale_declines_off_channel_or_used_twice) {
    // One value per column (dim 3), not per channel.
    program cols = simplify(conv_prog(literal_line("c", {4}, 3) + "@2 = mul(@1, c)" + conv_out + "@3 = @return(@2)\n"));
    EXPECT_EQ(count_ops(cols, "mul"), 1u);
    // Per channel but broadcasting the batch dim up to 2.
    program up = simplify(conv_prog(literal_line("c", {2, 2, 1, 1}, 3) + "@2 = mul(@1, c) -> " +
                                    shape_text({2, 2, 4, 4}) + "\n@3 = @return(@2)\n"));
    EXPECT_EQ(count_ops(up, "mul"), 1u);
    program twice = simplify(conv_prog(literal_line("c", {2, 1, 1}, 3) + "@2 = mul(@1, c)" + conv_out +
                                       "@3 = @return(@1, @2)\n"));
    EXPECT_EQ(count_ops(twice, "mul"), 1u);
}

// a [2, 3] dot/gemm w [3, 4] (or its transpose).
std::string mat_prog(const std::string& op, const std::string& tail, const std::vector<std::size_t>& w = {3, 4}) {
    return "module: \"main\"\na = @param:a -> " + shape_text({2, 3}) + "\n" + literal_line("w", w) + "@1 = " + op +
           "(a, w) -> " + shape_text({2, 4}) + "\n" + tail;
}
const std::string mat_out = " -> " + shape_text({2, 4}) + "\n";

TEST(simplify_weights, dot_scale_per_column_folds) {
    program p = simplify(mat_prog("dot", literal_line("c", {4}, 5) + "@2 = mul(@1, c)" + mat_out + "@3 = @return(@2)\n"));
    EXPECT_EQ(count_ops(p, "mul"), 0u);
}

TEST(simplify_weights, dot_scale_declines_per_row) {
    program p = simplify(mat_prog("dot", literal_line("c", {2, 1}, 5) + "@2 = mul(@1, c)" + mat_out + "@3 = @return(@2)\n"));
    EXPECT_EQ(count_ops(p, "mul"), 1u);
}

TEST(simplify_weights, gemm_scale_folds_into_weights_and_c) {
    program p = simplify(mat_prog("gemm[alpha=0.5,beta=2,trans_a=false,trans_b=true]",
                                  literal_line("c", {4}, 5) + "@2 = mul(@1, c)" + mat_out + "@3 = @return(@2)\n",
                                  {4, 3}));
    EXPECT_EQ(count_ops(p, "mul"), 0u);
    std::string with_c = "module: \"main\"\na = @param:a -> " + shape_text({2, 3}) + "\n" + literal_line("w", {3, 4}) +
                         literal_line("k", {4}, 7) + literal_line("s", {1, 4}, 5) + "@1 = gemm[beta=0.5](a, w, k)" +
                         mat_out + "@2 = mul(@1, s)" + mat_out + "@3 = @return(@2)\n";
    EXPECT_EQ(count_ops(simplify(with_c), "mul"), 0u);
}

TEST(simplify_weights, gemm_scale_declines_with_a_computed_c) {
    std::string text = "module: \"main\"\na = @param:a -> " + shape_text({2, 3}) + "\nk = @param:k -> " +
                       shape_text({2, 4}) + "\n" + literal_line("w", {3, 4}) + literal_line("s", {4}, 5) +
                       "@1 = gemm(a, w, k)" + mat_out + "@2 = mul(@1, s)" + mat_out + "@3 = @return(@2)\n";
    EXPECT_EQ(count_ops(simplify(text), "mul"), 1u);
}

TEST(simplify_weights, gemm_takes_a_bias_as_c) {
    program p = simplify(mat_prog("gemm[alpha=2]", literal_line("b", {4}, 5) + literal_line("d", {2, 1}, 6) +
                                                       "@2 = add(@1, b)" + mat_out + "@3 = add(d, @2)" + mat_out +
                                                       "@4 = @return(@3)\n"));
    EXPECT_EQ(count_ops(p, "add"), 0u);
    EXPECT_EQ(count_ops(p, "gemm"), 1u);
}

TEST(simplify_weights, gemm_bias_declines_when_it_broadcasts_the_result_up) {
    program p = simplify(mat_prog("gemm", literal_line("b", {3, 1, 4}, 5) + "@2 = add(@1, b) -> " +
                                              shape_text({3, 2, 4}) + "\n@3 = @return(@2)\n"));
    EXPECT_EQ(count_ops(p, "add"), 1u);
}

}  // namespace
}  // namespace kiln
