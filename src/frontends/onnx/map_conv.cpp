// ONNX convolutions: Conv and ConvTranspose onto kiln's convolution and deconvolution (which
// take no bias: an optional bias B [M] is a broadcast add), and ConvInteger composed from
// convert, sub and a float64 convolution.
#include "core/error.hpp"
#include "frontends/onnx/nn_common.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

// The weights' spatial dims (their dims 2...), which give the kernel.
std::vector<std::int64_t> weight_kernel(instruction_ref w, std::size_t rank) {
    const shape& s = w->get_shape();
    if (s.ndim() != rank) fail("input 1 (weights) has ", s.ndim(), " dims; expected ", rank, " like input 0");
    if (s.dynamic()) fail("input 1 (weights) has dynamic dims; the kernel must be static");
    return {s.lens().begin() + 2, s.lens().end()};
}

window_attrs conv_window(const node_info& n, instruction_ref x, instruction_ref w) {
    std::size_t rank = x->get_shape().ndim();
    if (rank < 3) fail("input 0 has ", rank, " dims; expected [N, C, spatial...] (at least 3)");
    return read_window(n, rank - 2, weight_kernel(w, rank));
}

// y + B as [1, M, 1, ...]: the bias is per output channel (dim 1).
instruction_ref add_channel_bias(context& ctx, instruction_ref y, instruction_ref bias) {
    if (bias->get_shape().ndim() != 1)
        fail("input 2 (bias) has ", bias->get_shape().ndim(), " dims; expected 1 (one value per output channel)");
    std::vector<std::int64_t> axes;
    for (std::size_t d = 1; d + 1 < y->get_shape().ndim(); ++d) axes.push_back(static_cast<std::int64_t>(d));
    return ctx.add("add", {y, ctx.add("unsqueeze", value{{"axes", to_value(axes)}}, {bias})});
}

value conv_attrs(const window_attrs& w, std::int64_t group) {
    return value{{"padding", to_value(w.pads)},
                 {"stride", to_value(w.strides)},
                 {"dilation", to_value(w.dilations)},
                 {"group", group}};
}

inputs_t map_conv(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(2, 3);
    window_attrs w = conv_window(n, in.at(0), in.at(1));
    apply_auto_pad(w, in[0]->get_shape());
    auto y = ctx.add("convolution", conv_attrs(w, n.attr_int("group", 1)), {in[0], in[1]});
    if (present(ctx, in, 2)) y = add_channel_bias(ctx, y, in[2]);
    return {y};
}
KILN_ONNX_OP("", "Conv", 1, map_conv)

// ConvTranspose pads from output_shape (or, under SAME_*, an output of input * stride), per the
// ONNX spec: the total padding makes the full output that length; SAME_UPPER puts the larger
// half at the end, otherwise at the start. A negative total asks for a longer output than the
// full one.
void output_shape_pads(const node_info& n, window_attrs& w, const std::vector<std::int64_t>& in,
                       const std::vector<std::int64_t>& output_padding) {
    std::size_t dims = in.size();
    std::vector<std::int64_t> out;
    if (n.has_attr("output_shape")) {
        out = n.attr_ints("output_shape");
        // Some exporters write the full [N, M, spatial...] shape; its spatial part is what counts.
        if (out.size() == dims + 2) out.erase(out.begin(), out.begin() + 2);
        if (out.size() != dims)
            fail("attribute 'output_shape' has ", out.size(), " values; expected ", dims, " (one per spatial dim)");
    } else {
        for (std::size_t d = 0; d < dims; ++d) out.push_back(in[d] * w.strides[d]);
    }
    w.pads.assign(2 * dims, 0);
    for (std::size_t d = 0; d < dims; ++d) {
        std::int64_t full = w.strides[d] * (in[d] - 1) + output_padding[d] + (w.kernel[d] - 1) * w.dilations[d] + 1;
        std::int64_t total = full - out[d], half = floor_div(total, 2);
        w.pads[d] = w.auto_pad == "SAME_UPPER" ? half : total - half;
        w.pads[dims + d] = total - w.pads[d];
    }
}

inputs_t map_conv_transpose(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(2, 3);
    window_attrs w = conv_window(n, in.at(0), in.at(1));
    std::size_t dims = w.kernel.size();
    auto output_padding = n.attr_ints("output_padding", std::vector<std::int64_t>(dims, 0));
    if (output_padding.size() != dims)
        fail("attribute 'output_padding' has ", output_padding.size(), " values; expected ", dims,
             " (one per spatial dim)");
    bool same = w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER";
    if (n.has_attr("output_shape") || same)
        output_shape_pads(n, w, spatial_lens(in[0]->get_shape(), "output_shape or auto_pad"), output_padding);
    else if (w.auto_pad == "VALID")
        w.pads.assign(2 * dims, 0);
    // deconvolution crops by its padding; negative padding extends the output with zeros.
    std::vector<std::int64_t> extend(2 * (dims + 2), 0);
    bool extends = false;
    for (std::size_t i = 0; i < w.pads.size(); ++i) {
        if (w.pads[i] >= 0) continue;
        extend[i < dims ? i + 2 : i + 4] = -w.pads[i];
        w.pads[i] = 0;
        extends = true;
    }
    value attrs = conv_attrs(w, n.attr_int("group", 1));
    attrs.set("output_padding", to_value(output_padding));
    auto y = ctx.add("deconvolution", attrs, {in[0], in[1]});
    if (extends) y = ctx.add("pad", value{{"pads", to_value(extend)}}, {y});
    if (present(ctx, in, 2)) y = add_channel_bias(ctx, y, in[2]);
    return {y};
}
KILN_ONNX_OP("", "ConvTranspose", 1, map_conv_transpose)

// (x - x_zero_point) conv (w - w_zero_point) in int32; padding reads x_zero_point, which is 0
// once centered. kiln's convolution takes floats: float64 holds every sum of 8-bit products
// exactly (below 2^53), so the result is exact whenever it fits int32 (where ONNX's int32
// accumulation would wrap, the final convert saturates: that takes over 30000 extreme taps).
inputs_t map_conv_integer(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(2, 4);
    window_attrs w = conv_window(n, in.at(0), in.at(1));
    apply_auto_pad(w, in[0]->get_shape());
    value to_f64{{"target_type", "float64"}};
    auto x = ctx.add("convert", to_f64, {centered_int32(ctx, in[0], in, 2, 1)});
    auto k = ctx.add("convert", to_f64, {centered_int32(ctx, in[1], in, 3, 0)});
    auto y = ctx.add("convolution", conv_attrs(w, n.attr_int("group", 1)), {x, k});
    return {ctx.add("convert", value{{"target_type", "int32"}}, {y})};
}
KILN_ONNX_OP("", "ConvInteger", 10, map_conv_integer)

}  // namespace
}  // namespace kiln::onnx_fe
