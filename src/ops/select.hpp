// Three-input elementwise ops with numpy broadcasting of all three inputs (bodies in select.cpp).
#pragma once
#include "ops/pointwise.hpp"

namespace kiln::ops {

// where(cond, a, b): a where cond is true, else b (ONNX Where).
struct where {
    static constexpr std::string_view name = "where";
    op_traits traits() const { return {.pointwise = true}; }
    std::string scalar_expr(std::span<const std::string> args) const { return default_scalar_expr(*this, args); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// clip(x, lo, hi): ONNX Clip with both bounds given (the ONNX frontend supplies the type's full
// range for an omitted one). When lo > hi the result is hi, as in ONNX.
struct clip {
    static constexpr std::string_view name = "clip";
    op_traits traits() const { return {.pointwise = true}; }
    std::string scalar_expr(std::span<const std::string> args) const { return default_scalar_expr(*this, args); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
