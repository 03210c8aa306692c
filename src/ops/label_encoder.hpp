// label_encoder, as ai.onnx.ml LabelEncoder (the rules in label_encoder.cpp). Declared here for
// typed access (the gpu lowering of numeric keys and values).
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct label_encoder {
    static constexpr std::string_view name = "label_encoder";
    dtype key_type = dtype::string;
    dtype value_type = dtype::int64;
    value keys = value_array{};
    value values = value_array{};
    value default_value = std::int64_t{-1};
    auto attributes() {
        return fields(field("key_type", key_type), field("value_type", value_type), field("keys", keys),
                      field("values", values), field("default_value", default_value));
    }
    // Float keys match exactly, so float inputs stay float32 under --fp16/--bf16.
    op_traits traits() const { return {.precision_sensitive = true, .strings = true}; }

    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
