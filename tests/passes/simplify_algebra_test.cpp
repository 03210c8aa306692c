// simplify_algebra: each rule fires where it holds (results checked on random inputs before and
// after) and declines where it would change results or shapes.
#include "passes/simplify/simplify_algebra.hpp"

#include <gtest/gtest.h>

#include "ir_text.hpp"
#include "pass_check.hpp"

namespace kiln {
namespace {

using ir_text::literal_line;
using ir_text::shape_text;

std::string prog(const std::string& body) { return "module: \"main\"\n" + body; }

program simplify(const std::string& body) { return run_and_check(prog(body), {simplify_algebra{}}); }

const std::string x23 = "x = @param:x -> float_type, {2, 3}, {3, 1}\n";
const std::string f23 = " -> float_type, {2, 3}, {3, 1}\n";

// "@1 = OP(x, @0)" on a 2x3 float x and a scalar literal holding v.
std::string with_scalar(const std::string& op, const std::string& v, bool swap = false) {
    return x23 + "@0 = @literal{" + v + "} -> float_type, {1}, {1}\n@1 = " + op + (swap ? "(@0, x)" : "(x, @0)") + f23 +
           "@2 = @return(@1)\n";
}

TEST(simplify_algebra, identities_fire) {
    EXPECT_EQ(count_instructions(simplify(with_scalar("add", "0.0", true))), 0u);
    EXPECT_EQ(count_instructions(simplify(with_scalar("sub", "0.0"))), 0u);
    EXPECT_EQ(count_instructions(simplify(with_scalar("mul", "1.0", true))), 0u);
    EXPECT_EQ(count_instructions(simplify(with_scalar("div", "1.0"))), 0u);
    EXPECT_EQ(count_instructions(simplify(with_scalar("pow", "1.0"))), 0u);
}

TEST(simplify_algebra, identities_decline_on_the_wrong_side_or_value) {
    EXPECT_EQ(count_ops(simplify(with_scalar("sub", "0.0", true)), "sub"), 1u);   // 0 - x
    EXPECT_EQ(count_ops(simplify(with_scalar("div", "1.0", true)), "div"), 1u);   // 1 / x
    EXPECT_EQ(count_ops(simplify(with_scalar("add", "0.5")), "add"), 1u);
    EXPECT_EQ(count_ops(simplify(with_scalar("pow", "3.0")), "pow"), 1u);
}

TEST(simplify_algebra, identity_declines_when_the_constant_broadcasts_x_up) {
    program p = simplify("x = @param:x -> float_type, {3}, {1}\n"
                         "@0 = @literal{0.0, 0.0, 0.0, 0.0, 0.0, 0.0} -> float_type, {2, 3}, {3, 1}\n"
                         "@1 = add(x, @0)" + f23 + "@2 = @return(@1)\n");
    EXPECT_EQ(count_ops(p, "add"), 1u);
}

TEST(simplify_algebra, identity_of_a_view_rewires_pointwise_users) {
    // x * 1 on a transposed x: the mul's user reads the transpose directly; @return keeps layout.
    program p = simplify("x = @param:x -> float_type, {3, 2}, {2, 1}\n"
                         "@0 = @literal{1.0} -> float_type, {1}, {1}\n"
                         "@1 = transpose[permutation={1, 0}](x) -> float_type, {2, 3}, {1, 2}\n"
                         "@2 = mul(@1, @0)" + f23 + "@3 = exp(@2)" + f23 + "@4 = @return(@3)\n");
    EXPECT_EQ(count_ops(p, "mul"), 0u);
}

TEST(simplify_algebra, mul_by_zero_folds_for_integers_only) {
    std::string ints = "x = @param:x -> int32_type, {2, 3}, {3, 1}\n"
                       "@0 = @literal{0} -> int32_type, {1}, {1}\n"
                       "@1 = mul(@0, x) -> int32_type, {2, 3}, {3, 1}\n"
                       "@2 = @return(@1)\n";
    EXPECT_EQ(count_instructions(simplify(ints)), 0u);   // a literal zero
    // NaN * 0 and inf * 0 are NaN: a float x * 0 stays.
    EXPECT_EQ(count_ops(simplify(with_scalar("mul", "0.0")), "mul"), 1u);
}

TEST(simplify_algebra, double_negation_and_identity_op) {
    program p = simplify(x23 + "@0 = neg(x)" + f23 + "@1 = neg(@0)" + f23 + "@2 = identity(@1)" + f23 +
                         "@3 = neg(x)" + f23 + "@4 = @return(@2, @3)\n");
    EXPECT_EQ(count_ops(p, "neg"), 1u);   // the single neg stays
    EXPECT_EQ(count_ops(p, "identity"), 0u);
}

TEST(simplify_algebra, subtracting_or_adding_a_negation) {
    std::string y = "y = @param:y -> float_type, {2, 3}, {3, 1}\n";
    program p = simplify(x23 + y + "@0 = neg(y)" + f23 + "@1 = sub(x, @0)" + f23 + "@2 = neg(x)" + f23 +
                         "@3 = add(@2, y)" + f23 + "@4 = @return(@1, @3)\n");
    EXPECT_EQ(count_ops(p, "neg"), 0u);
    EXPECT_EQ(count_ops(p, "add"), 1u);
    EXPECT_EQ(count_ops(p, "sub"), 1u);
}

TEST(simplify_algebra, pow_two_and_half) {
    program two = simplify(with_scalar("pow", "2.0"));
    EXPECT_EQ(count_ops(two, "pow"), 0u);
    EXPECT_EQ(count_ops(two, "mul"), 1u);
    program half = simplify(with_scalar("pow", "0.5"));
    EXPECT_EQ(count_ops(half, "pow"), 0u);
    EXPECT_EQ(count_ops(half, "sqrt"), 1u);
    program ints = simplify("x = @param:x -> int32_type, {4}, {1}\n@0 = @literal{2} -> int32_type, {1}, {1}\n"
                            "@1 = pow(x, @0) -> int32_type, {4}, {1}\n@2 = @return(@1)\n");
    EXPECT_EQ(count_ops(ints, "mul"), 1u);
}

TEST(simplify_algebra, pow_declines_when_the_exponent_broadcasts_x_up) {
    program p = simplify("x = @param:x -> float_type, {3}, {1}\n"
                         "@0 = @literal{2.0, 2.0, 2.0, 2.0, 2.0, 2.0} -> float_type, {2, 3}, {3, 1}\n"
                         "@1 = pow(x, @0)" + f23 + "@2 = @return(@1)\n");
    EXPECT_EQ(count_ops(p, "pow"), 1u);
}

TEST(simplify_algebra, division_by_a_power_of_two_becomes_a_product) {
    program p = simplify(x23 + "@0 = @literal{4.0, -0.25, 0.5} -> float_type, {3}, {1}\n@1 = div(x, @0)" + f23 +
                         "@2 = @return(@1)\n");
    EXPECT_EQ(count_ops(p, "div"), 0u);
    EXPECT_EQ(count_ops(p, "mul"), 1u);
}

TEST(simplify_algebra, division_declines_when_the_reciprocal_is_inexact) {
    EXPECT_EQ(count_ops(simplify(with_scalar("div", "3.0")), "div"), 1u);
    // 2^-149 (float's smallest subnormal): its reciprocal 2^149 overflows float.
    EXPECT_EQ(count_ops(simplify(with_scalar("div", "1.4012984643248171e-45")), "div"), 1u);
    // Integer division truncates: x / 2 is not x * 0.5.
    EXPECT_EQ(count_ops(simplify("x = @param:x -> int32_type, {4}, {1}\n@0 = @literal{2} -> int32_type, {1}, {1}\n"
                                 "@1 = div(x, @0) -> int32_type, {4}, {1}\n@2 = @return(@1)\n"),
                        "div"),
              1u);
}

TEST(simplify_algebra, constants_reassociate) {
    program p = simplify(x23 + "@0 = @literal{2.0} -> float_type, {1}, {1}\n"
                               "@1 = @literal{0.5, 1.5, 2.5} -> float_type, {3}, {1}\n"
                               "@2 = mul(@0, x)" + f23 + "@3 = mul(@2, @1)" + f23 +
                         "@4 = add(@3, @0)" + f23 + "@5 = add(@1, @4)" + f23 + "@6 = @return(@5)\n");
    EXPECT_EQ(count_ops(p, "mul"), 1u);
    EXPECT_EQ(count_ops(p, "add"), 1u);
}

TEST(simplify_algebra, reassociation_declines_when_the_inner_result_is_used_twice) {
    program p = simplify(x23 + "@0 = @literal{2.0} -> float_type, {1}, {1}\n"
                               "@1 = mul(x, @0)" + f23 + "@2 = mul(@1, @0)" + f23 + "@3 = @return(@1, @2)\n");
    EXPECT_EQ(count_ops(p, "mul"), 2u);
}

TEST(simplify_algebra, redundant_converts) {
    program p = simplify("x = @param:x -> half_type, {4}, {1}\n"
                         "i = @param:i -> int8_type, {4}, {1}\n"
                         "@0 = convert[target_type=float](x) -> float_type, {4}, {1}\n"
                         "@1 = convert[target_type=double](@0) -> double_type, {4}, {1}\n"
                         "@2 = convert[target_type=half](@0) -> half_type, {4}, {1}\n"
                         "@3 = convert[target_type=int32](i) -> int32_type, {4}, {1}\n"
                         "@4 = convert[target_type=float](@3) -> float_type, {4}, {1}\n"
                         "@5 = convert[target_type=float](@4) -> float_type, {4}, {1}\n"
                         "@6 = @return(@1, @2, @5)\n");
    // half -> float -> double is half -> double; half -> float -> half is x; int8 -> int32 -> float
    // is int8 -> float; float -> float goes.
    EXPECT_EQ(count_ops(p, "convert"), 2u);
}

TEST(simplify_algebra, converts_that_round_stay) {
    program p = simplify("x = @param:x -> float_type, {4}, {1}\n"
                         "i = @param:i -> int32_type, {4}, {1}\n"
                         "@0 = convert[target_type=half](x) -> half_type, {4}, {1}\n"
                         "@1 = convert[target_type=float](@0) -> float_type, {4}, {1}\n"
                         "@2 = convert[target_type=int8](i) -> int8_type, {4}, {1}\n"
                         "@3 = convert[target_type=int32](@2) -> int32_type, {4}, {1}\n"
                         "@4 = convert[target_type=float](i) -> float_type, {4}, {1}\n"
                         "@5 = convert[target_type=half](@4) -> half_type, {4}, {1}\n"
                         "@6 = @return(@1, @3, @5)\n");
    EXPECT_EQ(count_ops(p, "convert"), 6u);
}

}  // namespace
}  // namespace kiln
