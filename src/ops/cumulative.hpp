// Running sums and products along one axis (ONNX CumSum, CumProd; the axis, a tensor input in
// ONNX, is an attribute here). exclusive: each output leaves out its own element; reverse: the
// run goes from the end. Declared here for typed access (lowering); bodies in cumulative.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

// Derived supplies `name`, `identity` and `combine(acc, v)`.
template <class Derived>
struct cumulative_op {
    std::int64_t axis = 0;
    bool exclusive = false;
    bool reverse = false;
    auto attributes() { return fields(field("axis", axis), field("exclusive", exclusive), field("reverse", reverse)); }
    op_traits traits() const { return {.precision_sensitive = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

struct cumsum : cumulative_op<cumsum> {
    static constexpr std::string_view name = "cumsum";
    static constexpr int identity = 0;
    template <class C> static C combine(C a, C b);
};

struct cumprod : cumulative_op<cumprod> {
    static constexpr std::string_view name = "cumprod";
    static constexpr int identity = 1;
    template <class C> static C combine(C a, C b);
};

}  // namespace kiln::ops
