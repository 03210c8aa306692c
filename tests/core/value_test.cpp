// value: accessors and their errors, JSON round trips (nesting, escapes, numbers, bytes), JSON
// errors, and the text IR attribute form.
#include "core/value.hpp"

#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace kiln {
namespace {

void expect_json_round_trip(const value& v) {
    EXPECT_EQ(parse_json(to_json(v)), v) << to_json(v);
    EXPECT_EQ(parse_json(to_json(v, 2)), v) << to_json(v, 2);
}

TEST(value, kinds_and_accessors) {
    EXPECT_TRUE(value().is_null());
    EXPECT_TRUE(value(3).is_int());
    EXPECT_TRUE(value(std::size_t{3}).is_int());
    EXPECT_TRUE(value(2.5f).is_float());
    EXPECT_TRUE(value("s").is_string());
    EXPECT_EQ(value(3).as_float(), 3.0);
    EXPECT_EQ(value(4.0).as_int(), 4);
    EXPECT_TRUE(value(1).as_bool());
    EXPECT_EQ(value(true).as_int(), 1);
    EXPECT_EQ(value("inf").as_float(), INFINITY);
    expect_error([] { value(2.5).as_int(); }, "expected int value, got float 2.5");
    expect_error([] { value(2).as_bool(); }, "expected bool value, got int 2");
    expect_error([] { value("x").as_array(); }, "expected array value, got string x");
    expect_error([] { value(1).as_string(); }, "expected string value, got int 1");
}

TEST(value, objects_keep_order_and_replace_on_set) {
    value o = value_object{};
    o.set("b", 1);
    o.set("a", 2);
    o.set("b", 3);
    ASSERT_EQ(o.as_object().size(), 2u);
    EXPECT_EQ(o.as_object()[0].first, "b");
    EXPECT_EQ(o.at("b"), value(3));
    EXPECT_TRUE(o.contains("a"));
    EXPECT_FALSE(o.contains("c"));
    EXPECT_FALSE(value(1).contains("a"));
    expect_error([&] { o.at("c"); }, "missing key 'c' in {b: 3, a: 2}");
    value n;
    n.as_array().push_back(1);   // a null becomes what it is used as
    EXPECT_EQ(n, value(value_array{1}));
}

TEST(value, json_round_trip_nested) {
    value v{{"name", "conv"},
            {"list", value_array{1, 2.5, "x", true, value(), value_array{}, value_object{}}},
            {"nested", value{{"deep", value_array{value{{"k", -7}}}}}}};
    expect_json_round_trip(v);
    EXPECT_EQ(to_json(value_array{1, "a"}), "[1, \"a\"]");
    EXPECT_EQ(to_json(value{{"a", 1}}, 2), "{\n  \"a\": 1\n}");
}

TEST(value, json_strings_and_escapes) {
    expect_json_round_trip(value("quote \" backslash \\ newline \n tab \t"));
    expect_json_round_trip(value(""));
    EXPECT_EQ(parse_json(R"("a\tb\r\nc\/\u0041\u00e9\u20ac")"), value("a\tb\r\nc/A\xc3\xa9\xe2\x82\xac"));
    EXPECT_EQ(parse_json(R"({"k\"ey": 1})").as_object()[0].first, "k\"ey");
}

TEST(value, json_numbers) {
    const auto lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
    for (value v : {value(0), value(-1), value(lo), value(hi), value(0.1), value(-2.5e-300), value(1e300),
                    value(5e-324), value(1.0), value(-0.0)})
        expect_json_round_trip(v);
    EXPECT_TRUE(parse_json("1.0").is_float());
    EXPECT_TRUE(parse_json("1e3").is_float());
    EXPECT_TRUE(parse_json("-12").is_int());
    EXPECT_TRUE(std::signbit(parse_json(to_json(value(-0.0))).as_float()));
    // JSON has no infinities or NaN: they travel as strings that as_float reads back.
    EXPECT_EQ(to_json(value(-INFINITY)), "\"-inf\"");
    EXPECT_EQ(parse_json(to_json(value(INFINITY))).as_float(), INFINITY);
    EXPECT_TRUE(std::isnan(parse_json(to_json(value(NAN))).as_float()));
}

TEST(value, json_bytes) {
    for (std::size_t n = 0; n < 6; ++n) {   // every base64 padding length
        value_bytes b;
        for (std::size_t i = 0; i < n; ++i) b.data.push_back(static_cast<std::uint8_t>(250 + i));
        expect_json_round_trip(value(b));
    }
    EXPECT_EQ(to_json(value(value_bytes{{1, 2, 3, 255}})), R"({"bytes": "AQID/w=="})");
}

TEST(value, json_errors) {
    expect_error([] { parse_json("[1, 2"); }, "JSON: expected ']' at offset 5");
    expect_error([] { parse_json(R"({"a" 1})"); }, "JSON: expected ':'");
    expect_error([] { parse_json("{1: 2}"); }, "JSON: expected '\"'");
    expect_error([] { parse_json("tru"); }, "JSON: unexpected character at offset 0");
    expect_error([] { parse_json(""); }, "JSON: unexpected end");
    expect_error([] { parse_json("1 2"); }, "JSON: trailing characters at offset 2");
    expect_error([] { parse_json("1.2.3"); }, "JSON: bad number");
    expect_error([] { parse_json(R"("abc)"); }, "JSON: expected '\"'");
    expect_error([] { parse_json(R"({"bytes": "A*"})"); }, "invalid base64 character '*'");
    expect_error([] { parse_json(R"("\uZZZZ")"); }, "JSON: bad \\u escape at offset");   // not std::stoul's message
    expect_error([] { parse_json(R"("\u-123")"); }, "JSON: bad \\u escape");
}

TEST(value, text_form) {
    EXPECT_EQ(to_string(value(1.0)), "1.0");
    EXPECT_EQ(to_string(value(0.1)), "0.1");
    EXPECT_EQ(to_string(value(1e20)), "1e+20");
    EXPECT_EQ(to_string(value(-NAN)), "-nan");
    EXPECT_EQ(to_string(value("float_type")), "float_type");
    EXPECT_EQ(to_string(value("x:0")), "x:0");
    EXPECT_EQ(to_string(value("a b")), "\"a b\"");
    EXPECT_EQ(to_string(value("inf")), "\"inf\"");   // a bare inf would read back as a number
    EXPECT_EQ(to_string(value("7up")), "\"7up\"");
    EXPECT_EQ(to_string(value("")), "\"\"");
    EXPECT_EQ(to_string(value{{"a", value_array{1, 2}}, {"b", true}}), "{a: {1, 2}, b: true}");
    EXPECT_EQ(to_string(value(value_bytes{{1, 2, 3}})), "bytes:AQID");
    EXPECT_EQ(to_string(value()), "null");
}

TEST(value, equality_and_hash) {
    value a = value_array{1, "x", 2.5};
    value b = value_array{1, "x", 2.5};
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.hash(), b.hash());
    EXPECT_NE(a, value(value_array{1, "x", 2.6}));
    EXPECT_NE(value(1), value(1.0));   // int and float are different kinds
    EXPECT_NE(value(1).hash(), value(value_array{1}).hash());
}

}  // namespace
}  // namespace kiln
