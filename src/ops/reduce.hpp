// Reductions over a list of axes with ONNX Reduce* semantics (bodies and the rules for empty
// axes and empty sets in reduce.cpp).
#pragma once
#include "ops/pointwise.hpp"

namespace kiln::ops {

template <class T> concept numeric_elem = !std::is_same_v<T, bool>;
template <class T> concept float_elem = is_float_v<T>;
bool numeric_or_bool(dtype t);

// A derived op supplies `name` and `template <class T> compute_t<T> reduce(span<const compute_t<T>>)`
// constrained to the storage types T it accepts.
template <class Derived, bool (*Accepts)(dtype) = numeric_type>
struct reduce_op {
    std::vector<std::int64_t> axes;
    bool keepdims = true;
    bool noop_with_empty_axes = false;
    auto attributes() {
        return fields(field("axes", axes), field("keepdims", keepdims),
                      field("noop_with_empty_axes", noop_with_empty_axes));
    }
    op_traits traits() const { return {.reduction = true}; }
    // Empty axes with noop_with_empty_axes: the output is the input.
    bool noop() const { return axes.empty() && noop_with_empty_axes; }
    // The axes reduced for an input of ndim dims: all of them when `axes` is empty.
    std::vector<std::size_t> reduced_axes(std::size_t ndim) const;
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

#define KILN_REDUCE(NAME, ACCEPTS, CONSTRAINT, RESULT)                                   \
    struct NAME : reduce_op<NAME, ACCEPTS> {                                             \
        static constexpr std::string_view name = #NAME;                                  \
        template <CONSTRAINT T> RESULT reduce(std::span<const RESULT> v) const;          \
    };
KILN_REDUCE(reduce_sum, numeric_type, numeric_elem, compute_t<T>)
KILN_REDUCE(reduce_mean, numeric_type, numeric_elem, compute_t<T>)
KILN_REDUCE(reduce_prod, numeric_type, numeric_elem, compute_t<T>)
KILN_REDUCE(reduce_max, numeric_or_bool, class, compute_t<T>)
KILN_REDUCE(reduce_min, numeric_or_bool, class, compute_t<T>)
KILN_REDUCE(reduce_l1, numeric_type, numeric_elem, compute_t<T>)
KILN_REDUCE(reduce_l2, numeric_type, numeric_elem, compute_t<T>)
KILN_REDUCE(reduce_sum_square, numeric_type, numeric_elem, compute_t<T>)
// Float only: ONNX removed integer types from ReduceLogSum and ReduceLogSumExp.
KILN_REDUCE(reduce_log_sum, float_type, float_elem, double)
KILN_REDUCE(reduce_log_sum_exp, float_type, float_elem, double)
#undef KILN_REDUCE

}  // namespace kiln::ops
