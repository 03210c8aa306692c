// Helpers for ops that work on groups of elements along some axes: reductions, arg reductions,
// softmax, normalizations and cumsum.
#pragma once
#include <vector>

#include "ops/common.hpp"

namespace kiln::ops {

// Dims after reducing `axes`: each reduced dim becomes 1 (keepdims) or is dropped.
std::vector<dynamic_dim> reduced_dims(const shape& s, std::span<const std::size_t> axes, bool keepdims);

// The element offsets of a shape split into groups along `axes`: group g holds the elements at
// bases[g] + rel[i]. Groups follow the row-major order of the keepdims-reduced lens, and the
// elements of a group the row-major order of the reduced dims, so two shapes with equal lens give
// matching groups whatever their strides.
struct element_groups {
    std::vector<std::size_t> bases;
    std::vector<std::size_t> rel;
};
element_groups group_offsets(const shape& s, std::span<const std::size_t> axes);

// The axes from `first` to the last dim (the normalized axes of layer and RMS normalization).
// Shape of an op that works along one axis of one input and keeps its shape (softmax, cumsum,
// lp_normalization): checks the input count, its type against `accepts` and the axis.
shape along_axis_shape(std::span<const shape> in, std::int64_t axis, bool (*accepts)(dtype), const char* what);

std::vector<std::size_t> trailing_axes(std::size_t first, std::size_t ndim);

// Throws unless input i's static lens broadcast (numpy rules, one way) to `lens`.
void check_broadcasts_to(std::span<const shape> in, std::size_t i, std::span<const std::size_t> lens,
                         const char* what);

}  // namespace kiln::ops
