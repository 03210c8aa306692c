// The pattern matcher: patterns bind, commute, check single use and constants; apply_rules
// rewrites until nothing applies and catches rule sets that never stop.
#include "passes/matcher.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/text_parser.hpp"
#include "../core/expect_error.hpp"
#include "pass_check.hpp"

namespace kiln {
namespace {

const char* mul_chain =
    "module: \"main\"\n"
    "x = @param:x -> float_type, {2, 3}, {3, 1}\n"
    "@0 = @literal{2.0} -> float_type, {1}, {1}\n"
    "@1 = @literal{3.0} -> float_type, {1}, {1}\n"
    "@2 = mul(@0, x) -> float_type, {2, 3}, {3, 1}\n"
    "@3 = mul(@2, @1) -> float_type, {2, 3}, {3, 1}\n"
    "@4 = @return(@3)\n";

instruction_ref last_before_return(module& m) { return std::prev(m.get_return()); }

// (x * c1) * c2 -> x * (c1 * c2)
rule mul_reassoc() {
    return {"mul_reassoc",
            match::op("mul", match::op("mul", match::any("x"), match::constant("c1")).used_once(),
                      match::constant("c2")),
            [](rewriter& r, const bindings& b) {
                r.replace(r.add("mul", {b["x"], r.add("mul", {b["c1"], b["c2"]})}));
                return true;
            }};
}

TEST(matcher, binds_commutative_inputs_in_either_order) {
    program p = parse_text(mul_chain);
    bindings b;
    auto root = last_before_return(p.main());
    auto pat = match::op("mul", match::op("mul", match::any("x"), match::constant("c1")), match::constant("c2"));
    ASSERT_TRUE(pat(root, b));
    EXPECT_TRUE(b["x"]->is_param());
    EXPECT_EQ(literal_values(*b["c1"]), std::vector<double>{2.0});
    EXPECT_EQ(literal_values(*b["c2"]), std::vector<double>{3.0});
}

TEST(matcher, failed_match_leaves_bindings_unchanged) {
    program p = parse_text(mul_chain);
    bindings b;
    auto root = last_before_return(p.main());
    EXPECT_FALSE(match::op("mul", match::any("a"), match::op("add"))(root, b));
    EXPECT_FALSE(b.has("a"));
    EXPECT_THROW(b["a"], error);
}

TEST(matcher, pattern_naming_an_unregistered_op_is_an_error_when_built) {
    expect_error([] { match::op("mull", match::any("x"), match::any("y")); }, "pattern names op 'mull'");
}

TEST(matcher, same_name_must_bind_the_same_instruction) {
    program p = parse_text(
        "module: \"main\"\n"
        "x = @param:x -> float_type, {2}, {1}\n"
        "y = @param:y -> float_type, {2}, {1}\n"
        "@0 = add(x, x) -> float_type, {2}, {1}\n"
        "@1 = add(x, y) -> float_type, {2}, {1}\n"
        "@2 = @return(@0, @1)\n");
    auto twice = match::op("add", match::any("a"), match::any("a"));
    bindings b1, b2;
    auto it = p.main().begin();
    std::advance(it, 2);
    EXPECT_TRUE(twice(it, b1));
    EXPECT_FALSE(twice(std::next(it), b2));
    EXPECT_FALSE(match::any().used_once()(p.main().begin(), b2));   // x feeds three inputs
}

TEST(matcher, scalar_and_used_once) {
    program p = parse_text(mul_chain);
    auto root = last_before_return(p.main());
    bindings b;
    EXPECT_TRUE(match::op("mul", match::any(), match::scalar(3.0))(root, b));
    EXPECT_FALSE(match::op("mul", match::any(), match::scalar(2.0))(root, b));
    EXPECT_TRUE(match::any().used_once()(root->inputs()[0], b));   // the inner mul

}

TEST(matcher, rules_rewrite_and_results_hold) {
    program after = run_and_check(mul_chain, {pass("reassoc", [](module& m) { apply_rules(m, std::vector{mul_reassoc()}); })});
    // x * (2 * 3): the outer mul now takes x directly.
    auto root = std::prev(after.main().get_return());
    EXPECT_TRUE(root->inputs()[0]->is_param());
}

TEST(matcher, worklist_revisits_new_instructions) {
    // ((x * 2) * 3) * 4 folds in two rewrites: the second matches what the first created.
    std::string text =
        "module: \"main\"\n"
        "x = @param:x -> float_type, {4}, {1}\n"
        "@0 = @literal{2.0} -> float_type, {1}, {1}\n"
        "@1 = mul(x, @0) -> float_type, {4}, {1}\n"
        "@2 = mul(@1, @0) -> float_type, {4}, {1}\n"
        "@3 = mul(@2, @0) -> float_type, {4}, {1}\n"
        "@4 = @return(@3)\n";
    std::size_t n = 0;
    program after = run_and_check(text, {pass("reassoc", [&](module& m) { n = apply_rules(m, std::vector{mul_reassoc()}); })});
    EXPECT_EQ(n, 2u);
    auto root = std::prev(after.main().get_return());
    EXPECT_TRUE(root->inputs()[0]->is_param());
}

TEST(matcher, rules_that_never_stop_are_an_error) {
    program p = parse_text(mul_chain);
    // Replacing each mul by a fresh copy of itself never reaches a fixpoint.
    rule grow{"grow", match::op("mul"), [](rewriter& r, const bindings&) {
                  auto m = r.root();
                  auto copy = r.add(m->get_operator(), m->inputs());
                  r.replace(copy);
                  return true;
              }};
    try {
        apply_rules(p.main(), std::vector{grow});
        FAIL() << "expected an error";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("do not terminate (last applied: 'grow')"), std::string::npos) << e.what();
    }
}

TEST(matcher, replacing_with_another_shape_is_an_error) {
    program p = parse_text(mul_chain);
    rule bad{"bad", match::op("mul", match::constant(), match::any("x")),
             [](rewriter& r, const bindings& b) {
                 r.replace(b["x"]->inputs().empty() ? r.add_scalar(dtype::float32, 1) : b["x"]);
                 return true;
             }};
    EXPECT_THROW(apply_rules(p.main(), std::vector{bad}), error);
}

}  // namespace
}  // namespace kiln
