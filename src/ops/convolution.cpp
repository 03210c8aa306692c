// Convolution and its transpose (ONNX Conv and ConvTranspose without bias: a bias is a
// separate add). Any number of spatial dims; input [N, C, spatial...]. Float types, computed in
// double and rounded once per output element.
#include "ops/convolution.hpp"

#include "ops/window.hpp"

namespace kiln::ops {
namespace {

// Checks what both ops share: two float inputs of equal type and rank >= 3, group >= 1 dividing
// the input channels. Returns the number of spatial dims.
std::size_t check_conv_inputs(std::span<const shape> in, std::int64_t group) {
    check_input_count(in, 2);
    check_static(in);
    check_same_type(in);
    check_type(in, 0, float_type, "a float type");
    check_rank(in, 0, 3, true);
    if (in[1].ndim() != in[0].ndim())
        fail("input 1 (weights) has ", in[1].ndim(), " dims ", lens_to_string(in[1].lens()), "; expected ",
             in[0].ndim(), " like input 0 ", lens_to_string(in[0].lens()));
    if (group < 1) fail("group=", group, "; expected >= 1");
    std::size_t channels = in[0].lens()[1];
    if (channels % group != 0) fail("input 0 has ", channels, " channels, which group=", group, " does not divide");
    return in[0].ndim() - 2;
}

}  // namespace

shape convolution::compute_shape(std::span<const shape> in) const {
    std::size_t dims = check_conv_inputs(in, group);
    const auto& x = in[0].lens();
    const auto& w = in[1].lens();
    auto g = static_cast<std::size_t>(group);
    if (w[1] * g != x[1])
        fail("input 1 (weights) ", lens_to_string(w), " has ", w[1], " channels per group; expected ", x[1] / g,
             " (input 0's ", x[1], " channels / group=", group, ")");
    if (w[0] % g != 0)
        fail("input 1 (weights) ", lens_to_string(w), " has ", w[0], " output channels, which group=", group,
             " does not divide");
    window win = window::make(dims, padding, stride, dilation);
    std::vector<std::size_t> out{x[0], w[0]};
    for (std::size_t d = 0; d < dims; ++d) out.push_back(win.output_len(d, x[d + 2], w[d + 2]));
    return {in[0].type(), out};
}

argument convolution::compute(const shape& out, std::span<const argument> args) const {
    shape xs = args[0].get_shape().as_standard();
    shape ws = args[1].get_shape().as_standard();
    std::vector<double> x = to_doubles(args[0]), w = to_doubles(args[1]);
    std::size_t dims = xs.ndim() - 2, per_group = ws.lens()[1];
    std::size_t out_per_group = ws.lens()[0] / static_cast<std::size_t>(group);
    window win = window::make(dims, padding, stride, dilation);
    std::vector<std::size_t> kernel = lens_from(ws, 2);
    std::vector<double> y;
    y.reserve(out.elements());
    std::vector<std::size_t> xi(xs.ndim()), wi(ws.ndim());
    for_each_index(out.lens(), [&](std::span<const std::size_t> yi) {
        double acc = 0;
        xi[0] = yi[0], wi[0] = yi[1];
        for (std::size_t c = 0; c < per_group; ++c) {
            xi[1] = yi[1] / out_per_group * per_group + c, wi[1] = c;
            for_each_index(kernel, [&](std::span<const std::size_t> t) {
                for (std::size_t d = 0; d < dims; ++d) {
                    std::ptrdiff_t p = win.position(d, yi[d + 2], t[d]);
                    if (p < 0 || p >= static_cast<std::ptrdiff_t>(xs.lens()[d + 2])) return;  // padding
                    xi[d + 2] = static_cast<std::size_t>(p), wi[d + 2] = t[d];
                }
                acc += x[xs.index(xi)] * w[ws.index(wi)];
            });
        }
        y.push_back(acc);
    });
    return from_doubles(out, y);
}
KILN_REGISTER_OP(convolution)

shape deconvolution::compute_shape(std::span<const shape> in) const {
    std::size_t dims = check_conv_inputs(in, group);
    const auto& x = in[0].lens();
    const auto& w = in[1].lens();
    if (w[0] != x[1])
        fail("input 1 (weights) ", lens_to_string(w), " has ", w[0], " input channels; expected ", x[1],
             " like input 0 ", lens_to_string(x));
    window win = window::make(dims, padding, stride, dilation);
    auto extra = spatial_attr("output_padding", output_padding, dims, 0, 0);
    std::vector<std::size_t> out{x[0], w[1] * static_cast<std::size_t>(group)};
    for (std::size_t d = 0; d < dims; ++d) {
        if (w[d + 2] == 0) fail("spatial dim ", d, ": kernel length is 0");
        if (x[d + 2] == 0) fail("spatial dim ", d, " of input 0 ", lens_to_string(x), " is empty");
        std::size_t full = win.stride[d] * (x[d + 2] - 1) + extra[d] + win.extent(d, w[d + 2]);
        std::size_t cut = win.pad_begin[d] + win.pad_end[d];
        if (cut >= full)
            fail("spatial dim ", d, ": padding ", win.pad_begin[d], "+", win.pad_end[d],
                 " leaves no output of the full length ", full);
        out.push_back(full - cut);
    }
    return {in[0].type(), out};
}

argument deconvolution::compute(const shape& out, std::span<const argument> args) const {
    shape xs = args[0].get_shape().as_standard();
    shape ws = args[1].get_shape().as_standard();
    std::vector<double> x = to_doubles(args[0]), w = to_doubles(args[1]);
    std::size_t dims = xs.ndim() - 2, out_per_group = ws.lens()[1];
    std::size_t in_per_group = xs.lens()[1] / static_cast<std::size_t>(group);
    window win = window::make(dims, padding, stride, dilation);
    std::vector<std::size_t> kernel = lens_from(ws, 2);
    std::vector<double> y(out.elements());
    std::vector<std::size_t> yi(out.ndim()), wi(ws.ndim());
    for_each_index(xs.lens(), [&](std::span<const std::size_t> xi) {
        double v = x[xs.index(xi)];
        yi[0] = xi[0], wi[0] = xi[1];
        for (std::size_t m = 0; m < out_per_group; ++m) {
            yi[1] = xi[1] / in_per_group * out_per_group + m, wi[1] = m;
            for_each_index(kernel, [&](std::span<const std::size_t> t) {
                for (std::size_t d = 0; d < dims; ++d) {
                    std::ptrdiff_t p = win.position(d, xi[d + 2], t[d]);
                    if (p < 0 || p >= static_cast<std::ptrdiff_t>(out.lens()[d + 2])) return;  // cut off
                    yi[d + 2] = static_cast<std::size_t>(p), wi[d + 2] = t[d];
                }
                y[out.index(yi)] += v * w[ws.index(wi)];
            });
        }
    });
    return from_doubles(out, y);
}
KILN_REGISTER_OP(deconvolution)

}  // namespace kiln::ops
