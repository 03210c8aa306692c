// What the sequence ops (sequence.cpp) share with the targets that run them on their own values
// (the gpu runner's sequence_ops.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "core/argument.hpp"

namespace kiln::ops {

// SplitToSequence's piece lengths along an axis of `len`: without `split` (null), pieces of 1; a
// scalar split, pieces of that length (the last may be shorter); a 1-D split, the lengths it lists
// (non-negative, summing to len). Bad splits are errors naming the values.
std::vector<std::int64_t> split_to_sequence_lens(const argument* split, std::size_t len);

// Position `p` of a sequence of n elements, counted from the end when negative; `inserting`
// allows n itself (after the last). Out of range is an error naming the valid range.
std::size_t sequence_position(std::int64_t p, std::size_t n, bool inserting);

}  // namespace kiln::ops
