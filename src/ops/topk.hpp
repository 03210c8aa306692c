// topk, as ONNX TopK with K as the attribute k: the k largest (or smallest) elements along an
// axis and their int64 indices, as a tuple (values, indices). Ties keep the lower index first
// (a stable order), NaN counts above every number. Declared here for typed access (lowering);
// bodies in topk.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

// With sorted=false ONNX leaves the order unspecified; the reference returns it sorted all the same.
struct topk {
    std::int64_t k = 1;
    std::int64_t axis = -1;
    bool largest = true;
    bool sorted = true;
    static constexpr std::string_view name = "topk";
    auto attributes() {
        return fields(field("k", k), field("axis", axis), field("largest", largest), field("sorted", sorted));
    }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
