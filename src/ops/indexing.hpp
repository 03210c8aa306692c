// Helpers for the ops that address elements through an indices tensor (gather.cpp, scatter.cpp).
#pragma once
#include <cstring>

#include "ops/common.hpp"

namespace kiln::ops {

// ONNX takes int32 or int64 indices; kiln accepts every signed integer type (never unsigned, whose
// large values would wrap to valid negative indices).
inline bool index_type(dtype t) { return is_integral(t) && is_signed(t); }

// Checks shared by (data, indices, ...) ops: input count, static shapes, signed integer indices.
inline void check_data_and_indices(std::span<const shape> in, std::size_t count) {
    check_input_count(in, count);
    check_static(in);
    check_type(in, 1, index_type, "a signed integer type (int32 or int64)");
}

// For element-wise indexing (gather_elements, scatter_elements): indices has data's rank and, off
// the axis, dims no larger than data's.
inline void check_indices_within_data(std::span<const shape> in, std::size_t axis) {
    check_rank(in, 1, in[0].ndim());
    for (std::size_t d = 0; d < in[0].ndim(); ++d)
        if (d != axis && in[1].lens()[d] > in[0].lens()[d])
            fail("indices dim ", d, " is ", in[1].lens()[d], " but data dim ", d, " is ", in[0].lens()[d],
                 "; off the axis, indices dims must not exceed the data's");
}

// The position of a possibly negative index along a dim of length len. An index outside
// [-len, len) is an error naming the index, its place in the indices tensor and the dim.
inline std::size_t wrap_index(std::int64_t i, std::size_t len, std::size_t dim, std::size_t pos) {
    auto n = static_cast<std::int64_t>(len);
    if (i < -n || i >= n)
        fail("index ", i, " (indices element ", pos, ") is out of range for dim ", dim, " of size ", len,
             " (valid: ", -n, " to ", n - 1, ")");
    return static_cast<std::size_t>(i < 0 ? i + n : i);
}

// Row-major linear position of the multi-index idx in a tensor of these lens.
inline std::size_t linear_index(std::span<const std::size_t> lens, std::span<const std::size_t> idx) {
    std::size_t k = 0;
    for (std::size_t d = 0; d < lens.size(); ++d) k = k * lens[d] + idx[d];
    return k;
}

// Copies one element of any dtype; offsets are in elements.
inline void copy_element(const argument& dst, std::size_t dst_off, const argument& src, std::size_t src_off) {
    if (dst.get_shape().type() == dtype::string) {   // strings are objects: assigned, never memcpy'd
        dst.as<std::string>()[dst_off] = src.as<std::string>()[src_off];
        return;
    }
    std::size_t size = dst.get_shape().type_bits() / 8;
    std::memcpy(dst.data() + dst_off * size, src.data() + src_off * size, size);
}

// Lens [first, last) of s as a vector.
inline std::vector<std::size_t> lens_range(const shape& s, std::size_t first, std::size_t last) {
    return {s.lens().begin() + static_cast<std::ptrdiff_t>(first),
            s.lens().begin() + static_cast<std::ptrdiff_t>(last)};
}

}  // namespace kiln::ops
