// The traits passes read instead of op names: which registered ops carry them. A new op that is a
// contraction, a broadcast view or precision sensitive is added here on purpose.
#include <gtest/gtest.h>

#include <functional>

#include "core/operation.hpp"

namespace kiln {
namespace {

std::vector<std::string> carriers(const std::function<bool(const op_traits&)>& has) {
    std::vector<std::string> r;
    for (const auto& name : registered_ops())
        if (has(make_op(name).traits())) r.push_back(name);
    return r;
}

TEST(op_traits, contraction) {
    EXPECT_EQ(carriers([](const op_traits& t) { return t.contraction; }),
              (std::vector<std::string>{"convolution", "dot", "gemm"}));
}

TEST(op_traits, broadcast_view) {
    EXPECT_EQ(carriers([](const op_traits& t) { return t.broadcast_view; }),
              (std::vector<std::string>{"broadcast", "expand", "multibroadcast"}));
}

TEST(op_traits, precision_sensitive) {
    EXPECT_EQ(carriers([](const op_traits& t) { return t.precision_sensitive; }),
              (std::vector<std::string>{"batch_norm_inference", "bitcast", "cumprod", "cumsum", "det", "dft",
                                        "group_norm", "instancenorm", "layernorm", "linear_attention", "logsoftmax",
                                        "lp_normalization", "lrn", "mean_variance_normalization", "nll_loss",
                                        "quantizelinear", "rms_norm", "softmax"}));
}

}  // namespace
}  // namespace kiln
