// Sliding-window geometry shared by convolution, deconvolution and pooling: per spatial dim the
// padding before and after, the stride and the dilation, checked against the spatial rank.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ops/common.hpp"

namespace kiln::ops {

struct window {
    std::vector<std::size_t> pad_begin, pad_end, stride, dilation;

    // `padding`: empty (none), one value per spatial dim (both sides) or 2 * dims in ONNX `pads`
    // order (all begins, then all ends). Empty `stride` and `dilation` mean 1. The names are the
    // attribute names used in error messages.
    static window make(std::size_t dims, std::span<const std::int64_t> padding, std::span<const std::int64_t> stride,
                       std::span<const std::int64_t> dilation, const char* stride_name = "stride",
                       const char* dilation_name = "dilation");

    // Extent of a kernel of length k in dim d once dilated.
    std::size_t extent(std::size_t d, std::size_t k) const { return (k - 1) * dilation[d] + 1; }
    // Output length of dim d for input length n and kernel length k (the window must fit the
    // padded input). With `ceil` a partial last window counts, unless it would start in the end
    // padding (ONNX and PyTorch drop that one).
    std::size_t output_len(std::size_t d, std::size_t n, std::size_t k, bool ceil = false) const;
    // Position of kernel tap t of the window at position o of dim d: the input position it reads
    // for convolution and pooling, the output position it writes for deconvolution. Negative or
    // past the end means padding.
    std::ptrdiff_t position(std::size_t d, std::size_t o, std::size_t t) const {
        return static_cast<std::ptrdiff_t>(o * stride[d] + t * dilation[d]) - static_cast<std::ptrdiff_t>(pad_begin[d]);
    }
};

// A per-spatial-dim attribute: `dims` values (or `fill` for each dim when empty), each >= min.
std::vector<std::size_t> spatial_attr(const char* name, std::span<const std::int64_t> v, std::size_t dims,
                                      std::int64_t min, std::size_t fill);

// Lens of dims [from, end) of s.
std::vector<std::size_t> lens_from(const shape& s, std::size_t from);

}  // namespace kiln::ops
