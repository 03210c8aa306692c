// ONNX ops that sample or rearrange spatial data: GridSample, AffineGrid, DeformConv, Col2Im,
// CenterCropPad and MaxUnpool. Inputs that set the output shape (Col2Im's image and block
// shapes, AffineGrid's size, CenterCropPad's shape, MaxUnpool's output_shape) must be constants.
#include <algorithm>

#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;
using ints = std::vector<std::int64_t>;

inputs_t grid_sample(const node_info& n, context& ctx, const inputs_t& in, const std::string& mode) {
    return {ctx.add("grid_sample",
                    value{{"mode", mode},
                          {"padding_mode", n.attr_string("padding_mode", "zeros")},
                          {"align_corners", n.attr_int("align_corners", 0) != 0}},
                    {in.at(0), in.at(1)})};
}

// Opset 16 names the interpolations bilinear and bicubic; 20 renamed them linear and cubic and
// allowed any number of spatial dims (kiln's op always does).
inputs_t grid_sample_16(const node_info& n, context& ctx, const inputs_t& in) {
    std::string mode = n.attr_string("mode", "bilinear");
    if (mode == "bilinear")
        mode = "linear";
    else if (mode == "bicubic")
        mode = "cubic";
    else if (mode != "nearest")
        fail("mode '", mode, "' is not one of bilinear, nearest, bicubic");
    return grid_sample(n, ctx, in, mode);
}
KILN_ONNX_OP("", "GridSample", 16, grid_sample_16)
inputs_t grid_sample_20(const node_info& n, context& ctx, const inputs_t& in) {
    return grid_sample(n, ctx, in, n.attr_string("mode", "linear"));
}
KILN_ONNX_OP("", "GridSample", 20, grid_sample_20)

inputs_t col2im(const node_info& n, context& ctx, const inputs_t& in) {
    value attrs{{"image_shape", to_value(ctx.constant_ints(in.at(1), "input 1 (image_shape)"))},
                {"block_shape", to_value(ctx.constant_ints(in.at(2), "input 2 (block_shape)"))}};
    for (const char* a : {"dilations", "pads", "strides"})
        if (n.has_attr(a)) attrs.set(a, to_value(n.attr_ints(a)));
    return {ctx.add("col2im", attrs, {in.at(0)})};
}
KILN_ONNX_OP("", "Col2Im", 18, col2im)

// CenterCropPad: per listed axis, a centred crop (slice) when the dim is larger than asked, or
// a centred zero pad when smaller. An odd difference crops or pads the extra element at the end,
// as ONNX's reference does.
inputs_t center_crop_pad(const node_info& n, context& ctx, const inputs_t& in) {
    auto x = in.at(0);
    const shape& s = x->get_shape();
    if (s.dynamic()) fail("input 0 is dynamic (", to_string(s), "); its dims are needed now");
    auto want = ctx.constant_ints(in.at(1), "input 1 (shape)");
    auto rank = static_cast<std::int64_t>(s.ndim());
    ints axes = n.attr_ints("axes");
    if (axes.empty())
        for (std::int64_t a = 0; a < rank; ++a) axes.push_back(a);
    if (want.size() != axes.size())
        fail("input 1 (shape) has ", want.size(), " values; expected ", axes.size(), " (one per axis)");
    ints crop_axes, starts, ends, pads(2 * s.ndim(), 0);
    for (std::size_t i = 0; i < axes.size(); ++i) {
        std::int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= rank) fail("axes[", i, "]=", axes[i], " is out of range for ", rank, " dims");
        if (want[i] < 0) fail("input 1 (shape) [", i, "]=", want[i], "; expected a size >= 0");
        auto dim = static_cast<std::int64_t>(s.lens()[static_cast<std::size_t>(a)]);
        if (dim > want[i]) {
            std::int64_t start = (dim - want[i]) / 2;
            crop_axes.push_back(a);
            starts.push_back(start);
            ends.push_back(start + want[i]);
        } else if (dim < want[i]) {
            pads[static_cast<std::size_t>(a)] = (want[i] - dim) / 2;
            pads[static_cast<std::size_t>(a + rank)] = want[i] - dim - (want[i] - dim) / 2;
        }
    }
    if (!crop_axes.empty())
        x = ctx.add("slice",
                    value{{"axes", to_value(crop_axes)}, {"starts", to_value(starts)}, {"ends", to_value(ends)}}, {x});
    if (std::any_of(pads.begin(), pads.end(), [](std::int64_t p) { return p != 0; }))
        x = ctx.add("pad", value{{"pads", to_value(pads)}}, {x});
    return {x};
}
KILN_ONNX_OP("", "CenterCropPad", 18, center_crop_pad)

