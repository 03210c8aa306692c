#include "ops/window.hpp"

namespace kiln::ops {

std::vector<std::size_t> spatial_attr(const char* name, std::span<const std::int64_t> v, std::size_t dims,
                                      std::int64_t min, std::size_t fill) {
    if (v.empty()) return std::vector<std::size_t>(dims, fill);
    if (v.size() != dims) fail(name, " has ", v.size(), " values; expected ", dims, " (one per spatial dim)");
    std::vector<std::size_t> r;
    for (auto x : v) {
        if (x < min) fail(name, " has ", x, "; expected values >= ", min);
        r.push_back(static_cast<std::size_t>(x));
    }
    return r;
}

window window::make(std::size_t dims, std::span<const std::int64_t> padding, std::span<const std::int64_t> stride,
                    std::span<const std::int64_t> dilation, const char* stride_name, const char* dilation_name) {
    window w;
    if (padding.size() == 2 * dims) {
        w.pad_begin = spatial_attr("padding", padding.first(dims), dims, 0, 0);
        w.pad_end = spatial_attr("padding", padding.last(dims), dims, 0, 0);
    } else if (padding.empty() || padding.size() == dims) {
        w.pad_begin = w.pad_end = spatial_attr("padding", padding, dims, 0, 0);
    } else {
        fail("padding has ", padding.size(), " values; expected ", dims, " (one per spatial dim) or ", 2 * dims,
             " (begins, then ends)");
    }
    w.stride = spatial_attr(stride_name, stride, dims, 1, 1);
    w.dilation = spatial_attr(dilation_name, dilation, dims, 1, 1);
    return w;
}

std::size_t window::output_len(std::size_t d, std::size_t n, std::size_t k, bool ceil) const {
    if (k == 0) fail("spatial dim ", d, ": kernel length is 0");
    std::size_t padded = n + pad_begin[d] + pad_end[d];
    std::size_t span = extent(d, k);
    if (span > padded)
        fail("spatial dim ", d, ": kernel ", k, span == k ? "" : cat(" (", span, " dilated)"),
             " is larger than the padded input ", padded, " (", n, " + padding ", pad_begin[d], "+", pad_end[d], ")");
    std::size_t s = stride[d];
    std::size_t len = (padded - span + (ceil ? s - 1 : 0)) / s + 1;
    if (ceil && (len - 1) * s >= n + pad_begin[d]) --len;
    return len;
}

std::vector<std::size_t> lens_from(const shape& s, std::size_t from) {
    return {s.lens().begin() + static_cast<std::ptrdiff_t>(from), s.lens().end()};
}

}  // namespace kiln::ops
