// softmax and logsoftmax along one axis (bodies in softmax.cpp), ONNX opset 13 semantics.
#pragma once
#include <cstdint>
#include <vector>

#include "core/op.hpp"

namespace kiln::ops {

// A derived op supplies `name` and `static void apply(std::vector<double>& lane)`, which turns
// one lane along `axis` into its result.
template <class Derived>
struct softmax_op {
    std::int64_t axis = -1;
    auto attributes() { return fields(field("axis", axis)); }
    op_traits traits() const { return {.precision_sensitive = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

struct softmax : softmax_op<softmax> {
    static constexpr std::string_view name = "softmax";
    static void apply(std::vector<double>& lane);
};

struct logsoftmax : softmax_op<logsoftmax> {
    static constexpr std::string_view name = "logsoftmax";
    static void apply(std::vector<double>& lane);
};

}  // namespace kiln::ops
