// Helpers for the view and data-movement ops (views.cpp, data_movement.cpp). These ops only move
// elements, so they copy bytes and never need the element type except to fill a constant.
#pragma once
#include <cstring>
#include <limits>

#include "ops/common.hpp"

namespace kiln::ops {

// Most of these ops take one static tensor.
inline void check_one_input(std::span<const shape> in) {
    check_input_count(in, 1);
    check_static(in);
}

// Returned by a copy_mapped source map for an output element that keeps its prefilled value.
inline constexpr std::size_t no_element = std::numeric_limits<std::size_t>::max();

// Fills `dst` (any layout; a view writes into its owner): src_offset(idx) is the element offset in
// `src` of the value that lands at multi-index idx of dst, or no_element.
template <class F>
void copy_mapped(const argument& dst, const argument& src, F&& src_offset) {
    const shape& ds = dst.get_shape();
    if (ds.type() == dtype::string) {   // strings are objects: assigned, never memcpy'd
        for_each_index(ds.lens(), [&](std::span<const std::size_t> idx) {
            std::size_t off = src_offset(idx);
            if (off != no_element) dst.as<std::string>()[ds.index(idx)] = src.as<std::string>()[off];
        });
        return;
    }
    std::size_t esize = dtype_bits(ds.type()) / 8;
    for_each_index(ds.lens(), [&](std::span<const std::size_t> idx) {
        std::size_t off = src_offset(idx);
        if (off != no_element) std::memcpy(dst.data() + ds.index(idx) * esize, src.data() + off * esize, esize);
    });
}

// Attribute sizes (int64 so that a negative value is reported, not wrapped) as lens.
inline std::vector<std::size_t> to_lens(std::span<const std::int64_t> sizes, const char* attr) {
    std::vector<std::size_t> lens;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] < 0) fail(attr, "[", i, "]=", sizes[i], " is negative; expected a size");
        lens.push_back(static_cast<std::size_t>(sizes[i]));
    }
    return lens;
}

// "{1, -1, 0}", for messages about signed attribute lists.
inline std::string ints_to_string(std::span<const std::int64_t> xs) {
    std::string s = "{";
    for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
    return s + "}";
}

}  // namespace kiln::ops
