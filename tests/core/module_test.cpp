// module and program: building and editing instructions keeps the user lists right, dead code
// goes, validate catches broken invariants, and evaluate reports bad inputs by name.
#include "core/module.hpp"

#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/eval.hpp"

namespace kiln {
namespace {

using lens = std::vector<std::size_t>;

bool uses(instruction_ref input, instruction_ref user) {
    const auto& outs = input->outputs();
    return std::find(outs.begin(), outs.end(), user) != outs.end();
}

argument floats(const shape& s, std::vector<double> v) { return from_doubles(s, v); }

// main: x, y -> (neg(x) + y)
struct small_program {
    program p;
    module& m = p.main();
    shape s{dtype::float32, lens{2, 3}};
    instruction_ref x = m.add_parameter("x", s);
    instruction_ref y = m.add_parameter("y", s);
    instruction_ref neg = m.add_instruction(make_op("neg"), {x});
    instruction_ref sum = m.add_instruction(make_op("add"), {neg, y});
    instruction_ref ret = m.add_return({sum});
};

TEST(module, builds_instructions_and_user_lists) {
    small_program t;
    EXPECT_EQ(t.m.size(), 5u);
    EXPECT_EQ(t.sum->get_shape(), t.s);
    EXPECT_TRUE(uses(t.x, t.neg));
    EXPECT_TRUE(uses(t.neg, t.sum));
    EXPECT_TRUE(uses(t.sum, t.ret));
    EXPECT_EQ(t.m.parameter_names(), (std::vector<std::string>{"x", "y"}));
    EXPECT_EQ(t.m.get_parameter("y"), t.y);
    EXPECT_EQ(t.m.get_parameter("z"), t.m.end());
    EXPECT_EQ(t.m.get_return(), t.ret);
    EXPECT_EQ(t.m.output_shapes(), std::vector<shape>{t.s});
    t.m.validate();
}

TEST(module, parameters_go_first_and_are_unique) {
    small_program t;
    auto z = t.m.add_parameter("z", t.s);   // added last, placed after the other parameters
    EXPECT_EQ(std::next(t.y), z);
    EXPECT_EQ(t.m.parameter_names().back(), "z");
    expect_error([&] { t.m.add_parameter("x", t.s); }, "module main: parameter 'x' declared twice");
    expect_error([&] { t.m.add_return({t.x}); }, "has a @return already");
    expect_error([&] { t.m.add_instruction(make_op("add"), {t.x}); }, "add: expected 2 inputs");
}

TEST(module, insert_and_replace_uses) {
    small_program t;
    auto relu = t.m.insert_instruction(t.sum, make_op("relu"), {t.x});
    EXPECT_EQ(std::next(relu), t.sum);
    t.m.replace_uses(t.neg, relu);
    EXPECT_EQ(t.sum->inputs()[0], relu);
    EXPECT_TRUE(uses(relu, t.sum));
    EXPECT_TRUE(t.neg->outputs().empty());
    auto lit = t.m.insert_literal(t.sum, literal(shape(dtype::float32, lens{3}), std::vector<double>{1, 2, 3}));
    expect_error([&] { t.m.replace_uses(t.sum, lit); }, "cannot replace add");
    t.m.validate();
}

TEST(module, replace_instruction_keeps_the_shape) {
    small_program t;
    t.m.replace_instruction(t.neg, make_op("relu"), {t.y});
    EXPECT_EQ(t.neg->name(), "relu");
    EXPECT_FALSE(uses(t.x, t.neg));
    EXPECT_TRUE(uses(t.y, t.neg));
    auto lit = t.m.insert_literal(t.neg, literal(shape(dtype::float32, lens{3}), std::vector<double>{1, 2, 3}));
    expect_error([&] { t.m.replace_instruction(t.neg, make_op("neg"), {lit}); },
                 "changes its shape from float_type, {2, 3}, {3, 1} to float_type, {3}, {1}");
    t.m.validate();
}

TEST(module, remove_instruction_needs_no_users) {
    small_program t;
    expect_error([&] { t.m.remove_instruction(t.neg); }, "cannot remove neg: it still has 1 users");
    auto dead = t.m.insert_instruction(t.ret, make_op("relu"), {t.x});
    EXPECT_TRUE(uses(t.x, dead));
    t.m.remove_instruction(dead);
    EXPECT_FALSE(uses(t.x, dead));
    EXPECT_EQ(t.x->outputs().size(), 1u);
    t.m.validate();
}

TEST(module, remove_dead_code) {
    small_program t;
    // A chain of three unused instructions goes in one call; parameters and the return stay.
    auto a = t.m.insert_instruction(t.ret, make_op("relu"), {t.sum});
    auto b = t.m.insert_instruction(t.ret, make_op("neg"), {a});
    t.m.insert_instruction(t.ret, make_op("add"), {b, t.x});
    t.m.add_parameter("unused", t.s);
    EXPECT_EQ(t.m.remove_dead_code(), 3u);
    EXPECT_EQ(t.m.size(), 6u);
    EXPECT_EQ(t.m.remove_dead_code(), 0u);
    EXPECT_EQ(t.sum->outputs().size(), 1u);
    t.m.validate();
}

// The user lists stay exact in the cases the one-pass updates must handle: an input used twice is
// one use, a user of both the replaced value and its replacement, a replacement that uses the
// value it replaces, and a value with many users (each listed once, in order).
TEST(module, user_lists_edge_cases) {
    small_program t;
    auto sq = t.m.insert_instruction(t.ret, make_op("mul"), {t.x, t.x});
    EXPECT_EQ(std::count(t.x->outputs().begin(), t.x->outputs().end(), sq), 1);
    auto both = t.m.insert_instruction(t.ret, make_op("add"), {t.neg, t.x});
    t.m.replace_uses(t.neg, t.x);   // `both` uses x already: listed once
    EXPECT_EQ(both->inputs(), (std::vector<instruction_ref>{t.x, t.x}));
    EXPECT_EQ(std::count(t.x->outputs().begin(), t.x->outputs().end(), both), 1);
    EXPECT_TRUE(t.neg->outputs().empty());
    auto relu = t.m.insert_instruction(t.ret, make_op("relu"), {t.sum});
    t.m.replace_uses(t.sum, relu);   // relu keeps reading sum; the return reads relu
    EXPECT_EQ(t.sum->outputs(), std::vector<instruction_ref>{relu});
    EXPECT_EQ(t.ret->inputs()[0], relu);
    std::vector<instruction_ref> users;
    for (int i = 0; i < 100; ++i) users.push_back(t.m.insert_instruction(t.ret, make_op("neg"), {t.y}));
    auto y2 = t.m.insert_instruction(t.sum, make_op("relu"), {t.y});
    t.m.replace_uses(t.y, y2);   // y2 itself stays a user of y
    EXPECT_EQ(t.y->outputs(), std::vector<instruction_ref>{y2});
    ASSERT_EQ(y2->outputs().size(), 101u);   // sum, then the 100 negs
    EXPECT_EQ(y2->outputs()[0], t.sum);
    EXPECT_TRUE(std::equal(users.begin(), users.end(), y2->outputs().begin() + 1));
    t.m.validate();
    t.m.replace_instruction(users[0], make_op("mul"), {y2, y2});
    EXPECT_EQ(std::count(y2->outputs().begin(), y2->outputs().end(), users[0]), 1);
    t.m.validate();
    program copy = t.p.clone();
    copy.validate();
    EXPECT_EQ(to_string(copy), to_string(t.p));
}

TEST(module, validate_catches_broken_invariants) {
    small_program t;
    t.m.move_instruction(t.sum, t.neg);   // sum now comes before its input neg
    expect_error([&] { t.m.validate(); },
                 "module main: instruction 2 (add): uses an input that is not defined before it");
    t.m.move_instruction(t.sum, t.ret);   // back in place
    t.m.validate();
    t.m.add_instruction(make_op("relu"), {t.x});   // appended after the return
    expect_error([&] { t.m.validate(); }, "module main: instruction 4 (@return): @return is not last");
}

TEST(module, evaluate) {
    small_program t;
    argument x = floats(t.s, {1, 2, 3, 4, 5, 6}), y = floats(t.s, {1, 1, 1, 1, 1, 1});
    auto outs = evaluate(t.p, {{"x", x}, {"y", y}});
    ASSERT_EQ(outs.size(), 1u);
    EXPECT_EQ(to_doubles(outs[0]), (std::vector<double>{0, -1, -2, -3, -4, -5}));
    // Inputs in declaration order, as submodules are called.
    std::vector<argument> ordered{x, y};
    EXPECT_TRUE(evaluate(t.m, std::span<const argument>(ordered))[0].same_values(outs[0]));
}

TEST(module, evaluate_reports_bad_inputs_by_name) {
    small_program t;
    argument x = floats(t.s, {1, 2, 3, 4, 5, 6});
    expect_error([&] { evaluate(t.p, {{"x", x}}); }, "missing input 'y'");
    expect_error([&] { evaluate(t.p, {}); }, "missing inputs 'x', 'y'");
    expect_error([&] { evaluate(t.p, {{"x", x}, {"y", x}, {"z", x}}); }, "unknown input 'z'");
    argument wrong_lens = floats(shape(dtype::float32, lens{3, 2}), {1, 2, 3, 4, 5, 6});
    expect_error([&] { evaluate(t.p, {{"x", x}, {"y", wrong_lens}}); },
                 "input 'y': expected lens {2, 3}, got {3, 2}");
    argument wrong_type = from_int64s(shape(dtype::int32, lens{2, 3}), std::vector<std::int64_t>(6, 1));
    expect_error([&] { evaluate(t.p, {{"x", wrong_type}, {"y", x}}); },
                 "input 'x': expected float_type, got int32_type");
    std::vector<argument> one{x};
    expect_error([&] { evaluate(t.m, std::span<const argument>(one)); }, "module main: 2 inputs expected, 1 given");
}

TEST(module, evaluate_binds_dynamic_dims) {
    program p;
    module& m = p.main();
    auto x = m.add_parameter("x", shape(dtype::float32, {dynamic_dim{1, 4, {}, "batch"}, dynamic_dim{2, 2, {}, ""}}));
    m.add_return({m.add_instruction(make_op("neg"), {x})});
    auto outs = evaluate(p, {{"x", floats(shape(dtype::float32, lens{3, 2}), {1, 2, 3, 4, 5, 6})}});
    EXPECT_EQ(outs[0].get_shape().lens(), (lens{3, 2}));
    expect_error([&] { evaluate(p, {{"x", floats(shape(dtype::float32, lens{5, 2}), std::vector<double>(10))}}); },
                 "dim 0 = 5 is outside batch[1..4]");
}

TEST(module, describe_names_the_instruction_and_its_node) {
    small_program t;
    EXPECT_EQ(describe(t.m, *t.sum), "module main: @1 = add");   // parameters are not numbered
    t.neg->set_source_name("Neg_3");
    EXPECT_EQ(describe(t.m, *t.neg), "module main: @0 = neg (node 'Neg_3')");
    EXPECT_EQ(describe(t.m, *t.x),
              "module main: x = @param[name=x,shape={type: float_type, lens: {2, 3}, strides: {3, 1}}]");
}

TEST(program, modules) {
    program p;
    module& sub = p.create_module("sub");
    expect_error([&] { p.create_module("sub"); }, "program: module 'sub' exists already");
    expect_error([&] { p.create_module("main"); }, "module 'main' exists already");
    EXPECT_EQ(p.find_module("sub"), &sub);
    EXPECT_EQ(p.find_module("nope"), nullptr);
    EXPECT_EQ(p.modules(), (std::vector<module*>{&p.main(), &sub}));
    // main calls sub, so sub comes first in dependency order.
    auto x = p.main().add_parameter("x", shape(dtype::float32, lens{2}));
    p.main().add_instruction(make_op("relu"), {x}, {&sub});
    EXPECT_EQ(p.modules_in_dependency_order(), (std::vector<module*>{&sub, &p.main()}));
    p.validate();
    // relu ignores its module inputs, which lets this build a cycle for the check.
    auto y = sub.add_parameter("y", shape(dtype::float32, lens{2}));
    sub.add_instruction(make_op("relu"), {y}, {&p.main()});
    expect_error([&] { p.validate(); }, "calls itself");
}

}  // namespace
}  // namespace kiln
