// Sequence and optional values (docs/ir.md): their types print, parse and save like tensors', join
// and containment give loop-carried and branch types, values are checked against their types,
// and ops and the memory plan leave them alone. The ops' results are in tests/ops/cases/sequence.json.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/container.hpp"
#include "core/eval.hpp"
#include "core/reflect.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "expect_error.hpp"
#include "tools/program_serial.hpp"
#include "tools/saved_program.hpp"

namespace kiln {
namespace {

const shape f23{dtype::float32, {2, 3}};

std::vector<shape> sample_types() {
    return {shape::sequence(f23),
            shape::sequence(shape(dtype::int64, std::vector<dynamic_dim>{{0, unbounded_dim, {}, "n"}, {4, 4, {}, {}}})),
            shape::sequence(shape::any_rank(dtype::float16)),
            shape::optional(f23),
            shape::optional(shape::sequence(shape::any_rank(dtype::int32))),
            shape(std::vector<shape>{shape::sequence(f23), f23})};
}

TEST(container_types, print_and_parse_back) {
    EXPECT_EQ(to_string(shape::sequence(f23)), "sequence_type, {float_type, {2, 3}, {3, 1}}");
    EXPECT_EQ(to_string(shape::optional(shape::sequence(shape::any_rank(dtype::int32)))),
              "optional_type, {sequence_type, {int32_type, {...}}}");
    for (const auto& t : sample_types()) {
        program p = parse_text("x = @param:x -> " + to_string(t) + "\n@0 = @return(x)\n");
        EXPECT_EQ(p.main().begin()->get_shape(), t) << to_string(t);
    }
}

TEST(container_types, json_round_trip) {
    for (const auto& t : sample_types()) {
        if (t.is_tuple()) continue;   // attributes hold no tuples; program_serial below covers them
        shape back;
        from_value(parse_json(to_json(to_value(t))), back);
        EXPECT_EQ(back, t) << to_string(t);
    }
}

TEST(container_types, malformed_text_is_refused) {
    expect_error([] { parse_text("x = @param:x -> sequence_type, {tuple_type, {}}\n"); }, "a sequence holds tensors");
    expect_error([] { parse_text("x = @param:x -> sequence_type, {2, 3}\n"); }, "expected a type name");
    expect_error([] { parse_text("x = @param:x -> optional_type, {optional_type, {float_type, {2}}}\n"); },
                 "an optional holds a tensor or a sequence");
    expect_error([] { shape(dtype::sequence, std::vector<std::size_t>{2}); }, "sequence_type is not an element type");
}

TEST(container_types, join_and_holds) {
    shape f24{dtype::float32, {2, 4}};
    shape j = join_types(shape::sequence(f23), shape::sequence(f24));
    EXPECT_EQ(to_string(j), "sequence_type, {float_type, {2, ?[3..4]}}");
    EXPECT_TRUE(holds_type(j, shape::sequence(f23)));
    EXPECT_FALSE(holds_type(shape::sequence(f23), j));
    EXPECT_EQ(join_types(f23, shape(dtype::float32, std::vector<std::size_t>{6})), shape::any_rank(dtype::float32));
    EXPECT_TRUE(holds_type(shape::any_rank(dtype::float32), f23));
    EXPECT_FALSE(holds_type(shape::any_rank(dtype::int32), f23));
    EXPECT_EQ(join_types(shape::sequence(f23), shape::sequence(f23)), shape::sequence(f23));
    expect_error([&] { join_types(shape::sequence(f23), shape::optional(f23)); }, "their types differ");
}

argument random_tensor(const shape& s, unsigned seed) {
    std::vector<double> v(s.elements());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((seed * 2654435761u + i * 40503u) % 1000) / 250.0 - 2;
    return from_doubles(s, v);
}

TEST(container_values, copy_compare_and_check) {
    argument a = random_tensor(f23, 1), b = random_tensor(f23, 2);
    argument seq(shape::sequence(f23), {a, b});
    argument c = seq.copy();
    EXPECT_TRUE(c.same_values(seq));
    EXPECT_NE(c.sub_arguments()[0].data(), a.data());
    EXPECT_FALSE(argument(shape::sequence(f23), {a}).same_values(seq));
    EXPECT_FALSE(argument(shape::sequence(f23), {}).empty());   // an empty sequence is a value
    check_value(shape::sequence(f23), seq, "x");
    expect_error([&] { check_value(shape::sequence(shape(dtype::float32, {3, 2})), seq, "input 'x'"); },
                 "input 'x' element 0 is float_type, {2, 3}, {3, 1}; expected float_type, {3, 2}");
    expect_error([&] { argument(shape::optional(f23), {a, b}); }, "an optional holds one value");
    expect_error([&] { literal l(seq); }, "a literal is a tensor");
}

// Ops that do not take sequences refuse them by name; a program with sequences runs unplanned.
TEST(container_values, ops_refuse_and_executor_runs_unplanned) {
    expect_error([] { parse_text("x = @param:x -> sequence_type, {float_type, {2, 3}}\n@0 = relu(x)\n"); },
                 "input 0 is a sequence_type");
    program p = parse_text(
        "x = @param:x -> float_type, {2, 3}\ny = @param:y -> float_type, {2, 3}\n"
        "@0 = sequence_construct(x,y)\n@1 = concat_from_sequence[axis=0](@0)\n@2 = relu(@1)\n@3 = @return(@2,@0)\n");
    auto exe = make_target("ref")->compile(p.clone(), {});
    EXPECT_NE(exe->stats().memory.find("not planned"), std::string::npos) << exe->stats().memory;
    param_map in{{"x", random_tensor(f23, 3)}, {"y", random_tensor(f23, 4)}};
    auto got = exe->run(in);
    auto want = evaluate(p, in);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_TRUE(got[0].same_values(want[0]));
    EXPECT_TRUE(got[1].same_values(want[1]));
    ASSERT_EQ(got[1].sub_arguments().size(), 2u);
    EXPECT_TRUE(got[1].sub_arguments()[1].same_values(in["y"]));
}

// The program (text), its JSON form and a saved .kiln file keep sequence and optional values.
TEST(container_values, program_json_and_saved_file) {
    program p = parse_text(
        "x = @param:x -> sequence_type, {float_type, {?[0..inf], 3}}\n"
        "p = @param:p -> int64_type, {}\n"
        "@0 = sequence_at(x,p)\n"
        "@1 = optional[type={type: int64_type, lens: {4}}]()\n"
        "@2 = optional_has_element(@1)\n"
        "@3 = sequence_empty[type=half_type]()\n"
        "@4 = @return(@0,@2,@3)\n");
    std::vector<const literal*> payloads;
    value v = program_to_value(p, payloads);
    program back = program_from_value(parse_json(to_json(v)), [](std::size_t, const shape&) -> literal {
        throw error("no literals here");
    });
    EXPECT_EQ(to_string(back), to_string(p));

    auto file = std::filesystem::temp_directory_path() / ("kiln_container_" + std::to_string(getpid()) + ".kiln");
    save_program(p, saved_program_info{}, file.string());
    loaded_program l = load_program(file.string());
    std::filesystem::remove(file);
    EXPECT_EQ(to_string(l.prog), to_string(p));
    argument seq(shape::sequence(shape(dtype::float32, {2, 3})), {random_tensor(f23, 5), random_tensor(f23, 6)});
    param_map in{{"x", seq}, {"p", from_int64s(shape(dtype::int64), std::vector<std::int64_t>{-1})}};
    auto outs = evaluate(l.prog, in);
    EXPECT_TRUE(outs[0].same_values(seq.sub_arguments()[1]));
    EXPECT_EQ(to_int64s(outs[1]), std::vector<std::int64_t>{0});
    EXPECT_TRUE(outs[2].get_shape().is_sequence());
    EXPECT_TRUE(outs[2].sub_arguments().empty());
}

}  // namespace
}  // namespace kiln
