// recognize_patterns on layer norm and RMS norm written out: each form becomes one op with the
// same results on random inputs; wrong axes, wrong constants and shared intermediates are left.
#include <gtest/gtest.h>

#include "pass_check.hpp"
#include "passes/recognize/recognize_patterns.hpp"

namespace kiln {
namespace {

#define X "float_type, {2, 3, 8}, {24, 8, 1}"
#define R "float_type, {2, 3, 1}, {3, 1, 1}"
#define V "float_type, {8}, {1}"
#define S "float_type, {}, {}"

program recognize(const std::string& body) {
    return run_and_check("module: \"main\"\nx = @param:x -> " X "\n" + body, {recognize_patterns{}});
}

// The textbook form with pow, div, scale and bias (what torch exports before opset 17).
const std::string full_layernorm =
    "s = @param:s -> " V "\n"
    "b = @param:b -> " V "\n"
    "@0 = reduce_mean[axes={-1},keepdims=true](x) -> " R "\n"
    "@1 = sub(x, @0) -> " X "\n"
    "@2 = @literal{2.0} -> " S "\n"
    "@3 = pow(@1, @2) -> " X "\n"
    "@4 = reduce_mean[axes={-1},keepdims=true](@3) -> " R "\n"
    "@5 = @literal{1e-05} -> " S "\n"
    "@6 = add(@4, @5) -> " R "\n"
    "@7 = sqrt(@6) -> " R "\n"
    "@8 = div(@1, @7) -> " X "\n"
    "@9 = mul(@8, s) -> " X "\n"
    "@10 = add(@9, b) -> " X "\n";

TEST(recognize_layernorm, scale_and_bias_fold_into_one_op) {
    program p = recognize(full_layernorm + "@11 = @return(@10)\n");
    EXPECT_EQ(count_ops(p, "layernorm"), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
    auto ln = p.main().get_return()->inputs()[0];
    EXPECT_EQ(ln->inputs().size(), 3u);
    EXPECT_EQ(ln->get_operator().attributes().at("axis").as_int(), 2);
    EXPECT_FLOAT_EQ(static_cast<float>(ln->get_operator().attributes().at("epsilon").as_float()), 1e-5f);
}

TEST(recognize_layernorm, rsqrt_and_self_product_without_scale_or_bias) {
    program p = recognize(
        "@0 = reduce_mean[axes={2},keepdims=true](x) -> " R "\n"
        "@1 = sub(x, @0) -> " X "\n"
        "@2 = mul(@1, @1) -> " X "\n"
        "@3 = reduce_mean[axes={-1},keepdims=true](@2) -> " R "\n"
        "@4 = @literal{0.001} -> " S "\n"
        "@5 = add(@4, @3) -> " R "\n"
        "@6 = rsqrt(@5) -> " R "\n"
        "@7 = mul(@6, @1) -> " X "\n"
        "@8 = @return(@7)\n");
    EXPECT_EQ(count_ops(p, "layernorm"), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
}

TEST(recognize_layernorm, two_trailing_axes_and_bias_without_scale) {
    program p = recognize(
        "b = @param:b -> float_type, {3, 8}, {8, 1}\n"
        "@0 = reduce_mean[axes={1, 2},keepdims=true](x) -> float_type, {2, 1, 1}, {1, 1, 1}\n"
        "@1 = sub(x, @0) -> " X "\n"
        "@2 = mul(@1, @1) -> " X "\n"
        "@3 = reduce_mean[axes={-2, -1},keepdims=true](@2) -> float_type, {2, 1, 1}, {1, 1, 1}\n"
        "@4 = @literal{1e-05} -> " S "\n"
        "@5 = add(@3, @4) -> float_type, {2, 1, 1}, {1, 1, 1}\n"
        "@6 = sqrt(@5) -> float_type, {2, 1, 1}, {1, 1, 1}\n"
        "@7 = recip(@6) -> float_type, {2, 1, 1}, {1, 1, 1}\n"
        "@8 = mul(@1, @7) -> " X "\n"
        "@9 = add(b, @8) -> " X "\n"
        "@10 = @return(@9)\n");
    EXPECT_EQ(count_ops(p, "layernorm"), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
    auto ln = p.main().get_return()->inputs()[0];
    EXPECT_EQ(ln->get_operator().attributes().at("axis").as_int(), 1);
}

TEST(recognize_layernorm, variance_by_sqdiff) {
    program p = recognize(
        "@0 = reduce_mean[axes={-1},keepdims=true](x) -> " R "\n"
        "@1 = sqdiff(@0, x) -> " X "\n"
        "@2 = reduce_mean[axes={-1},keepdims=true](@1) -> " R "\n"
        "@3 = sub(x, @0) -> " X "\n"
        "@4 = @literal{1e-05} -> " S "\n"
        "@5 = add(@2, @4) -> " R "\n"
        "@6 = rsqrt(@5) -> " R "\n"
        "@7 = mul(@3, @6) -> " X "\n"
        "@8 = @return(@7)\n");
    EXPECT_EQ(count_ops(p, "layernorm"), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
}

// Normalizing over a middle axis is not what layernorm computes (it normalizes axis..end).
TEST(recognize_layernorm, declines_a_non_trailing_axis) {
    program p = recognize(
        "@0 = reduce_mean[axes={1},keepdims=true](x) -> float_type, {2, 1, 8}, {8, 8, 1}\n"
        "@1 = sub(x, @0) -> " X "\n"
        "@2 = mul(@1, @1) -> " X "\n"
        "@3 = reduce_mean[axes={1},keepdims=true](@2) -> float_type, {2, 1, 8}, {8, 8, 1}\n"
        "@4 = @literal{1e-05} -> " S "\n"
        "@5 = add(@3, @4) -> float_type, {2, 1, 8}, {8, 8, 1}\n"
        "@6 = sqrt(@5) -> float_type, {2, 1, 8}, {8, 8, 1}\n"
        "@7 = div(@1, @6) -> " X "\n"
        "@8 = @return(@7)\n");
    EXPECT_EQ(count_ops(p, "layernorm"), 0u);
    EXPECT_EQ(count_ops(p, "rms_norm"), 0u);
    EXPECT_EQ(count_ops(p, "reduce_mean"), 2u);
}

TEST(recognize_layernorm, declines_other_powers) {
    std::string text = full_layernorm + "@11 = @return(@10)\n";
    text.replace(text.find("@literal{2.0}"), 13, "@literal{3.0}");
    program p = recognize(text);
    EXPECT_EQ(count_ops(p, "layernorm"), 0u);
    EXPECT_EQ(count_ops(p, "pow"), 1u);
}

// The centered x is also returned: recognizing would compute the mean and the subtraction twice
// (once for that output, once inside layernorm), so the pattern is left as it is.
TEST(recognize_layernorm, declines_when_an_intermediate_has_another_user) {
    std::string text = full_layernorm + "@11 = @return(@10, @1)\n";
    program p = recognize(text);
    EXPECT_EQ(count_ops(p, "layernorm"), 0u);
    EXPECT_EQ(count_ops(p, "sub"), 1u);
}

TEST(recognize_layernorm, rms_norm_with_scale) {
    program p = recognize(
        "s = @param:s -> " V "\n"
        "@0 = @literal{2.0} -> " S "\n"
        "@1 = pow(x, @0) -> " X "\n"
        "@2 = reduce_mean[axes={-1},keepdims=true](@1) -> " R "\n"
        "@3 = @literal{1e-06} -> " S "\n"
        "@4 = add(@2, @3) -> " R "\n"
        "@5 = rsqrt(@4) -> " R "\n"
        "@6 = mul(x, @5) -> " X "\n"
        "@7 = mul(s, @6) -> " X "\n"
        "@8 = @return(@7)\n");
    EXPECT_EQ(count_ops(p, "rms_norm"), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
}

// Only a scale of the normalized shape folds: a scale that broadcasts x up to a larger shape
// would change the op's output shape.
TEST(recognize_layernorm, keeps_a_scale_that_broadcasts_x_up) {
    program p = recognize(
        "s = @param:s -> float_type, {4, 2, 3, 8}, {48, 24, 8, 1}\n"
        "@0 = @literal{2.0} -> " S "\n"
        "@1 = pow(x, @0) -> " X "\n"
        "@2 = reduce_mean[axes={-1},keepdims=true](@1) -> " R "\n"
        "@3 = @literal{1e-06} -> " S "\n"
        "@4 = add(@2, @3) -> " R "\n"
        "@5 = sqrt(@4) -> " R "\n"
        "@6 = div(x, @5) -> " X "\n"
        "@7 = mul(s, @6) -> float_type, {4, 2, 3, 8}, {48, 24, 8, 1}\n"
        "@8 = @return(@7)\n");
    EXPECT_EQ(count_ops(p, "rms_norm"), 1u);
    EXPECT_EQ(count_ops(p, "mul"), 1u);
}

}  // namespace
}  // namespace kiln
