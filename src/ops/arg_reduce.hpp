// argmax and argmin along one axis (ONNX ArgMax/ArgMin opset 13): int64 indices of the first
// extreme element, or the last with select_last_index. NaN counts as the extreme, as in numpy.
// Declared here for typed access (lowering); bodies in arg_reduce.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

template <class Derived>
struct arg_reduce_op {
    std::int64_t axis = 0;
    bool keepdims = true;
    bool select_last_index = false;
    auto attributes() {
        return fields(field("axis", axis), field("keepdims", keepdims), field("select_last_index", select_last_index));
    }
    op_traits traits() const { return {.reduction = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
    // Whether v, met after the current best bv, becomes the new best.
    template <class C> bool replaces(C v, C bv) const;
};

struct argmax : arg_reduce_op<argmax> {
    static constexpr std::string_view name = "argmax";
    template <class C> static bool better(C v, C best) { return v > best; }
};

struct argmin : arg_reduce_op<argmin> {
    static constexpr std::string_view name = "argmin";
    template <class C> static bool better(C v, C best) { return v < best; }
};

}  // namespace kiln::ops
