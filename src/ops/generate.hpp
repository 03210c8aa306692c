// Ops of generate.cpp that targets lower, declared here for typed access.
#pragma once
#include <algorithm>
#include <limits>

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

// The input's lens [start, end) as int64 (ONNX Shape): negative bounds count from the rank and
// bounds outside [0, rank] clamp to it, as ONNX specifies; the default end takes every dim.
// The input may be dynamic: the output length depends only on its rank, the values only on its
// lens (never its data).
struct shape_of {
    std::int64_t start = 0;
    std::int64_t end = std::numeric_limits<std::int64_t>::max();
    static constexpr std::string_view name = "shape_of";
    auto attributes() { return fields(field("start", start), field("end", end)); }

    std::pair<std::size_t, std::size_t> bounds(std::size_t rank) const {
        auto n = static_cast<std::int64_t>(rank);
        auto clamp = [&](std::int64_t b) {
            return static_cast<std::size_t>(std::clamp(b < 0 ? b + n : b, std::int64_t{0}, n));
        };
        std::size_t s = clamp(start), e = clamp(end);
        return {s, std::max(s, e)};
    }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
