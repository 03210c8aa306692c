// tensor_scatter, as ONNX TensorScatter: a KV cache update. Declared here for typed access
// (lowering); the body and its rules in tensor_scatter.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct tensor_scatter {
    static constexpr std::string_view name = "tensor_scatter";
    std::int64_t axis = -2;
    std::string mode = "linear";
    auto attributes() { return fields(field("axis", axis), field("mode", mode)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