// MaxUnpool: X's values scattered, at the flat positions that MaxPool's indices give, into zeros
// of the shape MaxPool's input had: (in - 1) * stride + kernel - pads per spatial dim. A larger
// output_shape then pads that at the end of each dim, as ONNX's reference does (the indices
// stay relative to the inferred shape).
inputs_t max_unpool(const node_info& n, context& ctx, const inputs_t& in) {
    auto x = in.at(0);
    const shape& s = x->get_shape();
    if (s.dynamic() || s.ndim() < 3) fail("input 0 is ", to_string(s), "; expected static [N, C, spatial...]");
    std::size_t r = s.ndim() - 2;
    ints kernel = n.attr_ints("kernel_shape"), strides = n.attr_ints("strides", ints(r, 1));
    ints pads = n.attr_ints("pads", ints(2 * r, 0));
    if (kernel.size() != r || strides.size() != r || pads.size() != 2 * r)
        fail("kernel_shape, strides and pads must give ", r, ", ", r, " and ", 2 * r, " values (one per spatial dim)");
    ints lens{std::int64_t(s.lens()[0]), std::int64_t(s.lens()[1])};
    for (std::size_t d = 0; d < r; ++d)
        lens.push_back((std::int64_t(s.lens()[d + 2]) - 1) * strides[d] + kernel[d] - pads[d] - pads[d + r]);
    std::int64_t total = 1;
    for (auto l : lens) {
        if (l < 0) fail("the inferred output shape has a negative dim");
        total *= l;
    }
    auto zero = ctx.add_literal(literal(shape(s.type()), std::vector<double>{0}));
    auto flat = [&](instruction_ref v) { return ctx.add("reshape", value{{"dims", to_value(ints{-1})}}, {v}); };
    auto zeros = ctx.add("multibroadcast", value{{"out_lens", to_value(ints{total})}}, {zero});
    auto y = ctx.add("scatter_elements", value{{"axis", 0}}, {zeros, flat(in.at(1)), flat(x)});
    y = ctx.add("reshape", value{{"dims", to_value(lens)}, {"allowzero", true}}, {y});
    if (in.size() < 3 || ctx.is_none(in[2])) return {y};
    auto want = ctx.constant_ints(in[2], "input 2 (output_shape)");
    if (want.size() != lens.size()) fail("input 2 (output_shape) has ", want.size(), " values; expected ", lens.size());
    ints extra(2 * lens.size(), 0);
    for (std::size_t d = 0; d < lens.size(); ++d) {
        if (want[d] < lens[d]) fail("output_shape ", want[d], " at dim ", d, " is smaller than the inferred ", lens[d]);
        extra[d + lens.size()] = want[d] - lens[d];
    }
    return {ctx.add("pad", value{{"pads", to_value(extra)}}, {y})};
}
KILN_ONNX_OP("", "MaxUnpool", 9, max_unpool)

