// The text IR parser: printed programs parse back to the same text (attributes of every kind,
// literals of every dtype, dynamic and tuple shapes, several modules in any order), and malformed
// text is rejected naming the line and column. Every op case's program is round-tripped too, in
// tests/ops/op_cases_test.cpp.
#include "core/text_parser.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/op.hpp"

namespace kiln {
namespace {

// An op that only carries one attribute of every kind the reflection supports, so that the
// attribute syntax is tested independently of the real ops. The '@' keeps it out of the op
// coverage test, like the builtins.
struct test_attributes {
    static constexpr std::string_view name = "@test_attributes";
    std::string s;
    std::vector<std::string> words;
    double f = 0;
    std::vector<double> fs;
    std::vector<std::int64_t> is;
    std::vector<std::vector<std::int64_t>> nested;
    bool b = false;
    dtype t = dtype::float32;
    shape sh;
    auto attributes() {
        return fields(field("s", s), field("words", words), field("f", f), field("fs", fs), field("is", is),
                      field("nested", nested), field("b", b), field("t", t), field("sh", sh));
    }
    shape compute_shape(std::span<const shape> in) const { return in[0]; }
};
KILN_REGISTER_OP(test_attributes)

// shape(t, {2}) is ambiguous between lens and dynamic dims.
using lens = std::vector<std::size_t>;

void expect_round_trip(const std::string& text) {
    program p = parse_text(text);
    EXPECT_EQ(to_string(p), text);
}

// Expects parse_text to throw a kiln::error whose message contains `want`.
void expect_parse_error(const std::string& text, const std::string& want) {
    try {
        parse_text(text);
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos)
            << "message '" << e.what() << "' does not contain '" << want << "'";
        return;
    }
    ADD_FAILURE() << "no error for:\n" << text;
}

TEST(text_parser, params_ops_and_return) {
    expect_round_trip(
        "module: \"main\"\n"
        "x:0 = @param:x:0 -> float_type, {2, 3}, {3, 1}\n"
        "input.1 = @param:input.1 -> float_type, {2, 3}, {1, 2}\n"
        "@0 = relu(x:0) -> float_type, {2, 3}, {3, 1}\n"
        "@1 = leaky_relu[alpha=0.25](input.1) -> float_type, {2, 3}, {3, 1}\n"
        "@2 = gelu[approximate=tanh](@1) -> float_type, {2, 3}, {3, 1}\n"
        "@3 = @return(@0,@2,x:0)\n");
}

TEST(text_parser, attributes_of_every_kind) {
    program p;
    module& m = p.main();
    auto x = m.add_parameter("x", shape(dtype::float32, lens{2}));
    test_attributes a;
    a.words = {"plain", "with space", "quote\"and\\backslash", "new\nline", "", "inf", "true", "x:0", "a:",
               "7up", "tab\there"};
    a.s = "{braces}, [brackets] and = signs";
    a.f = 0.1;
    a.fs = {-0.0, 1e-300, 5e-324, std::numeric_limits<double>::max(), INFINITY, -INFINITY, NAN, -NAN, 1.0, -2.5e20};
    a.is = {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), 0, -1};
    a.nested = {{1, 2}, {}, {3}};
    a.b = true;
    a.t = dtype::fp8e4m3fn;
    a.sh = shape(dtype::int4, {dynamic_dim{1, 8, {2, 4}, "batch"}, dynamic_dim{3, 3, {}, ""}});
    operation op(std::make_shared<detail::op_model<test_attributes>>(a));
    m.add_return({m.add_instruction(op, {x})});
    std::string text = to_string(p);
    program q = parse_text(text);
    EXPECT_EQ(to_string(q), text);
    value got = std::prev(q.main().end(), 2)->get_operator().attributes();
    value want = std::prev(m.end(), 2)->get_operator().attributes();
    for (const char* key : {"s", "words", "f", "is", "nested", "b", "t", "sh"})
        EXPECT_EQ(got.at(key), want.at(key)) << key;
}

