// The executor runs every result in its planned arena buffer: results match the interpreter, a
// wrong plan shows, views keep what they read alive, and steady runs allocate nothing.
#include <gtest/gtest.h>

#include <thread>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "passes/analysis/memory_plan.hpp"
#include "runtime/executor.hpp"
#include "../passes/pass_check.hpp"

namespace kiln {
namespace {

const instruction& nth(const module& m, std::size_t k) { return *std::next(m.begin(), static_cast<std::ptrdiff_t>(k)); }

void expect_same(const std::vector<argument>& got, const std::vector<argument>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i].same_values(want[i])) << "output " << i;
}

// exp(@0) may not write over @0: the transpose view of @0 is read after it.
const char* view_outlives =
    "x = @param:x -> float_type, {8, 8}\n"
    "@0 = neg(x)\n"
    "@1 = transpose[permutation={1, 0}](@0)\n"
    "@2 = exp(@0)\n"
    "@3 = add(@2,@1)\n"
    "@4 = @return(@3)\n";

TEST(executor, a_view_keeps_its_buffer_from_an_in_place_neighbour) {
    program p = parse_text(view_outlives);
    auto in = random_inputs(p.main(), 11);
    memory_plan plan = plan_memory(p.main());
    EXPECT_EQ(plan.in_place, 1u);   // only the add, over exp's result
    EXPECT_NE(plan.offsets.at(&nth(p.main(), 3)), plan.offsets.at(&nth(p.main(), 1)));
    expect_same(run_with_plan(p.main(), plan, in), evaluate(p, in));
    // Placing exp over neg (as a planner ignoring the view would) changes the answer.
    plan.offsets[&nth(p.main(), 3)] = plan.offsets.at(&nth(p.main(), 1));
    EXPECT_FALSE(run_with_plan(p.main(), plan, in)[0].same_values(evaluate(p, in)[0]));
}

// add(@0, transpose(@0)) may not write over @0: it reads @0 through the view as it writes.
TEST(executor, an_op_reading_its_input_through_a_view_is_not_in_place) {
    program p = parse_text(
        "x = @param:x -> float_type, {8, 8}\n"
        "@0 = neg(x)\n"
        "@1 = transpose[permutation={1, 0}](@0)\n"
        "@2 = add(@0,@1)\n"
        "@3 = @return(@2)\n");
    auto in = random_inputs(p.main(), 12);
    memory_plan plan = plan_memory(p.main());
    EXPECT_EQ(plan.in_place, 0u);
    expect_same(run_with_plan(p.main(), plan, in), evaluate(p, in));
    plan.offsets[&nth(p.main(), 3)] = plan.offsets.at(&nth(p.main(), 1));
    EXPECT_FALSE(run_with_plan(p.main(), plan, in)[0].same_values(evaluate(p, in)[0]));
}

const char* mlp =
    "x = @param:x -> float_type, {4, 16}\n"
    "w = @param:w -> float_type, {16, 16}\n"
    "b = @param:b -> float_type, {16}\n"
    "@0 = dot(x,w)\n"
    "@1 = multibroadcast[out_lens={4, 16}](b)\n"
    "@2 = add(@0,@1)\n"
    "@3 = relu(@2)\n"
    "@4 = dot(@3,w)\n"
    "@5 = softmax[axis=1](@4)\n"
    "@6 = tanh(@5)\n"
    "@7 = @return(@6,@3)\n";

TEST(executor, fused_program_matches_the_interpreter_and_allocates_nothing_after_its_first_run) {
    program p = parse_text(mlp);
    auto in = random_inputs(p.main(), 13);
    auto want = evaluate(p, in);
    auto exe = make_target("ref")->compile(p.clone(), {});
    std::size_t fused = 0;
    for (const auto& ins : exe->get_program().main()) fused += ins.get_operator().traits().fusion;
    EXPECT_GE(fused, 2u) << to_string(exe->get_program());
    EXPECT_NE(exe->stats().memory.find("arena"), std::string::npos) << exe->stats().memory;
    auto first = exe->run(in);
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_LT(relative_l2(first[i], want[i]), 1e-6);
    std::size_t before = host_buffer_allocations();
    auto again = exe->run(in);
    EXPECT_EQ(host_buffer_allocations(), before);
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_LT(relative_l2(again[i], want[i]), 1e-6);
}