// The homogeneous coordinates (x, y[, z], 1) of every point of a grid of these spatial lens,
// row-major, each normalised to [-1, 1] (pixel centres, or corners with align_corners).
std::vector<double> base_grid(const ints& spatial, bool align) {
    auto coord = [&](std::size_t i, std::int64_t len) {
        if (align) return len == 1 ? -1.0 : -1 + 2.0 * double(i) / double(len - 1);
        return -1 + (2.0 * double(i) + 1) / double(len);
    };
    std::vector<std::size_t> lens(spatial.begin(), spatial.end());
    shape grid(dtype::float32, lens);
    std::vector<double> out;
    for (std::size_t p = 0; p < grid.elements(); ++p) {
        auto idx = grid.multi(p);
        for (std::size_t d = lens.size(); d-- > 0;) out.push_back(coord(idx[d], spatial[d]));  // x first
        out.push_back(1.0);
    }
    return out;
}

// AffineGrid: theta [N, r, r + 1] maps the base grid of size [N, C, spatial...] to sampling
// points [N, spatial..., r]: one batched product of the constant base grid with theta^T.
inputs_t affine_grid(const node_info& n, context& ctx, const inputs_t& in) {
    auto theta = in.at(0);
    auto size = ctx.constant_ints(in.at(1), "input 1 (size)");
    if (size.size() != 4 && size.size() != 5) fail("input 1 (size) has ", size.size(), " values; expected 4 or 5");
    std::size_t r = size.size() - 2;
    const shape& ts = theta->get_shape();
    if (ts.dynamic() || ts.ndim() != 3 || ts.lens()[1] != r || ts.lens()[2] != r + 1 ||
        std::int64_t(ts.lens()[0]) != size[0])
        fail("input 0 (theta) is ", to_string(ts), "; expected [", size[0], ", ", r, ", ", r + 1, "]");
    ints spatial(size.begin() + 2, size.end());
    for (auto l : spatial)
        if (l < 1) fail("input 1 (size) has a spatial size ", l, "; expected sizes >= 1");
    auto base = base_grid(spatial, n.attr_int("align_corners", 0) != 0);
    std::size_t points = base.size() / (r + 1);
    auto grid = ctx.add_literal(literal(shape(ts.type(), std::vector<std::size_t>{1, points, r + 1}), base));
    auto t = ctx.add("transpose", value{{"permutation", to_value(ints{0, 2, 1})}}, {theta});
    ints out{size[0]};
    out.insert(out.end(), spatial.begin(), spatial.end());
    out.push_back(std::int64_t(r));
    return {ctx.add("reshape", value{{"dims", to_value(out)}, {"allowzero", true}}, {ctx.add("dot", {grid, t})})};
}
KILN_ONNX_OP("", "AffineGrid", 20, affine_grid)

// DeformConv: kiln's inputs are positional, so a mask without B gets a zero B.
inputs_t deform_conv(const node_info& n, context& ctx, const inputs_t& in) {
    inputs_t args{in.at(0), in.at(1), in.at(2)};
    bool bias = in.size() > 3 && !ctx.is_none(in[3]), mask = in.size() > 4 && !ctx.is_none(in[4]);
    if (bias) args.push_back(in[3]);
    if (mask && !bias) {
        const shape& w = in[1]->get_shape();
        if (w.dynamic() || w.ndim() == 0) fail("input 1 (W) is ", to_string(w), "; its output channels are needed now");
        args.push_back(ctx.add_literal(
            literal(shape(w.type(), std::vector<std::size_t>{w.lens()[0]}), std::vector<double>(w.lens()[0], 0.0))));
    }
    if (mask) args.push_back(in[4]);
    value attrs{{"group", n.attr_int("group", 1)}, {"offset_group", n.attr_int("offset_group", 1)}};
    for (const char* a : {"dilations", "kernel_shape", "pads", "strides"})
        if (n.has_attr(a)) attrs.set(a, to_value(n.attr_ints(a)));
    return {ctx.add("deform_conv", attrs, args)};
}
KILN_ONNX_OP("", "DeformConv", 19, deform_conv)

}  // namespace
}  // namespace kiln::onnx_fe
