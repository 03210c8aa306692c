// NaN goes through Relu and MaxPool as ONNX has it (max(0, NaN) and a window's max are NaN), rather
// than being dropped by a comparison that is false for NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/eval.hpp"
#include "core/operation.hpp"

namespace kiln {
namespace {

constexpr float nan = std::numeric_limits<float>::quiet_NaN();

argument floats(const std::vector<std::size_t>& lens, const std::vector<float>& v) {
    argument a(shape(dtype::float32, lens));
    for (std::size_t i = 0; i < v.size(); ++i) a.as<float>()[i] = v[i];
    return a;
}

TEST(nan_propagation, relu) {
    argument y = compute_op(make_op("relu", value()), std::vector<argument>{floats({4}, {nan, -1, 2, -0.0f})});
    EXPECT_TRUE(std::isnan(y.as<float>()[0]));
    EXPECT_EQ(y.as<float>()[1], 0.0f);
    EXPECT_EQ(y.as<float>()[2], 2.0f);
    EXPECT_FALSE(std::signbit(y.as<float>()[3]));  // -0 becomes 0
}

TEST(nan_propagation, max_pool) {
    value attrs{{"mode", "max"},
                {"lengths", value(value_array{2})},
                {"stride", value(value_array{2})},
                {"padding", value(value_array{0, 0})},
                {"dilations", value(value_array{1})}};
    // Windows [1, NaN], [NaN, 5] and [2, 3]: NaN first, NaN last, none.
    argument y =
        compute_op(make_op("pooling", attrs), std::vector<argument>{floats({1, 1, 6}, {1, nan, nan, 5, 2, 3})});
    EXPECT_TRUE(std::isnan(y.as<float>()[0]));
    EXPECT_TRUE(std::isnan(y.as<float>()[1]));
    EXPECT_EQ(y.as<float>()[2], 3.0f);
}

}  // namespace
}  // namespace kiln