// Each step keeps its arguments between runs and copies only those that can change (the
// parameters and what derives from them, not literals or other kernels' planned outputs), and a
// view of unchanging arguments (the transpose) runs once: every run with fresh inputs matches the
// interpreter, on ref and on cpu (oneDNN kernels, whose data handles are set again only where a
// buffer moved), and so does a run of the first inputs again.
TEST(executor, every_run_reads_its_own_inputs) {
    program p = parse_text(
        "x = @param:x -> float_type, {4, 16}\n"
        "w = @literal{0.5, -1, 2, 0.25, -0.75, 1.5, 3, -2, 0.125, 1, -0.5, 0.75, -3, 2.5, -1.25, 1.75} -> "
        "float_type, {4, 4}\n"
        "@0 = reshape[dims={16, 4}](x)\n"
        "@1 = dot(@0,w)\n"
        "@2 = relu(@1)\n"
        "@3 = dot(@2,w)\n"
        "@4 = add(@3,@1)\n"
        "@5 = transpose[permutation={1, 0}](@4)\n"
        "@6 = dot(w,@5)\n"
        "@7 = tanh(@6)\n"
        "@8 = @return(@7,@2)\n");
    for (const char* target : {"ref", "cpu"}) {
        auto exe = make_target(target)->compile(p.clone(), {});
        auto first = random_inputs(p.main(), 30);
        for (std::uint64_t seed : {31, 32, 33, 30}) {
            auto in = seed == 30 ? first : random_inputs(p.main(), seed);
            auto want = evaluate(p, in);
            auto got = exe->run(in);
            ASSERT_EQ(got.size(), want.size());
            for (std::size_t i = 0; i < want.size(); ++i)
                EXPECT_LT(relative_l2(got[i], want[i]), 1e-5) << target << " seed " << seed << " output " << i;
        }
    }
}

TEST(executor, executables_of_one_program_run_at_once_from_threads) {
    program p = parse_text(mlp);
    auto t = make_target("ref");
    auto a = t->compile(p.clone(), {});
    auto b = t->compile(p.clone(), {});
    auto in_a = random_inputs(p.main(), 1), in_b = random_inputs(p.main(), 2);
    auto want_a = evaluate(p, in_a), want_b = evaluate(p, in_b);
    bool ok_a = true, ok_b = true;
    auto loop = [](executable& e, const param_map& in, const std::vector<argument>& want, bool& ok) {
        for (int i = 0; i < 200; ++i) {
            auto got = e.run(in);
            for (std::size_t k = 0; k < want.size(); ++k) ok = ok && relative_l2(got[k], want[k]) < 1e-6;
        }
    };
    std::thread ta(loop, std::ref(*a), std::cref(in_a), std::cref(want_a), std::ref(ok_a));
    std::thread tb(loop, std::ref(*b), std::cref(in_b), std::cref(want_b), std::ref(ok_b));
    ta.join();
    tb.join();
    EXPECT_TRUE(ok_a);
    EXPECT_TRUE(ok_b);
}

TEST(executor, dynamic_shapes_run_unplanned_and_say_why) {
    program p = parse_text(
        "x = @param:x -> float_type, {batch[1..8], 4}\n"
        "@0 = relu(x)\n"
        "@1 = @return(@0)\n");
    auto exe = make_target("ref")->compile(p.clone(), {.optimize = false});
    EXPECT_NE(exe->stats().memory.find("not planned"), std::string::npos) << exe->stats().memory;
    param_map in{{"x", random_argument(shape(dtype::float32, std::vector<std::size_t>{5, 4}), 3, 0)}};
    expect_same(exe->run(in), evaluate(p, in));
}

TEST(executor, inputs_are_checked) {
    auto exe = make_target("ref")->compile(parse_text(mlp), {});
    param_map in = random_inputs(parse_text(mlp).main(), 1);
    auto fails_with = [&](const param_map& given, const std::string& message) {
        try {
            exe->run(given);
            ADD_FAILURE() << "no error, expected " << message;
        } catch (const error& e) {
            EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
        }
    };
    param_map extra = in;
    extra["v"] = in.at("w");
    fails_with(extra, "unknown input 'v'");
    in.erase("w");
    fails_with(in, "missing input 'w'");
    in["v"] = extra.at("w");   // as many inputs as parameters, one misnamed
    fails_with(in, "missing input 'w'");
}

}  // namespace
}  // namespace kiln
