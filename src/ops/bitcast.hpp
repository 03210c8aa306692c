// bitcast (ONNX BitCast): reinterprets each element's bits as target_type. Declared here for typed
// access (lowering); the body and its rules in bitcast.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct bitcast {
    static constexpr std::string_view name = "bitcast";
    dtype target_type = dtype::float32;
    auto attributes() { return fields(field("target_type", target_type)); }

    // Packed targets (widths must match, so a packed target means a packed input) and bool targets.
    bool copies() const { return is_packed(target_type) || target_type == dtype::bool_; }

    shape compute_shape(std::span<const shape> in) const;
    op_traits traits() const { return {.output_alias = copies() ? -1 : 0, .precision_sensitive = true}; }
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
