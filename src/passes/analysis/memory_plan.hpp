// Memory planning: places every intermediate result of a module in one arena, reusing the bytes
// of buffers that are no longer live.
//  - Buffers: instructions that compute a fresh result. Parameters and literals live outside the
//    arena; a view (output_alias >= 0) has no buffer of its own: it reads its input's, so that
//    buffer stays live until the view's last use. Returned values stay live to the end.
//  - Lifetime of a buffer: from the instruction that writes it to its last use (inclusive: an op
//    reads its inputs while it writes its output, so the two must not share bytes).
//  - In place: a pointwise op writes over an input when that input is an arena buffer read
//    directly (not through a view), laid out as the output (same lens, strides and element
//    size), read by no other input of the op through a view, and this op is its last use.
//    A target's kernel that accumulates onto one input (a convolution's sum post-op adding the
//    residual in dst) names it in `overwrites`: the result goes over that input on the same
//    terms, and when no other input of the instruction reads its bytes at all.
//  - Assignment: buffers by size, largest first, each at the lowest aligned offset that overlaps
//    no placed buffer whose lifetime intersects its own.
//  - Alignment: every buffer starts on a multiple of buffer_alignment(dtype) = 256 bytes, a
//    multiple of every element size, and what cudaMalloc guarantees (and cuBLASLt, cuDNN and
//    vectorised generated kernels expect), so a target can use arena offsets as it would fresh
//    allocations.
// This is an analysis, not a pass: it does not change the program. Targets call plan_memory on
// the module they run, after their own lowering (which adds and fuses instructions), and
// allocate one arena of arena_bytes; the ref target allocates per instruction and needs none.
// Shapes must be static.
#pragma once
#include <cstddef>
#include <string>
#include <unordered_map>

#include "core/module.hpp"

namespace kiln {

struct memory_plan {
    std::unordered_map<const instruction*, std::size_t> offsets;   // arena byte offset of each buffer
    std::size_t arena_bytes = 0;
    std::size_t intermediate_bytes = 0;   // one buffer per intermediate, no reuse
    std::size_t in_place = 0;             // results written over their input

    // "arena N bytes (sum of intermediates M bytes, X%)"
    std::string report() const;
};

std::size_t buffer_alignment(dtype t);
// Where element i of a tuple result lies in its buffer: the elements are laid out one after
// another, each aligned, from the buffer's start (so element 0 is at 0).
std::size_t tuple_element_offset(const shape& tuple, std::size_t i);

// Instructions whose kernels may write their result over one input: its index.
using in_place_inputs = std::unordered_map<const instruction*, std::size_t>;

// Throws naming the instruction when a result has a dynamic shape.
memory_plan plan_memory(const module& m, const in_place_inputs& overwrites = {});

// Throws naming both instructions when two buffers whose lifetimes intersect share arena bytes
// (except a result over its input as described above), and when a buffer has no offset, is
// misaligned or lies outside the arena.
void check_memory_plan(const module& m, const memory_plan& plan, const in_place_inputs& overwrites = {});

}  // namespace kiln
