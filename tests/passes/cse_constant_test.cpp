// Common subexpressions merge (literals by value too, side effects never); constants fold once,
// shape arithmetic included, and views of constants stay views.
#include <gtest/gtest.h>

#include "pass_check.hpp"
#include "passes/simplify/common_subexpression.hpp"
#include "passes/simplify/propagate_constant.hpp"

namespace kiln {
namespace {

TEST(cse, merges_identical_instructions_and_literals) {
    program p = run_and_check(
        "module: \"main\"\n"
        "x = @param:x -> float_type, {2, 3}, {3, 1}\n"
        "@0 = @literal{1.5} -> float_type, {1}, {1}\n"
        "@1 = @literal{1.5} -> float_type, {1}, {1}\n"
        "@2 = add(x, @0) -> float_type, {2, 3}, {3, 1}\n"
        "@3 = add(x, @1) -> float_type, {2, 3}, {3, 1}\n"
        "@4 = relu(@2) -> float_type, {2, 3}, {3, 1}\n"
        "@5 = relu(@3) -> float_type, {2, 3}, {3, 1}\n"
        "@6 = mul(@4, @5) -> float_type, {2, 3}, {3, 1}\n"
        "@7 = @return(@6)\n",
        {eliminate_common_subexpression{}});
    EXPECT_EQ(count_ops(p, "add"), 1u);
    EXPECT_EQ(count_ops(p, "relu"), 1u);
    EXPECT_EQ(count_ops(p, "@literal"), 1u);
}

// String literals merge by their strings, not by the bytes of their std::string objects.
TEST(cse, merges_equal_string_literals_only) {
    program p = run_and_check(
        "module: \"main\"\n"
        "x = @param:x -> string_type, {2}, {1}\n"
        "@0 = @literal{\"a\", \"b\"} -> string_type, {2}, {1}\n"
        "@1 = @literal{\"a\", \"b\"} -> string_type, {2}, {1}\n"
        "@2 = @literal{\"a\", \"c\"} -> string_type, {2}, {1}\n"
        "@3 = string_concat(x, @0) -> string_type, {2}, {1}\n"
        "@4 = string_concat(x, @1) -> string_type, {2}, {1}\n"
        "@5 = string_concat(x, @2) -> string_type, {2}, {1}\n"
        "@6 = @return(@3, @4, @5)\n",
        {eliminate_common_subexpression{}});
    EXPECT_EQ(count_ops(p, "@literal"), 2u);
    EXPECT_EQ(count_ops(p, "string_concat"), 2u);
}

TEST(cse, keeps_different_attributes_and_values_apart) {
    program p = run_and_check(
        "module: \"main\"\n"
        "x = @param:x -> float_type, {2, 3}, {3, 1}\n"
        "@0 = @literal{1.5} -> float_type, {1}, {1}\n"
        "@1 = @literal{2.5} -> float_type, {1}, {1}\n"
        "@2 = add(x, @0) -> float_type, {2, 3}, {3, 1}\n"
        "@3 = add(x, @1) -> float_type, {2, 3}, {3, 1}\n"
        "@4 = leaky_relu[alpha=0.1](@2) -> float_type, {2, 3}, {3, 1}\n"
        "@5 = leaky_relu[alpha=0.2](@2) -> float_type, {2, 3}, {3, 1}\n"
        "@6 = @return(@3, @4, @5)\n",
        {eliminate_common_subexpression{}});
    EXPECT_EQ(count_ops(p, "add"), 2u);
    EXPECT_EQ(count_ops(p, "leaky_relu"), 2u);
}

TEST(propagate_constant, folds_chains_once_and_keeps_views) {
    program p = run_and_check(
        "module: \"main\"\n"
        "x = @param:x -> float_type, {2, 3}, {3, 1}\n"
        "@0 = @literal{1.0, 2.0, 3.0, 4.0, 5.0, 6.0} -> float_type, {3, 2}, {2, 1}\n"
        "@1 = exp(@0) -> float_type, {3, 2}, {2, 1}\n"
        "@2 = neg(@1) -> float_type, {3, 2}, {2, 1}\n"
        "@3 = transpose[permutation={1, 0}](@2) -> float_type, {2, 3}, {1, 2}\n"
        "@4 = add(x, @3) -> float_type, {2, 3}, {3, 1}\n"
        "@5 = @return(@4)\n",
        {propagate_constant{}});
    EXPECT_EQ(count_ops(p, "exp"), 0u);
    EXPECT_EQ(count_ops(p, "neg"), 0u);
    EXPECT_EQ(count_ops(p, "transpose"), 1u);   // a view of the folded literal
}

TEST(propagate_constant, folds_shape_arithmetic_of_static_inputs) {
    program p = run_and_check(
        "module: \"main\"\n"
        "x = @param:x -> float_type, {2, 3, 4}, {12, 4, 1}\n"
        "@0 = shape_of[start=1](x) -> int64_type, {2}, {1}\n"
        "@1 = @literal{-1} -> int64_type, {1}, {1}\n"
        "@2 = reduce_prod[axes={0},keepdims=true](@0) -> int64_type, {1}, {1}\n"
        "@3 = concat[axis=0](@1, @2) -> int64_type, {2}, {1}\n"
        "@4 = @return(@3)\n",
        {propagate_constant{}});
    EXPECT_EQ(count_ops(p, "shape_of"), 0u);
    EXPECT_EQ(count_ops(p, "concat"), 0u);
}

TEST(propagate_constant, leaves_non_constant_and_dynamic_alone) {
    program p = run_and_check(
        "module: \"main\"\n"
        "x = @param:x -> float_type, {2}, {1}\n"
        "@0 = @literal{1.0, 2.0} -> float_type, {2}, {1}\n"
        "@1 = add(x, @0) -> float_type, {2}, {1}\n"
        "@2 = @return(@1)\n",
        {propagate_constant{}});
    EXPECT_EQ(count_ops(p, "add"), 1u);
}

}  // namespace
}  // namespace kiln
