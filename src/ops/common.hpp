// Helpers shared by op families: input checks, axis handling, broadcasting and element loops.
// Errors thrown here omit the op name: operation::compute_shape prefixes it.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/argument.hpp"
#include "core/error.hpp"
#include "core/op.hpp"
#include "core/visit.hpp"

namespace kiln::ops {

// Throws unless the number of inputs is within [min, max].
void check_input_count(std::span<const shape> in, std::size_t min, std::size_t max);
inline void check_input_count(std::span<const shape> in, std::size_t n) { check_input_count(in, n, n); }
// Throws unless every input is static (not dynamic) and not a tuple.
void check_static(std::span<const shape> in);
// Throws unless all inputs have the same dtype.
void check_same_type(std::span<const shape> in);
// Throws unless input i's dtype satisfies pred; `what` names the accepted types ("a float type").
void check_type(std::span<const shape> in, std::size_t i, bool (*pred)(dtype), const char* what);
// Throws unless input i has exactly n dims (or at least n when at_least).
void check_rank(std::span<const shape> in, std::size_t i, std::size_t n, bool at_least = false);

// Normalises a possibly negative axis against ndim; throws naming the attribute when out of range.
std::size_t normalize_axis(std::int64_t axis, std::size_t ndim, const char* attr = "axis");
std::vector<std::size_t> normalize_axes(std::span<const std::int64_t> axes, std::size_t ndim,
                                        const char* attr = "axes");

// numpy broadcasting of lens; throws naming both shapes when incompatible.
std::vector<std::size_t> broadcast_lens(std::span<const shape> in);
// A view shape of `s` broadcast to `lens` (stride 0 on broadcast dims).
shape broadcast_to(const shape& s, std::span<const std::size_t> lens);

// Calls f(idx) for every multi-index of lens in row-major order.
template <class F>
void for_each_index(std::span<const std::size_t> lens, F&& f) {
    std::size_t n = 1;
    for (auto l : lens) n *= l;
    if (n == 0) return;
    std::vector<std::size_t> idx(lens.size(), 0);
    for (std::size_t k = 0; k < n; ++k) {
        f(std::span<const std::size_t>(idx));
        for (std::size_t d = lens.size(); d-- > 0;) {
            if (++idx[d] < lens[d]) break;
            idx[d] = 0;
        }
    }
}

// Elements of a static standard shape's row-major order.
inline std::size_t elements_of(std::span<const std::size_t> lens) {
    std::size_t n = 1;
    for (auto l : lens) n *= l;
    return n;
}

bool any_type(dtype);
bool float_type(dtype);          // is_float
bool signed_type(dtype);         // signed ints and floats
bool integer_type(dtype);        // ints (not bool)
bool numeric_type(dtype);        // ints and floats (not bool)
bool bool_type(dtype);

}  // namespace kiln::ops
