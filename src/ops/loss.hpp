// nll_loss, as ONNX NegativeLogLikelihoodLoss. Declared here for typed access (lowering); the body
// and its rules in loss.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct nll_loss {
    static constexpr std::string_view name = "nll_loss";
    std::string reduction = "mean";
    bool has_ignore_index = false;
    std::int64_t ignore_index = 0;
    auto attributes() {
        return fields(field("reduction", reduction), field("has_ignore_index", has_ignore_index),
                      field("ignore_index", ignore_index));
    }
    op_traits traits() const { return {.precision_sensitive = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