TEST(text_parser, literals_of_every_dtype_are_exact) {
    const double inf = INFINITY, nan = NAN;
    program p;
    module& m = p.main();
    auto ints = [&](dtype t, std::vector<std::int64_t> v) {
        m.add_literal(literal(shape(t, lens{v.size()}), v));
    };
    auto floats = [&](dtype t, std::vector<double> v) {
        m.add_literal(literal(shape(t, lens{v.size()}), v));
    };
    ints(dtype::bool_, {0, 1, 1});
    ints(dtype::int8, {-128, 127, 0});
    ints(dtype::int16, {-32768, 32767});
    ints(dtype::int32, {-2147483648LL, 2147483647});
    ints(dtype::int64, {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()});
    ints(dtype::uint8, {0, 255});
    ints(dtype::uint16, {65535});
    ints(dtype::uint32, {4294967295LL});
    ints(dtype::uint64, {-1, std::numeric_limits<std::int64_t>::min(), 7});   // 2^64-1, 2^63 as bit patterns
    ints(dtype::int4, {-8, -1, 0, 7, 3});
    ints(dtype::uint4, {0, 15, 9});
    floats(dtype::float16, {65504, 5.960464477539063e-08, -0.0, inf, -inf, nan, 0.1});
    floats(dtype::bfloat16, {3.3895313892515355e38, 0.1, -inf, nan});
    floats(dtype::float32, {0.1, 1.401298464324817e-45, 3.4028234663852886e38, -nan});
    floats(dtype::float64, {0.1, 5e-324, std::numeric_limits<double>::max(), -0.0});
    floats(dtype::fp8e4m3fn, {448, -448, 0.001953125, nan, 0.1});
    floats(dtype::fp8e5m2, {57344, inf, -inf, nan, 1.52587890625e-05});
    m.add_literal(literal(shape(dtype::float32, lens{2, 2}), std::vector<double>{1, 2, 3, 4}));
    m.add_literal(literal(shape(dtype::int32, lens{}), std::vector<std::int64_t>{-5}));
    std::string text = to_string(p);
    program q = parse_text(text);
    ASSERT_EQ(to_string(q), text);
    for (auto a = m.begin(), b = q.main().begin(); a != m.end(); ++a, ++b)
        EXPECT_TRUE(a->get_literal() == b->get_literal()) << to_string(a->get_shape());
}

TEST(text_parser, dynamic_and_tuple_shapes) {
    expect_round_trip(
        "module: \"main\"\n"
        "x = @param:x -> float_type, {batch[1..64:1,8], 784}\n"
        "y = @param:y -> half_type, {?[1..inf], 3, seq[0..512]}\n"
        "t = @param:t -> tuple_type, {float_type, {2}, {1}; tuple_type, {int64_type, {}, {}}; "
        "bool_type, {?[2..4:3]}}\n"
        "e = @param:e -> tuple_type, {}\n"
        "@0 = relu(x) -> float_type, {batch[1..64:1,8], 784}\n"
        "@1 = @return(@0,y,t,e)\n");
}

TEST(text_parser, modules_may_call_modules_defined_later) {
    // relu ignores module inputs: the modules here only exercise how references resolve.
    expect_round_trip(
        "module: \"main\"\n"
        "x = @param:x -> float_type, {2}, {1}\n"
        "@0 = relu(x), [b, a] -> float_type, {2}, {1}\n"
        "@1 = @return(@0)\n"
        "\n"
        "module: \"a\"\n"
        "x = @param:x -> float_type, {2}, {1}\n"
        "@0 = relu(x), [b] -> float_type, {2}, {1}\n"
        "@1 = @return(@0)\n"
        "\n"
        "module: \"b\"\n"
        "@0 = @literal{1, 2} -> int8_type, {2}, {1}\n"
        "@1 = @return(@0)\n");
}

TEST(text_parser, hand_written_text) {
    // No header (main), comments, blank lines, shapes left out, strides left out, short type names.
    program p = parse_text(
        "# a comment\n"
        "\n"
        "  x = @param:x -> float32, {2, 3}\n"
        "  @a = relu(x)\r\n"
        "  @b = neg(@a) -> float_type, {2, 3}\n"
        "  @r = @return(@b)\n");
    EXPECT_EQ(to_string(p),
              "module: \"main\"\n"
              "x = @param:x -> float_type, {2, 3}, {3, 1}\n"
              "@0 = relu(x) -> float_type, {2, 3}, {3, 1}\n"
              "@1 = neg(@0) -> float_type, {2, 3}, {3, 1}\n"
              "@2 = @return(@1)\n");
}

