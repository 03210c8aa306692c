// fold_batch_norm: batch norms after convolutions (with or without a bias add), gemms and dots with
// literal weights fold into the weights; anything else keeps its batch norm.
#include "passes/simplify/fold_batch_norm.hpp"

#include <gtest/gtest.h>

#include "ir_text.hpp"
#include "pass_check.hpp"
#include "passes/simplify/simplify_reshapes.hpp"

namespace kiln {
namespace {

using ir_text::literal_line;
using ir_text::shape_text;

// The four batch-norm parameters for `c` channels; the variance is positive.
std::string bn_params(std::size_t c) {
    std::string var;
    for (std::size_t i = 0; i < c; ++i) var += (i ? ", " : "") + std::to_string(0.5 + 0.25 * static_cast<double>(i));
    return literal_line("s", {c}, 11) + literal_line("b", {c}, 12) + literal_line("m", {c}, 13) + "v = @literal{" +
           var + "} -> " + shape_text({c}) + "\n";
}

const std::string conv_out = " -> " + shape_text({1, 2, 4, 4}) + "\n";
const std::string conv_head = "module: \"main\"\nx = @param:x -> " + shape_text({1, 3, 4, 4}) + "\n" +
                              literal_line("w", {2, 3, 3, 3}) + bn_params(2) +
                              "@1 = convolution[padding={1, 1},stride={1, 1},dilation={1, 1},group=1](x, w)" + conv_out;

program fold(const std::string& text) { return run_and_check(text, {fold_batch_norm{}}); }

TEST(fold_batch_norm, after_convolution) {
    program p = fold(conv_head + "@2 = batch_norm_inference[epsilon=0.001](@1, s, b, m, v)" + conv_out +
                     "@3 = relu(@2)" + conv_out + "@4 = @return(@3)\n");
    EXPECT_EQ(count_ops(p, "batch_norm_inference"), 0u);
    EXPECT_EQ(count_ops(p, "mul"), 0u);
    EXPECT_EQ(count_ops(p, "add"), 1u);
}

TEST(fold_batch_norm, after_convolution_with_the_onnx_bias) {
    // ONNX Conv with B: add(conv, unsqueeze(B)); simplify_reshapes turns the view into a literal.
    std::string text = conv_head + literal_line("cb", {2}, 14) +
                       "@2 = unsqueeze[axes={1, 2}](cb) -> float_type, {2, 1, 1}, {1, 1, 1}\n"
                       "@3 = add(@1, @2)" + conv_out +
                       "@4 = batch_norm_inference(@3, s, b, m, v)" + conv_out + "@5 = @return(@4)\n";
    program p = run_and_check(text, {simplify_reshapes{}, fold_batch_norm{}});
    EXPECT_EQ(count_ops(p, "batch_norm_inference"), 0u);
    EXPECT_EQ(count_ops(p, "mul"), 0u);
    EXPECT_EQ(count_ops(p, "add"), 1u);
}

TEST(fold_batch_norm, after_gemm_and_dot) {
    std::string head = "module: \"main\"\na = @param:a -> " + shape_text({2, 3}) + "\n" + literal_line("w", {3, 4}) +
                       bn_params(4);
    const std::string out = " -> " + shape_text({2, 4}) + "\n";
    program g = fold(head + "@1 = gemm[alpha=0.5](a, w)" + out + "@2 = batch_norm_inference(@1, s, b, m, v)" + out +
                     "@3 = @return(@2)\n");
    EXPECT_EQ(count_instructions(g), 1u);   // one gemm with the shift as C
    program d = fold(head + "@1 = dot(a, w)" + out + "@2 = batch_norm_inference(@1, s, b, m, v)" + out +
                     "@3 = @return(@2)\n");
    EXPECT_EQ(count_ops(d, "batch_norm_inference"), 0u);
    EXPECT_EQ(count_ops(d, "mul"), 0u);
}

TEST(fold_batch_norm, declines_where_nothing_takes_the_scale) {
    // After a relu; with a computed variance; after a convolution whose result is also returned.
    program relu = fold(conv_head + "@2 = relu(@1)" + conv_out + "@3 = batch_norm_inference(@2, s, b, m, v)" +
                        conv_out + "@4 = @return(@3)\n");
    EXPECT_EQ(count_ops(relu, "batch_norm_inference"), 1u);
    program var = fold(conv_head + "@2 = abs(v) -> " + shape_text({2}) + "\n" +
                       "@3 = batch_norm_inference(@1, s, b, m, @2)" + conv_out + "@4 = @return(@3)\n");
    EXPECT_EQ(count_ops(var, "batch_norm_inference"), 1u);
    program twice = fold(conv_head + "@2 = batch_norm_inference(@1, s, b, m, v)" + conv_out + "@3 = @return(@1, @2)\n");
    EXPECT_EQ(count_ops(twice, "batch_norm_inference"), 1u);
}

TEST(fold_batch_norm, declines_after_a_batched_dot) {
    // A dot's scale folds along its last dim; the batch norm's channels are dim 1 of [2, 4, 5].
    std::string text = "module: \"main\"\na = @param:a -> " + shape_text({2, 4, 3}) + "\n" +
                       literal_line("w", {3, 5}) + bn_params(4) + "@1 = dot(a, w) -> " + shape_text({2, 4, 5}) +
                       "\n@2 = batch_norm_inference(@1, s, b, m, v) -> " + shape_text({2, 4, 5}) +
                       "\n@3 = @return(@2)\n";
    EXPECT_EQ(count_ops(fold(text), "batch_norm_inference"), 1u);
}

}  // namespace
}  // namespace kiln
