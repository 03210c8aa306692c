// convert: elementwise type conversion, ONNX Cast (body and conversion rules in convert.cpp).
// It has no scalar_expr: its function is the element cast from one type to another, which a code
// generator writes when it loads and stores elements, not a function on compute values.
#pragma once
#include "ops/pointwise.hpp"

namespace kiln::ops {

struct convert {
    static constexpr std::string_view name = "convert";
    dtype target_type = dtype::float32;
    bool saturate = true;   // fp8 targets: clamp out-of-range values instead of giving Inf or NaN
    std::string round_mode = "up";   // fp8e8m0 target: "up", "down" or "nearest"
    auto attributes() {
        return fields(field("target_type", target_type), field("saturate", saturate), field("round_mode", round_mode));
    }
    op_traits traits() const { return {.pointwise = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
