// Typed op access (operation::get, get_if): lowering reads an op's attributes from its struct.
#include <gtest/gtest.h>

#include "../core/expect_error.hpp"
#include "ops/convolution.hpp"
#include "ops/gemm.hpp"
#include "ops/unary.hpp"

namespace kiln {
namespace {

TEST(typed_access, get_reads_the_op_struct) {
    operation conv = make_op("convolution", {{"padding", value_array{value(1), value(2)}}, {"group", 2}});
    EXPECT_EQ(conv.get<ops::convolution>().padding, (std::vector<std::int64_t>{1, 2}));
    EXPECT_EQ(conv.get<ops::convolution>().group, 2);
    EXPECT_FLOAT_EQ(make_op("leaky_relu", {{"alpha", 0.25}}).get<ops::leaky_relu>().alpha, 0.25f);
}

TEST(typed_access, get_if_checks_the_dynamic_type) {
    operation conv = make_op("convolution");
    EXPECT_NE(conv.get_if<ops::convolution>(), nullptr);
    EXPECT_EQ(conv.get_if<ops::dot>(), nullptr);
    EXPECT_EQ(operation().get_if<ops::dot>(), nullptr);
}

TEST(typed_access, get_of_another_op_names_both) {
    expect_error([] { make_op("gemm", {{"alpha", 2}}).get<ops::convolution>(); },
                 "operation::get: the op is gemm[alpha=2");
    expect_error([] { make_op("gemm").get<ops::convolution>(); }, ", not convolution");
}

}  // namespace
}  // namespace kiln
