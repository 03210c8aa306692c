// det, as ONNX Det: the determinant of each square matrix in the last two dims of [..., M, M],
// giving [...]. Declared here for typed access (lowering); the body in det.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct det {
    static constexpr std::string_view name = "det";
    op_traits traits() const { return {.precision_sensitive = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
