// Convolution and its transpose (ONNX Conv and ConvTranspose without bias: a bias is a
// separate add). Any number of spatial dims; input [N, C, spatial...]. Float types, computed in
// double and rounded once per output element.
#include "ops/convolution.hpp"

#include <algorithm>

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

// Each output element sums its group's channels c, then the kernel taps t in row-major order
// (padding taps add nothing). The loops run c and t outside the output positions, over one output
// plane of accumulators, so that the innermost loop walks a row of the input with a fixed weight:
// the same sums in the same order, without the index arithmetic per product (verify runs the
// models' convolutions on ref).
argument convolution::compute(const shape& out, std::span<const argument> args) const {
    shape xs = args[0].get_shape().as_standard();
    shape ws = args[1].get_shape().as_standard();
    std::vector<double> x = to_doubles(args[0]), w = to_doubles(args[1]);
    std::size_t dims = xs.ndim() - 2, per_group = ws.lens()[1];
    std::size_t out_per_group = ws.lens()[0] / static_cast<std::size_t>(group);
    window win = window::make(dims, padding, stride, dilation);
    std::vector<std::size_t> kernel = lens_from(ws, 2), in_lens = lens_from(xs, 2), out_lens = lens_from(out, 2);
    std::size_t in_plane = elements_of(in_lens), out_plane = elements_of(out_lens), taps = elements_of(kernel);
    std::size_t channels = xs.lens()[1], outputs = out.lens()[1];
    std::vector<std::size_t> in_strides = shape::standard_strides(in_lens), out_strides = shape::standard_strides(out_lens);
    std::vector<double> y(out.elements(), 0.0);
    // For tap t: the output positions of each dim whose input position o * stride + off[d] lies
    // inside the input, [lo[d], hi[d]).
    std::vector<std::ptrdiff_t> off(dims);
    std::vector<std::size_t> lo(dims), hi(dims), box(dims - 1);
    for (std::size_t n = 0; n < out.lens()[0]; ++n)
        for (std::size_t m = 0; m < outputs; ++m) {
            double* acc = y.data() + (n * outputs + m) * out_plane;
            for (std::size_t c = 0; c < per_group; ++c) {
                const double* xp = x.data() + (n * channels + m / out_per_group * per_group + c) * in_plane;
                const double* wp = w.data() + (m * per_group + c) * taps;
                std::size_t tap = 0;
                for_each_index(kernel, [&](std::span<const std::size_t> t) {
                    const double wv = wp[tap++];
                    for (std::size_t d = 0; d < dims; ++d) {
                        off[d] = win.position(d, 0, t[d]);
                        auto st = static_cast<std::ptrdiff_t>(win.stride[d]);
                        auto len = static_cast<std::ptrdiff_t>(in_lens[d]);
                        std::ptrdiff_t first = off[d] >= 0 ? 0 : (-off[d] + st - 1) / st;
                        std::ptrdiff_t last = off[d] >= len ? 0 : (len - 1 - off[d]) / st + 1;
                        lo[d] = static_cast<std::size_t>(first);
                        hi[d] = std::min(out_lens[d], static_cast<std::size_t>(std::max(first, last)));
                        if (lo[d] >= hi[d]) return;   // this tap reads only padding
                    }
                    for (std::size_t d = 0; d + 1 < dims; ++d) box[d] = hi[d] - lo[d];
                    const std::size_t last = dims - 1, st = win.stride[last];
                    for_each_index(box, [&](std::span<const std::size_t> b) {
                        std::size_t yo = 0, xo = 0;
                        for (std::size_t d = 0; d < last; ++d) {
                            std::size_t o = lo[d] + b[d];
                            yo += o * out_strides[d];
                            xo += static_cast<std::size_t>(static_cast<std::ptrdiff_t>(o * win.stride[d]) + off[d]) * in_strides[d];
                        }
                        double* yr = acc + yo;
                        const std::ptrdiff_t xb = static_cast<std::ptrdiff_t>(xo) + off[last];
                        for (std::size_t o = lo[last]; o < hi[last]; ++o)
                            yr[o] += xp[xb + static_cast<std::ptrdiff_t>(o * st)] * wv;
                    });
                });
            }
        }
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