const std::string x_line = "x = @param:x -> float_type, {2}, {1}\n";

TEST(text_parser, syntax_errors_name_line_and_column) {
    expect_parse_error(x_line + "@0 = relu(x\n", "line 2, column 12: expected ')', found end of line");
    expect_parse_error(x_line + "@0 relu(x)\n", "line 2, column 4: expected '='");
    expect_parse_error(x_line + "@0 = relu(x) -> floaty_type, {2}, {1}\n", "line 2, column 17: expected a type name");
    expect_parse_error("x = @param:x float_type, {2}, {1}\n", "line 1, column 14: expected '->'");
    expect_parse_error("x = @param:x -> float_type, {b[1..], 2}\n",
                       "line 1, column 35: expected a maximum size or 'inf', found ']");
    expect_parse_error(x_line + "@0 = leaky_relu[alpha=](x)\n", "line 2, column 23: expected a value");
    expect_parse_error(x_line + "@0 = gelu[approximate=\"tanh](x)\n", "line 2, column 32: expected a closing '\"'");
    expect_parse_error("x = @param:x -> float_type, {2, 3}, {1}\n", "line 1, column 37: expected 2 strides, found 1");
    expect_parse_error(x_line + "@0 = relu(x) -> float_type, {2}, {1} junk\n",
                       "line 2, column 38: expected end of line");
    expect_parse_error("@0 = @literal{1, 300} -> int8_type, {2}, {1}\n",
                       "line 1, column 18: expected an integer that fits int8_type, found '300'");
    expect_parse_error("@0 = @literal{1, x} -> float_type, {2}, {1}\n", "line 1, column 18: expected a number");
}

TEST(text_parser, semantic_errors_name_the_line) {
    expect_parse_error(x_line + "@0 = frobnicate(x)\n", "line 2: unknown op 'frobnicate'");
    expect_parse_error(x_line + "@0 = relu[alpha=1](x)\n", "line 2: relu: unknown attribute 'alpha'");
    expect_parse_error(x_line + "@0 = relu(@7)\n", "line 2, column 11: undefined instruction '@7'");
    expect_parse_error(x_line + "@0 = relu(x)\n@0 = neg(x)\n",
                       "line 3, column 1: '@0' is defined twice (first on line 2)");
    expect_parse_error(x_line + "@0 = relu(x) -> float_type, {3}, {1}\n",
                       "line 2: recorded shape float_type, {3}, {1} but relu computes float_type, {2}, {1}");
    expect_parse_error(x_line + "@0 = relu(x), [nowhere]\n", "line 2, column 16: undefined module 'nowhere'");
    expect_parse_error(x_line + "@0 = relu(x), [main]\n", "line 2, column 16: module 'main' calls itself");
    expect_parse_error("@0 = @literal{1, 2, 3} -> float_type, {2}, {1}\n", "line 1: 3 values given for the 2 elements");
    expect_parse_error(x_line + "@0 = @return(x)\n@1 = relu(x)\n", "line 3: instruction after @return");
    expect_parse_error(x_line + "@0 = relu(x, x)\n", "line 2: relu: ");
    expect_parse_error("module: \"a\"\nmodule: \"a\"\n", "line 2: module 'a' is defined twice");
    // An error inside a submodule names the submodule's line, not the caller's.
    expect_parse_error(x_line + "@0 = relu(x), [s]\nmodule: \"s\"\n@0 = bogus()\n", "line 4: unknown op 'bogus'");
}

TEST(text_parser, files) {
    auto dir = std::filesystem::temp_directory_path() / ("kiln_text_parser_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::string good = (dir / "good.kir").string(), bad = (dir / "bad.kir").string();
    std::ofstream(good) << x_line << "@0 = @return(x)\n";
    std::ofstream(bad) << x_line << "@0 = relu(\n";
    EXPECT_EQ(parse_text_file(good).main().size(), 2u);
    try {
        parse_text_file(bad);
        ADD_FAILURE() << "no error";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find(bad + ": line 2, column 11: expected"), std::string::npos) << e.what();
    }
    try {
        parse_text_file((dir / "missing.kir").string());
        ADD_FAILURE() << "no error";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("missing.kir"), std::string::npos) << e.what();
    }
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln
