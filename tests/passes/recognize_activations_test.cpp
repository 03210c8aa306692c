// recognize_patterns on GELU (erf and tanh forms), SiLU and softmax written out: every ordering
// exporters produce becomes one op with the same results; wrong constants, wrong axes and shared
// intermediates are left as they are.
#include <gtest/gtest.h>

#include "pass_check.hpp"
#include "passes/recognize/recognize_patterns.hpp"

namespace kiln {
namespace {

#define X "float_type, {2, 8}, {8, 1}"
#define R "float_type, {2, 1}, {1, 1}"
#define S "float_type, {}, {}"

program recognize(const std::string& body) {
    return run_and_check("module: \"main\"\nx = @param:x -> " X "\n" + body, {recognize_patterns{}});
}

std::string gelu_attr(const program& p) {
    for (const auto& ins : p.main())
        if (ins.name() == "gelu") return ins.get_operator().attributes().at("approximate").as_string();
    return "";
}

// PyTorch: (x * (erf(x / 1.4142135) + 1)) * 0.5.
const std::string gelu_torch =
    "@0 = @literal{1.4142135} -> " S "\n"
    "@1 = div(x, @0) -> " X "\n"
    "@2 = erf(@1) -> " X "\n"
    "@3 = @literal{1.0} -> " S "\n"
    "@4 = add(@2, @3) -> " X "\n"
    "@5 = mul(x, @4) -> " X "\n"
    "@6 = @literal{0.5} -> " S "\n"
    "@7 = mul(@5, @6) -> " X "\n";

TEST(recognize_gelu, erf_form_as_torch_exports_it) {
    program p = recognize(gelu_torch + "@8 = @return(@7)\n");
    EXPECT_EQ(count_ops(p, "gelu"), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
    EXPECT_EQ(gelu_attr(p), "none");
}

// TensorFlow / hand-written: (0.5 * x) * (1 + erf(0.70710677 * x)).
TEST(recognize_gelu, erf_form_with_half_first_and_mul_by_inverse_sqrt2) {
    program p = recognize(
        "@0 = @literal{0.70710677} -> " S "\n"
        "@1 = mul(@0, x) -> " X "\n"
        "@2 = erf(@1) -> " X "\n"
        "@3 = @literal{1.0} -> " S "\n"
        "@4 = add(@3, @2) -> " X "\n"
        "@5 = @literal{0.5} -> " S "\n"
        "@6 = mul(@5, x) -> " X "\n"
        "@7 = mul(@6, @4) -> " X "\n"
        "@8 = @return(@7)\n");
    EXPECT_EQ(count_ops(p, "gelu"), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
}

// x * (0.5 * (1 + erf(x / sqrt 2))).
TEST(recognize_gelu, erf_form_with_half_on_the_sum) {
    program p = recognize(
        "@0 = @literal{1.4142135} -> " S "\n"
        "@1 = div(x, @0) -> " X "\n"
        "@2 = erf(@1) -> " X "\n"
        "@3 = @literal{1.0} -> " S "\n"
        "@4 = add(@2, @3) -> " X "\n"
        "@5 = @literal{0.5} -> " S "\n"
        "@6 = mul(@4, @5) -> " X "\n"
        "@7 = mul(x, @6) -> " X "\n"
        "@8 = @return(@7)\n");
    EXPECT_EQ(count_ops(p, "gelu"), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
}

// PyTorch's gelu(approximate='tanh'): 0.5 * (x * (1 + tanh(0.7978846 * (x + 0.044715 * (x * (x * x)))))).
const std::string gelu_tanh_torch =
    "@0 = mul(x, x) -> " X "\n"
    "@1 = mul(x, @0) -> " X "\n"
    "@2 = @literal{0.044715} -> " S "\n"
    "@3 = mul(@2, @1) -> " X "\n"
    "@4 = add(x, @3) -> " X "\n"
    "@5 = @literal{0.7978846} -> " S "\n"
    "@6 = mul(@5, @4) -> " X "\n"
    "@7 = tanh(@6) -> " X "\n"
    "@8 = @literal{1.0} -> " S "\n"
    "@9 = add(@8, @7) -> " X "\n"
    "@10 = mul(x, @9) -> " X "\n"
    "@11 = @literal{0.5} -> " S "\n"
    "@12 = mul(@11, @10) -> " X "\n";

TEST(recognize_gelu, tanh_form_as_torch_exports_it) {
    program p = recognize(gelu_tanh_torch + "@13 = @return(@12)\n");
    EXPECT_EQ(count_ops(p, "gelu"), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
    EXPECT_EQ(gelu_attr(p), "tanh");
}

TEST(recognize_gelu, tanh_form_with_pow) {
    program p = recognize(
        "@0 = @literal{3.0} -> " S "\n"
        "@1 = pow(x, @0) -> " X "\n"
        "@2 = @literal{0.044715} -> " S "\n"
        "@3 = mul(@1, @2) -> " X "\n"
        "@4 = add(@3, x) -> " X "\n"
        "@5 = @literal{0.7978845608} -> " S "\n"
        "@6 = mul(@4, @5) -> " X "\n"
        "@7 = tanh(@6) -> " X "\n"
        "@8 = @literal{1.0} -> " S "\n"
        "@9 = add(@7, @8) -> " X "\n"
        "@10 = @literal{0.5} -> " S "\n"
        "@11 = mul(x, @10) -> " X "\n"
        "@12 = mul(@11, @9) -> " X "\n"
        "@13 = @return(@12)\n");
    EXPECT_EQ(count_ops(p, "gelu"), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
    EXPECT_EQ(gelu_attr(p), "tanh");
}

// x is a transposed view: the products are standard, x is not; gelu reads it through its strides.
TEST(recognize_gelu, of_a_transposed_view) {
    std::string text = gelu_torch + "@8 = @return(@7)\n";
    program p = run_and_check("module: \"main\"\n"
                              "y = @param:y -> float_type, {8, 2}, {2, 1}\n"
                              "x = transpose[permutation={1, 0}](y) -> float_type, {2, 8}, {1, 2}\n" + text,
                              {recognize_patterns{}});
    EXPECT_EQ(count_ops(p, "gelu"), 1u);
    EXPECT_EQ(count_instructions(p), 2u);
}

// Hugging Face's gelu_fast: 0.5 * x * (1 + tanh(x * 0.7978845608 * (1 + 0.044715 * x * x))).
TEST(recognize_gelu, tanh_form_with_x_factored_out) {
    program p = recognize(
        "@0 = @literal{0.5} -> " S "\n"
        "@1 = mul(@0, x) -> " X "\n"
        "@2 = @literal{0.7978845608} -> " S "\n"
        "@3 = mul(x, @2) -> " X "\n"
        "@4 = @literal{0.044715} -> " S "\n"
        "@5 = mul(@4, x) -> " X "\n"
        "@6 = mul(@5, x) -> " X "\n"
        "@7 = @literal{1.0} -> " S "\n"
        "@8 = add(@7, @6) -> " X "\n"
        "@9 = mul(@3, @8) -> " X "\n"
        "@10 = tanh(@9) -> " X "\n"
        "@11 = add(@10, @7) -> " X "\n"
        "@12 = mul(@1, @11) -> " X "\n"
        "@13 = @return(@12)\n");
    EXPECT_EQ(count_ops(p, "gelu"), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
    EXPECT_EQ(gelu_attr(p), "tanh");
}

TEST(recognize_gelu, declines_constants_that_are_not_gelus) {
    for (auto [from, to] : {std::pair{"1.4142135", "1.5"}, {"0.5}", "0.6}"}, {"@literal{1.0}", "@literal{2.0}"}}) {
        std::string text = gelu_torch + "@8 = @return(@7)\n";
        text.replace(text.find(from), std::string(from).size(), to);
        program p = recognize(text);
        EXPECT_EQ(count_ops(p, "gelu"), 0u) << from << " -> " << to;
        EXPECT_EQ(count_ops(p, "erf"), 1u) << from << " -> " << to;
    }
    std::string text = gelu_tanh_torch + "@13 = @return(@12)\n";
    text.replace(text.find("0.044715"), 8, "0.05");
    program p = recognize(text);
    EXPECT_EQ(count_ops(p, "gelu"), 0u);
}

// The erf result is also returned: gelu would compute erf again inside, so nothing changes.
TEST(recognize_gelu, declines_when_an_intermediate_has_another_user) {
    program p = recognize(gelu_torch + "@8 = @return(@7, @2)\n");
    EXPECT_EQ(count_ops(p, "gelu"), 0u);
    EXPECT_EQ(count_ops(p, "erf"), 1u);
}

TEST(recognize_gelu, declines_when_erf_reads_another_tensor) {
    std::string text = gelu_torch + "@8 = @return(@7)\n";
    text.replace(text.find("div(x, @0)"), 10, "div(y, @0)");
    program p = recognize("y = @param:y -> " X "\n" + text);
    EXPECT_EQ(count_ops(p, "gelu"), 0u);
}

TEST(recognize_silu, plain_and_with_beta) {
    program p = recognize(
        "@0 = sigmoid(x) -> " X "\n"
        "@1 = mul(@0, x) -> " X "\n"
        "@2 = @literal{1.702} -> " S "\n"
        "@3 = mul(x, @2) -> " X "\n"
        "@4 = sigmoid(@3) -> " X "\n"
        "@5 = mul(x, @4) -> " X "\n"
        "@6 = @return(@1, @5)\n");
    EXPECT_EQ(count_ops(p, "silu"), 2u);
    EXPECT_EQ(count_instructions(p), 2u);
    auto beta = p.main().get_return()->inputs()[1]->get_operator().attributes().at("beta").as_float();
    EXPECT_FLOAT_EQ(static_cast<float>(beta), 1.702f);
}

TEST(recognize_silu, declines_sigmoid_of_another_tensor_and_shared_sigmoid) {
    program p = recognize(
        "y = @param:y -> " X "\n"
        "@0 = sigmoid(y) -> " X "\n"
        "@1 = mul(@0, x) -> " X "\n"
        "@2 = sigmoid(x) -> " X "\n"
        "@3 = mul(x, @2) -> " X "\n"
        "@4 = @return(@1, @3, @2)\n");
    EXPECT_EQ(count_ops(p, "silu"), 0u);
    EXPECT_EQ(count_ops(p, "sigmoid"), 2u);
}

TEST(recognize_hard_swish, hard_sigmoid_and_relu6_forms) {
    program p = recognize(
        "@0 = hard_sigmoid[alpha=0.16666667,beta=0.5](x) -> " X "\n"
        "@1 = mul(x, @0) -> " X "\n"
        "@2 = @literal{3.0} -> " S "\n"
        "@3 = add(x, @2) -> " X "\n"
        "@4 = @literal{0.0} -> " S "\n"
        "@5 = @literal{6.0} -> " S "\n"
        "@6 = clip(@3, @4, @5) -> " X "\n"
        "@7 = mul(x, @6) -> " X "\n"
        "@8 = div(@7, @5) -> " X "\n"
        "@9 = @literal{0.16666667} -> " S "\n"
        "@10 = mul(@9, x) -> " X "\n"
        "@11 = add(@2, x) -> " X "\n"
        "@12 = clip(@11, @4, @5) -> " X "\n"
        "@13 = mul(@12, @10) -> " X "\n"
        "@14 = @return(@1, @8, @13)\n");
    EXPECT_EQ(count_ops(p, "hard_swish"), 3u);
    EXPECT_EQ(count_ops(p, "clip"), 0u);
}

// hard_sigmoid's defaults (0.2, 0.5) are not hard swish's gate; clip to 4 is not relu6.
TEST(recognize_hard_swish, declines_other_gates) {
    program p = recognize(
        "@0 = hard_sigmoid(x) -> " X "\n"
        "@1 = mul(x, @0) -> " X "\n"
        "@2 = @literal{3.0} -> " S "\n"
        "@3 = add(x, @2) -> " X "\n"
        "@4 = @literal{0.0} -> " S "\n"
        "@5 = @literal{4.0} -> " S "\n"
        "@6 = clip(@3, @4, @5) -> " X "\n"
        "@7 = mul(x, @6) -> " X "\n"
        "@8 = @literal{6.0} -> " S "\n"
        "@9 = div(@7, @8) -> " X "\n"
        "@10 = @return(@1, @9)\n");
    EXPECT_EQ(count_ops(p, "hard_swish"), 0u);
}

const std::string softmax_shifted =
    "@0 = reduce_max[axes={1},keepdims=true](x) -> " R "\n"
    "@1 = sub(x, @0) -> " X "\n"
    "@2 = exp(@1) -> " X "\n"
    "@3 = reduce_sum[axes={-1},keepdims=true](@2) -> " R "\n"
    "@4 = div(@2, @3) -> " X "\n";

TEST(recognize_softmax, with_and_without_the_max_subtraction) {
    program p = recognize(softmax_shifted +
                          "@5 = exp(x) -> " X "\n"
                          "@6 = reduce_sum[axes={1},keepdims=true](@5) -> " R "\n"
                          "@7 = div(@5, @6) -> " X "\n"
                          "@8 = @return(@4, @7)\n");
    EXPECT_EQ(count_ops(p, "softmax"), 2u);
    EXPECT_EQ(count_instructions(p), 2u);
}

TEST(recognize_softmax, over_a_leading_axis) {
    program p = recognize(
        "@0 = exp(x) -> " X "\n"
        "@1 = reduce_sum[axes={0},keepdims=true](@0) -> float_type, {1, 8}, {8, 1}\n"
        "@2 = div(@0, @1) -> " X "\n"
        "@3 = @return(@2)\n");
    ASSERT_EQ(count_ops(p, "softmax"), 1u);
    EXPECT_EQ(p.main().get_return()->inputs()[0]->get_operator().attributes().at("axis").as_int(), 0);
}

TEST(recognize_softmax, declines_a_shared_exp) {
    program p = recognize(softmax_shifted + "@5 = @return(@4, @2)\n");
    EXPECT_EQ(count_ops(p, "softmax"), 0u);
    EXPECT_EQ(count_ops(p, "exp"), 1u);
}

// exp(x - max) / sum over another axis than the max's is not softmax(x), but it still is
// softmax(x - max) over the sum's axis: that is what the rules make of it.
TEST(recognize_softmax, max_and_sum_over_different_axes) {
    program p = recognize(
        "@0 = reduce_max[axes={1},keepdims=true](x) -> " R "\n"
        "@1 = sub(x, @0) -> " X "\n"
        "@2 = exp(@1) -> " X "\n"
        "@3 = reduce_sum[axes={0},keepdims=true](@2) -> float_type, {1, 8}, {8, 1}\n"
        "@4 = div(@2, @3) -> " X "\n"
        "@5 = @return(@4)\n");
    EXPECT_EQ(count_ops(p, "softmax"), 1u);
    EXPECT_EQ(count_ops(p, "reduce_max"), 1u);
    EXPECT_EQ(count_ops(p, "sub"), 1u);
}

}  // namespace
}  // namespace kiln
