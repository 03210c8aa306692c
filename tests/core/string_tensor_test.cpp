// String tensors (docs/ir.md, "Strings"): values copy element by element through views, literals
// print, parse and save back, numeric ops refuse them, and a program with strings runs alike on
// ref and cpu (on random words). The gpu target's refusal is in tests/gpu/gpu_no_device_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "core/eval.hpp"
#include "core/random.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "expect_error.hpp"
#include "tools/saved_program.hpp"

namespace kiln {
namespace {

const std::vector<std::string> words{"a", "", "quote\"d", "back\\slash", "new\nline", "日本"};

argument sample() { return from_strings(shape(dtype::string, std::vector<std::size_t>{2, 3}), words); }

TEST(string_tensor, copies_views_and_compares_by_element) {
    argument a = sample();
    argument t = a.view(shape(dtype::string, std::vector<std::size_t>{3, 2}, {1, 3}));   // the transpose, as a view
    EXPECT_EQ(to_strings(t), (std::vector<std::string>{"a", "back\\slash", "", "new\nline", "quote\"d", "日本"}));
    argument c = t.copy();
    EXPECT_TRUE(c.get_shape().standard());
    EXPECT_TRUE(c.same_values(t));
    c.as<std::string>()[0] = "changed";
    EXPECT_EQ(to_strings(a)[0], "a");   // a copy owns its strings
    EXPECT_FALSE(c.same_values(t));
    EXPECT_EQ(to_strings(decode_strings(a.get_shape(), encode_strings(a))), words);
}

TEST(string_tensor, decoding_checks_lengths) {
    auto bytes = encode_strings(sample());
    bytes.pop_back();
    expect_error([&] { decode_strings(shape(dtype::string, std::vector<std::size_t>{2, 3}), bytes); }, "runs past the end");
    bytes.resize(3);
    expect_error([&] { decode_strings(shape(dtype::string, std::vector<std::size_t>{2, 3}), bytes); }, "before the end");
}

program concat_program() {
    program p;
    module& m = p.main();
    auto x = m.add_parameter("x", shape(dtype::string, std::vector<std::size_t>{2, 3}));
    auto w = m.add_literal(literal(sample()));
    auto c = m.add_instruction(make_op("string_concat"), {x, w});
    auto e = m.add_instruction(make_op("string_equal"), {c, w});
    m.add_return({c, e});
    return p;
}

TEST(string_tensor, literals_print_parse_and_save_back) {
    program p = concat_program();
    std::string text = to_string(p);
    EXPECT_NE(text.find(R"(@literal{"a", "", "quote\"d", "back\\slash", "new\nline", "日本"} -> string_type, {2, 3})"),
              std::string::npos)
        << text;
    EXPECT_EQ(to_string(parse_text(text)), text);
    auto dir = std::filesystem::temp_directory_path() / ("kiln_strings_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    std::string file = (dir / "s.kiln").string();
    save_program(p, {}, file);
    loaded_program l = load_program(file);
    std::filesystem::remove_all(dir);
    EXPECT_EQ(to_string(l.prog), text);
    param_map in = random_inputs(p.main(), 5);
    auto want = evaluate(p, in), got = evaluate(l.prog, in);
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(got[i].same_values(want[i])) << "output " << i;
}

TEST(string_tensor, numeric_ops_refuse_strings) {
    program p;
    auto x = p.main().add_parameter("x", shape(dtype::string, std::vector<std::size_t>{2}));
    expect_error([&] { p.main().add_instruction(make_op("relu"), {x}); }, "input 0 is a string tensor; this op takes numbers");
    auto one = p.main().add_literal(literal(shape(dtype::float32, std::vector<std::size_t>{1}), std::vector<double>{1}));
    expect_error([&] { p.main().add_instruction(make_op("convert", {{"target_type", "string_type"}}), {one}); },
                 "makes a string tensor; this op makes numbers");
}

// Float keys match by value: NaN finds NaN and -0 finds 0 (what ONNX Runtime's LabelEncoder does).
TEST(string_tensor, label_encoder_float_keys_match_nan_and_signed_zero) {
    value keys = value_array{value(0.5), value(std::nan("")), value(0.0)};
    value vals = value_array{value("half"), value("nan"), value("zero")};
    operation op = make_op("label_encoder", {{"key_type", "float_type"}, {"value_type", "string_type"}, {"keys", keys},
                                             {"values", vals}, {"default_value", "other"}});
    argument x = from_doubles(shape(dtype::float32, std::vector<std::size_t>{5}),
                              std::vector<double>{std::nan(""), -0.0, 0.5, 2.0, 0.0});
    std::vector<shape> in{x.get_shape()};
    argument y = op.compute(op.compute_shape(in), std::vector<argument>{x});
    EXPECT_EQ(to_strings(y), (std::vector<std::string>{"nan", "zero", "half", "other", "zero"}));
}

// All of uint64 travels exactly both ways (the op cases' JSON stops at int64's range).
TEST(string_tensor, uint64_casts_exactly) {
    std::vector<std::string> text{"18446744073709551615", "9223372036854775808", "0"};
    argument s = from_strings(shape(dtype::string, std::vector<std::size_t>{3}), text);
    operation to_u64 = make_op("string_convert", {{"target_type", "uint64_type"}});
    std::vector<shape> in{s.get_shape()};
    argument u = to_u64.compute(to_u64.compute_shape(in), std::vector<argument>{s});
    EXPECT_EQ(u.as<std::uint64_t>()[0], 18446744073709551615u);
    EXPECT_EQ(u.as<std::uint64_t>()[1], 9223372036854775808u);
    operation back = make_op("string_convert", {{"target_type", "string_type"}});
    std::vector<shape> uin{u.get_shape()};
    EXPECT_EQ(to_strings(back.compute(back.compute_shape(uin), std::vector<argument>{u})), text);
}

// cpu runs string programs on the reference computes (not planned) with ref's results.
TEST(string_tensor, cpu_matches_ref_on_random_words) {
    auto built = built_targets();
    if (std::find(built.begin(), built.end(), "cpu") == built.end()) GTEST_SKIP() << "cpu target not built";
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        program p = concat_program();
        param_map in = random_inputs(p.main(), seed);
        auto want = evaluate(p, in);
        auto exe = make_target("cpu")->compile(concat_program(), {});
        auto got = exe->run(in);
        ASSERT_EQ(got.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(got[i].same_values(want[i])) << "output " << i;
    }
}

}  // namespace
}  // namespace kiln
