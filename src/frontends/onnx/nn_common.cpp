#include "frontends/onnx/nn_common.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace kiln::onnx_fe {
namespace {

// A per-spatial-dim attribute: `dims` values, or `fill` in each when absent; each >= min.
std::vector<std::int64_t> per_dim(const node_info& n, const char* name, std::size_t dims, std::size_t count,
                                  std::int64_t fill, std::int64_t min) {
    if (!n.has_attr(name)) return std::vector<std::int64_t>(count, fill);
    auto v = n.attr_ints(name);
    if (v.size() != count)
        fail("attribute '", name, "' has ", v.size(), " values; expected ", count,
             count == dims ? " (one per spatial dim)" : " (begins, then ends, per spatial dim)");
    for (auto x : v)
        if (x < min) fail("attribute '", name, "' has ", x, "; expected values >= ", min);
    return v;
}

}  // namespace

std::vector<std::int64_t> spatial_lens(const shape& x, const std::string& why) {
    if (x.dynamic()) fail(why, " needs the spatial dims of input 0, which are dynamic");
    if (x.ndim() < 3) fail("input 0 has ", x.ndim(), " dims; expected [N, C, spatial...] (at least 3)");
    return {x.lens().begin() + 2, x.lens().end()};
}

window_attrs read_window(const node_info& n, std::size_t dims, std::vector<std::int64_t> kernel) {
    window_attrs w;
    if (kernel.empty()) {
        n.attr("kernel_shape");  // required: fails naming it when absent
        w.kernel = per_dim(n, "kernel_shape", dims, dims, 1, 1);
    } else {
        w.kernel = std::move(kernel);
        if (n.has_attr("kernel_shape") && n.attr_ints("kernel_shape") != w.kernel)
            fail("attribute 'kernel_shape' ", to_string(to_value(n.attr_ints("kernel_shape"))),
                 " differs from the weights' spatial dims ", to_string(to_value(w.kernel)));
    }
    w.strides = per_dim(n, "strides", dims, dims, 1, 1);
    w.dilations = per_dim(n, "dilations", dims, dims, 1, 1);
    w.pads = per_dim(n, "pads", dims, 2 * dims, 0, 0);
    w.auto_pad = n.attr_string("auto_pad", "NOTSET");
    if (w.auto_pad != "NOTSET" && w.auto_pad != "SAME_UPPER" && w.auto_pad != "SAME_LOWER" && w.auto_pad != "VALID")
        fail("auto_pad '", w.auto_pad, "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
    return w;
}

void apply_auto_pad(window_attrs& w, const shape& x) {
    if (w.auto_pad == "NOTSET") return;
    std::size_t dims = w.kernel.size();
    w.pads.assign(2 * dims, 0);
    if (w.auto_pad == "VALID") return;
    auto in = spatial_lens(x, "auto_pad " + w.auto_pad);
    for (std::size_t d = 0; d < dims; ++d) {
        std::int64_t s = w.strides[d], out = (in[d] + s - 1) / s;
        std::int64_t extent = (w.kernel[d] - 1) * w.dilations[d] + 1;
        std::int64_t total = std::max<std::int64_t>(0, (out - 1) * s + extent - in[d]);
        std::int64_t small = total / 2, large = total - small;
        w.pads[d] = w.auto_pad == "SAME_UPPER" ? small : large;
        w.pads[dims + d] = w.auto_pad == "SAME_UPPER" ? large : small;
    }
}

instruction_ref centered_int32(context& ctx, instruction_ref v, const std::vector<instruction_ref>& in, std::size_t zp,
                               std::size_t zp_axis) {
    value to_int32{{"target_type", "int32"}};
    auto r = ctx.add("convert", to_int32, {v});
    if (!present(ctx, in, zp)) return r;
    const shape& zs = in[zp]->get_shape();
    if (zs.ndim() > 1) fail("input ", zp, " (zero point) has ", zs.ndim(), " dims; expected a scalar or 1-D");
    auto z = ctx.add("convert", to_int32, {in[zp]});
    // [K] -> [K, 1, ...]: as many ones as v has dims after zp_axis.
    std::vector<std::int64_t> axes;
    for (std::size_t d = zp_axis + 1; zs.ndim() == 1 && d < v->get_shape().ndim(); ++d)
        axes.push_back(static_cast<std::int64_t>(d - zp_axis));
    if (!axes.empty()) z = ctx.add("unsqueeze", value{{"axes", to_value(axes)}}, {z});
    return ctx.add("sub", {r, z});
}

}  // namespace kiln::onnx_fe
