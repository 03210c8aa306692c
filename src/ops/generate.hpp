// Ops of generate.cpp that targets lower, declared here for typed access.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

// ONNX Range: output[i] = start + i * delta for i < max(ceil((limit - start) / delta), 0); the
// three inputs are scalars of one type. Integers compute exactly in int64, floats in double.
// Data-dependent: the length is known only at compute.
struct range {
    static constexpr std::string_view name = "range";
    op_traits traits() const { return {.data_dependent = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
    // The output length, or an error for a zero delta or a length past int64.
    static std::size_t length(double start, double limit, double delta);
    static std::size_t length(std::int64_t start, std::int64_t limit, std::int64_t delta);
};

// The indices of the nonzero elements (NaN counts as nonzero) in row-major order, as int64
// [rank, count]: column j holds the multi-index of the j-th nonzero element. Data-dependent: the
// count is known only at compute.
struct nonzero {
    static constexpr std::string_view name = "nonzero";
    op_traits traits() const { return {.data_dependent = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape&, std::span<const argument> args) const;
};

}  // namespace kiln::ops
