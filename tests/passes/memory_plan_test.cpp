// Memory planning: buffers with intersecting lifetimes never share bytes (checked by the checker
// and by running every program inside its planned arena), dead buffers are reused, pointwise ops
// write in place only when safe, views keep their input alive, returned values live to the end.
#include <gtest/gtest.h>

#include <random>

#include "../core/expect_error.hpp"
#include "arena_check.hpp"
#include "core/random.hpp"
#include "core/text_parser.hpp"
#include "pass_check.hpp"

namespace kiln {
namespace {

constexpr std::size_t square_bytes = 64 * 64 * 4;   // one float {64, 64} buffer

struct planned {
    program p;
    memory_plan plan;
    std::size_t offset(std::string_view op, int nth = 0) const {
        for (const auto& ins : p.main())
            if (ins.name() == op && nth-- == 0) return plan.offsets.at(&ins);
        throw std::runtime_error(cat("no ", op));
    }
};

planned plan_and_check(std::string_view body) {
    planned r{parse_text(cat("x = @param:x -> float_type, {64, 64}\n", body)), {}};
    r.plan = plan_memory(r.p.main());
    for (std::uint64_t seed : {1, 2}) expect_plan_holds(r.p.main(), r.plan, random_inputs(r.p.main(), seed));
    return r;
}

TEST(memory_plan, dead_buffers_are_reused) {
    auto r = plan_and_check(
        "@0 = dot(x,x)\n"
        "@1 = dot(@0,x)\n"
        "@2 = dot(@1,x)\n"
        "@3 = dot(@2,x)\n"
        "@4 = @return(@3)\n");
    EXPECT_EQ(r.plan.intermediate_bytes, 4 * square_bytes);
    EXPECT_EQ(r.plan.arena_bytes, 2 * square_bytes);
    EXPECT_EQ(r.plan.in_place, 0u);
    EXPECT_NE(r.offset("dot", 0), r.offset("dot", 1));
    EXPECT_EQ(r.offset("dot", 0), r.offset("dot", 2));
    EXPECT_EQ(r.plan.report(), cat("arena ", 2 * square_bytes, " bytes (sum of intermediates ", 4 * square_bytes,
                                   " bytes, 50.0%)"));
}

TEST(memory_plan, pointwise_ops_write_over_their_last_read_input) {
    auto r = plan_and_check(
        "@0 = dot(x,x)\n"
        "@1 = relu(@0)\n"
        "@2 = neg(@1)\n"
        "@3 = add(@2,x)\n"
        "@4 = @return(@3)\n");
    EXPECT_EQ(r.plan.in_place, 3u);
    EXPECT_EQ(r.plan.arena_bytes, square_bytes);
    EXPECT_EQ(r.offset("add"), r.offset("dot"));
}

TEST(memory_plan, no_in_place_when_the_input_is_read_later_or_through_a_view) {
    auto r = plan_and_check(
        "@0 = dot(x,x)\n"
        "@1 = transpose[permutation={1, 0}](@0)\n"
        "@2 = add(@0,@1)\n"       // reads @0 transposed: writing over @0 would corrupt it
        "@3 = relu(@2)\n"         // @2 is read again by @4
        "@4 = mul(@3,@2)\n"
        "@5 = @return(@4)\n");
    EXPECT_NE(r.offset("add"), r.offset("dot"));
    EXPECT_NE(r.offset("relu"), r.offset("add"));
    EXPECT_EQ(r.offset("mul"), r.offset("relu"));
    EXPECT_EQ(r.plan.in_place, 1u);
}

// A target's kernel that accumulates onto one input (a sum post-op) names it: the result goes over
// that input when the input is last read there and by no other input of the instruction. Checked
// by the checker only: the reference dot reads its whole input, so running it would fail.
TEST(memory_plan, a_kernel_named_input_is_written_over_only_when_read_once_and_last) {
    auto plan_with = [](const std::string& body, std::size_t input) {
        planned r{parse_text(cat("x = @param:x -> float_type, {64, 64}\n", body)), {}};
        in_place_inputs overwrites;
        for (const auto& ins : r.p.main())
            if (ins.name() == "dot" && ins.inputs()[input]->name() != "@param") overwrites[&ins] = input;
        r.plan = plan_memory(r.p.main(), overwrites);
        check_memory_plan(r.p.main(), r.plan, overwrites);
        return r;
    };
    auto over = plan_with("@0 = neg(x)\n@1 = dot(x,@0)\n@2 = @return(@1)\n", 1);
    EXPECT_EQ(over.plan.in_place, 1u);
    EXPECT_EQ(over.offset("dot"), over.offset("neg"));
    // Without the kernel's word the same plan is an overlap of two live buffers.
    expect_error([&] { check_memory_plan(over.p.main(), over.plan); }, "are both live at instruction 2");
    // Read by the other input too, directly or through a view, or read later: a buffer of its own.
    for (const char* body : {"@0 = neg(x)\n@1 = dot(@0,@0)\n@2 = @return(@1)\n",
                             "@0 = neg(x)\n@1 = transpose[permutation={1, 0}](@0)\n@2 = dot(@1,@0)\n@3 = @return(@2)\n",
                             "@0 = neg(x)\n@1 = dot(x,@0)\n@2 = add(@1,@0)\n@3 = @return(@2)\n"}) {
        SCOPED_TRACE(body);
        auto apart = plan_with(body, 1);
        EXPECT_NE(apart.offset("dot"), apart.offset("neg"));
    }
}

TEST(memory_plan, views_keep_their_input_alive_and_returns_live_to_the_end) {
    auto r = plan_and_check(
        "@0 = dot(x,x)\n"
        "@1 = transpose[permutation={1, 0}](@0)\n"
        "@2 = dot(x,x)\n"
        "@3 = dot(@2,x)\n"
        "@4 = dot(@3,@1)\n"       // the last read of @0, through its view
        "@5 = dot(x,x)\n"
        "@6 = dot(@5,x)\n"
        "@7 = @return(@6,@2)\n");
    EXPECT_FALSE(r.plan.offsets.contains(&*std::next(r.p.main().begin(), 2)));   // the view has no buffer
    std::size_t kept = r.offset("dot", 0);
    EXPECT_NE(r.offset("dot", 2), kept);
    EXPECT_NE(r.offset("dot", 3), kept);
    // @2 is returned: nothing after it may take its bytes.
    for (int i : {3, 4, 5}) EXPECT_NE(r.offset("dot", i), r.offset("dot", 1)) << i;
}

TEST(memory_plan, parameters_literals_and_their_views_are_outside_the_arena) {
    auto r = plan_and_check(
        "@0 = @literal{1.5} -> float_type, {1}\n"
        "@1 = multibroadcast[out_lens={64, 64}](@0)\n"
        "@2 = transpose[permutation={1, 0}](x)\n"
        "@3 = add(@1,@2)\n"
        "@4 = @return(@3,x)\n");
    EXPECT_EQ(r.plan.offsets.size(), 1u);
    EXPECT_EQ(r.plan.in_place, 0u);
    EXPECT_EQ(r.plan.arena_bytes, square_bytes);
}

TEST(memory_plan, buffers_start_on_256_byte_boundaries) {
    program p = parse_text(
        "x = @param:x -> half_type, {3, 5}\n"
        "@0 = neg(x)\n"
        "@1 = abs(x)\n"
        "@2 = add(@0,@1)\n"
        "@3 = mul(@0,@1)\n"
        "@4 = @return(@2,@3)\n");
    memory_plan plan = plan_memory(p.main());
    for (const auto& [ins, off] : plan.offsets) EXPECT_EQ(off % 256, 0u) << ins->name();
    EXPECT_EQ(buffer_alignment(dtype::float16), 256u);
    EXPECT_EQ(plan.intermediate_bytes, 4u * 30);
    EXPECT_EQ(plan.in_place, 1u);   // mul over neg's buffer
    EXPECT_EQ(plan.arena_bytes, 2 * 256u + 30);
    expect_plan_holds(p.main(), plan, random_inputs(p.main(), 3));
}

TEST(memory_plan, a_wrong_plan_fails_the_checker_and_the_arena_run) {
    planned r{parse_text("x = @param:x -> float_type, {64, 64}\n"
                         "@0 = dot(x,x)\n"
                         "@1 = dot(x,@0)\n"
                         "@2 = add(@0,@1)\n"
                         "@3 = @return(@2)\n"),
              {}};
    r.plan = plan_memory(r.p.main());
    for (auto& [ins, off] : r.plan.offsets) off = 0;   // everything in one place
    expect_error([&] { check_memory_plan(r.p.main(), r.plan); }, "are both live at instruction 2");
    auto in = random_inputs(r.p.main(), 1);
    EXPECT_GT(relative_l2(run_with_plan(r.p.main(), r.plan, in)[0], evaluate(r.p.main(), in)[0]), 0.1);
    r.plan.offsets.erase(&*std::next(r.p.main().begin()));
    expect_error([&] { check_memory_plan(r.p.main(), r.plan); }, "has no arena offset");
}

// An if's results are one tuple buffer (elements one after another, each aligned); get_tuple_elem
// views it.
TEST(memory_plan, tuple_results_are_one_buffer) {
    program p = parse_text(
        "module: \"main\"\n"
        "c = @param:c -> bool_type, {}\n"
        "x = @param:x -> float_type, {2, 3}\n"
        "@0 = if(c,x), [then_b, else_b]\n"
        "@1 = get_tuple_elem[index=1](@0)\n"
        "@2 = neg(@1)\n"
        "@3 = @return(@2)\n"
        "\n"
        "module: \"then_b\"\n"
        "a = @param:a -> float_type, {2, 3}\n"
        "@0 = neg(a)\n"
        "@1 = abs(a)\n"
        "@2 = @return(@0,@1)\n"
        "\n"
        "module: \"else_b\"\n"
        "a = @param:a -> float_type, {2, 3}\n"
        "@0 = @return(a,a)\n");
    memory_plan plan = plan_memory(p.main());
    EXPECT_EQ(plan.offsets.size(), 2u);
    EXPECT_EQ(plan.intermediate_bytes, 256u + 24 + 24);
    EXPECT_EQ(plan.in_place, 0u);   // neg reads the tuple through a view
    EXPECT_EQ(plan.arena_bytes, 2 * 256u + 24);
    for (std::uint64_t seed : {1, 2}) expect_plan_holds(p.main(), plan, random_inputs(p.main(), seed));
}

TEST(memory_plan, dynamic_shapes_are_an_error) {
    program p = parse_text(
        "x = @param:x -> float_type, {batch[1..8], 4}\n"
        "@0 = neg(x)\n"
        "@1 = @return(@0)\n");
    expect_error([&] { plan_memory(p.main()); }, "neg");
    expect_error([&] { plan_memory(p.main()); }, "has a dynamic shape; memory is planned for static shapes");
}

// Random programs over {6, 6} values: pointwise ops (in-place candidates), dots, transposes (views
// that read a buffer elsewhere than elementwise), reductions broadcast back (views of smaller
// buffers), and returns of intermediates.
program random_program(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    program p;
    module& m = p.main();
    shape s(dtype::float32, {6, 6});
    std::vector<instruction_ref> pool = {m.add_parameter("a", s), m.add_parameter("b", s)};
    std::vector<double> lit(36);
    for (auto& v : lit) v = static_cast<double>(pick(17)) / 8 - 1;
    pool.push_back(m.add_literal(literal(s, lit)));
    auto any = [&] { return pool[pool.size() - 1 - pick(std::min<std::size_t>(pool.size(), 6))]; };
    std::size_t steps = 10 + pick(30);
    for (std::size_t i = 0; i < steps; ++i) {
        switch (pick(7)) {
        case 0: pool.push_back(m.add_instruction(make_op("hard_sigmoid"), {any()})); break;
        case 1: pool.push_back(m.add_instruction(make_op("neg"), {pool.back()})); break;
        case 2: pool.push_back(m.add_instruction(make_op(pick(2) ? "add" : "mul"), {any(), any()})); break;
        case 3: pool.push_back(m.add_instruction(make_op("transpose", {{"permutation", value_array{1, 0}}}), {any()}));
                break;
        case 4: pool.push_back(m.add_instruction(make_op("dot"), {any(), any()})); break;
        case 5: {
            auto r = m.add_instruction(make_op("reduce_sum", {{"axes", value_array{1}}}), {any()});
            pool.push_back(m.add_instruction(make_op("multibroadcast", {{"out_lens", value_array{6, 6}}}), {r}));
            break;
        }
        default: pool.push_back(m.add_instruction(make_op("sub"), {pool.back(), any()})); break;
        }
    }
    std::vector<instruction_ref> outs = {pool.back()};
    for (std::size_t i = pick(3); i > 0; --i) outs.push_back(pool[pick(pool.size())]);
    m.add_return(outs);
    return p;
}

TEST(memory_plan, random_programs_run_correctly_in_their_arena) {
    std::size_t arena = 0, sum = 0, in_place = 0;
    for (std::uint64_t seed = 1; seed <= 200; ++seed) {
        SCOPED_TRACE(cat("random program seed ", seed));
        program p = random_program(seed);
        memory_plan plan = plan_memory(p.main());
        expect_plan_holds(p.main(), plan, random_inputs(p.main(), seed));
        if (::testing::Test::HasFailure()) {
            ADD_FAILURE() << to_string(p);
            return;
        }
        arena += plan.arena_bytes;
        sum += plan.intermediate_bytes;
        in_place += plan.in_place;
    }
    EXPECT_LT(arena, sum);
    EXPECT_GT(in_place, 0u);
    std::cout << "200 random programs (seeds 1..200): arena " << arena << " bytes, intermediates " << sum << " bytes, " << in_place
              << " in place\n";
}

}  // namespace
}  // namespace kiln
