// Sizes an input may ask for: shapes whose element count or byte size overflows are refused where
// they are made, tensors above max_tensor_bytes are refused before they are allocated (naming the
// node when a program asks), and nested values are bounded so that readers cannot overflow the stack.
#include "core/limits.hpp"

#include <gtest/gtest.h>

#include "core/argument.hpp"
#include "core/eval.hpp"
#include "core/shape.hpp"
#include "core/text_parser.hpp"
#include "core/value.hpp"
#include "expect_error.hpp"

namespace kiln {
namespace {

using lens = std::vector<std::size_t>;
constexpr std::size_t two_to(int n) { return std::size_t{1} << n; }

TEST(limits, element_count_overflow_is_an_error) {
    expect_error(
        [] {
            shape(dtype::float32, lens{two_to(40), two_to(40), two_to(40)});
        },
        "shape float_type, {1099511627776, 1099511627776, 1099511627776}: its element count exceeds 2^63");
    expect_error([] { shape(dtype::int8, lens{two_to(32), two_to(32)}); }, "its element count exceeds 2^63");
    // The byte count wraps (2^62 + 1 floats are 2^64 + 4 bytes) though the element count fits.
    expect_error([] { shape(dtype::float32, lens{two_to(62) + 1}); }, "its size in bytes exceeds 2^63");
    expect_error([] { shape(dtype::int8, lens{two_to(62)}).with_type(dtype::float64); },
                 "its size in bytes exceeds 2^63");
    expect_error([] { shape(dtype::int8, lens{2, 2}, lens{two_to(63), 1}); }, "its element space exceeds 2^63");
    expect_error(
        [] {
            shape(dtype::float32, std::vector<dynamic_dim>{{two_to(63) + 1, two_to(63) + 1, {}, {}}});
        },
        "its element count exceeds 2^63");
}

TEST(limits, large_but_representable_shapes_are_fine) {
    EXPECT_EQ(shape(dtype::int8, lens{two_to(31), two_to(32)}).elements(), two_to(63));
    EXPECT_EQ(shape(dtype::int4, lens{two_to(63)}).bytes(), two_to(62));
    EXPECT_EQ(shape(dtype::float32, lens{0, two_to(62), two_to(62)}).elements(), 0u);  // empty: nothing overflows
    EXPECT_EQ(shape(dtype::float32, lens{two_to(40), 1}, lens{0, 0}).bytes(), 4u);     // broadcast
}

// Sets max_tensor_bytes for one test and restores it.
struct tensor_limit {
    std::size_t old = max_tensor_bytes();
    explicit tensor_limit(std::size_t bytes) { set_max_tensor_bytes(bytes); }
    ~tensor_limit() { set_max_tensor_bytes(old); }
};

TEST(limits, max_tensor_bytes_defaults_to_the_machine_memory) {
    EXPECT_GT(max_tensor_bytes(), two_to(20));
    EXPECT_LT(max_tensor_bytes(), two_to(60));
}

TEST(limits, arguments_above_the_limit_are_refused) {
    tensor_limit limit(1024);
    argument small(shape(dtype::float32, lens{256}));
    expect_error([] { argument(shape(dtype::float32, lens{257})); },
                 "a tensor of float_type, {257}, {1} needs 1028 bytes, more than the limit of 1024 bytes");
}

TEST(limits, size_bombs_name_the_node) {
    // Broadcasting a constant to 2^40 elements; the error comes before any allocation.
    program p = parse_text(R"(
x = @param:x -> float_type, {1}
@0 = multibroadcast[out_lens={1024, 1024, 1024, 1024}](x) -> float_type, {1024, 1024, 1024, 1024}, {0, 0, 0, 0}
@1 = contiguous(@0) -> float_type, {1024, 1024, 1024, 1024}
@2 = @return(@1)
)");
    argument x(shape(dtype::float32, lens{1}));
    expect_error([&] { evaluate(p, {{"x", x}}); }, "@1 = contiguous");
    expect_error([&] { evaluate(p, {{"x", x}}); }, "needs 4398046511104 bytes, more than the limit");
}

TEST(limits, deeply_nested_json_is_an_error) {
    expect_error([] { parse_json(std::string(30000, '[')); }, "JSON: nesting deeper than 512 levels");
    expect_error([] { parse_json(std::string(30000, '{')); }, "JSON:");
    std::string ok = std::string(500, '[') + std::string(500, ']');
    EXPECT_TRUE(parse_json(ok).is_array());
}

TEST(limits, deeply_nested_text_ir_values_are_an_error) {
    std::string deep = "x = @param:x -> float_type, {1}\n@0 = relu[a=" + std::string(30000, '{') + "](x)\n";
    expect_error([&] { parse_text(deep); }, "values nest deeper than 512 levels");
}

}  // namespace
}  // namespace kiln
