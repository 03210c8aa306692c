// linear_attention, as ONNX LinearAttention (the rules in linear_attention.cpp). Declared here for
// typed access (lowering); the bodies in linear_attention.cpp.
#pragma once
#include <string>

#include "ops/common.hpp"

namespace kiln::ops {

struct linear_attention {
    static constexpr std::string_view name = "linear_attention";
    std::int64_t q_num_heads = 1;
    std::int64_t kv_num_heads = 1;
    float scale = 0;
    std::string update_rule = "gated_delta";
    auto attributes() {
        return fields(field("q_num_heads", q_num_heads), field("kv_num_heads", kv_num_heads), field("scale", scale),
                      field("update_rule", update_rule));
    }
    op_traits traits() const { return {.precision_sensitive = true}; }

    bool gated() const { return update_rule == "gated" || update_rule == "gated_delta"; }
    bool delta() const { return update_rule == "delta" || update_rule == "gated_delta"; }

    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
