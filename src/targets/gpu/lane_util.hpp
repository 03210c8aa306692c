// What the lane generators share (lane_kernels.cpp, fused_reduce.cpp): a lane is the elements
// one reduction, softmax or normalisation combines, computed by one block; these split a shape
// into its kept dims (which lane) and reduced dims (where in the lane), and describe reductions.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/module.hpp"
#include "core/operation.hpp"
#include "core/shape.hpp"
#include "targets/gpu/elementwise.hpp"

namespace kiln::gpu {

// "kiln::layout<2>{{4ull, 5ull}, {5ull, 1ull}}": the dims `axes` of s (their lens and strides).
std::string layout_of(const shape& s, const std::vector<std::size_t>& axes);
// The layout of all of s's dims: offset(i) is the memory offset of row-major element i.
std::string layout_of_all(const shape& s);
std::size_t product(const shape& s, const std::vector<std::size_t>& axes);
// The type a reduction of this element type accumulates in: float for every float type but
// float64, the compute type otherwise.
std::string acc_type(dtype t);

struct lane_split {
    std::vector<std::size_t> kept, reduced;
};
lane_split split(std::size_t ndim, const std::vector<std::size_t>& reduced);

// The kernel's frame: parameters, shared memory, and the loop over lanes; `body` uses `base`
// (the lane's input offset), `ybase` (its output offset), Lr/Yr (offsets within the lane).
kernel_source lane_kernel(const std::string& params, const std::string& acc, const shape& x, const shape& y,
                          const lane_split& sx, const lane_split& sy, const std::string& body, const std::string& where);
launch_dims lane_launch(std::size_t lanes);

// A reduction of elements of type t as code (in acc_type(t)): acc = init; acc = combine(acc, map(v)) over the lane; final(acc), with R
// (the lane's length) in scope.
struct reduce_kind {
    std::string init, map, combine, final;
};
// Null for ops that are not one of the reductions the lane kernels generate.
std::optional<reduce_kind> kind_of(const operation& op, dtype t);
// A reduction a lane kernel computes as ref does: every kind for floats and integers (integer
// results wrap and truncate as ref's do), max and min for bool.
bool lane_reducible(const instruction& ins);
// The sorted axes a reduction op reduces for an input of `ndim` dims.
std::vector<std::size_t> reduced_axes_of(const operation& op, std::size_t ndim);
// Whether the reduce op reduces nothing (noop_with_empty_axes): its output is its input.
bool reduce_is_noop(const operation& op);

}  // namespace kiln::gpu
