// The traits passes read instead of op names: which registered ops carry them. A new op that is a
// contraction, a broadcast view, precision sensitive or takes sequences or strings is added here on
// purpose.
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
                                        "group_norm", "instancenorm", "label_encoder", "linear_attention",
                                        "logsoftmax", "lp_normalization", "lrn", "mean_variance_normalization",
                                        "nll_loss", "quantizelinear", "softmax", "string_convert"}));
}

// Every other op is refused sequence and optional inputs (operation::compute_shape).
TEST(op_traits, sequences) {
    EXPECT_EQ(carriers([](const op_traits& t) { return t.sequences; }),
              (std::vector<std::string>{"concat_from_sequence", "if", "loop", "optional", "optional_get_element",
                                        "optional_has_element", "sequence_at", "sequence_construct",
                                        "sequence_empty", "sequence_erase", "sequence_insert", "sequence_length",
                                        "sequence_map", "split_to_sequence"}));
}

// Every other op is refused string inputs and outputs (operation::compute_shape).
TEST(op_traits, strings) {
    EXPECT_EQ(carriers([](const op_traits& t) { return t.strings; }),
              (std::vector<std::string>{"broadcast", "concat", "contiguous", "expand", "flatten", "gather",
                                        "get_tuple_elem", "identity", "label_encoder", "multibroadcast",
                                        "regex_full_match", "reshape", "slice", "squeeze", "string_concat",
                                        "string_convert", "string_equal", "string_normalizer", "string_split",
                                        "tfidf_vectorizer", "transpose", "unsqueeze"}));
}

}  // namespace
}  // namespace kiln
