// deform_conv, as ONNX DeformConv: a grouped convolution whose kernel taps are moved by learned
// offsets. Inputs X [N, C, spatial...], W [M, C / group, kernel...], offset [N, offset_group *
// prod(kernel) * r, out...] (per offset group and tap, one displacement per spatial dim), and
// optional B [M] and mask [N, offset_group * prod(kernel), out...] (scales each tap). A tap
// reads X by n-linear interpolation at its displaced position, zero outside the input.
// kernel_shape defaults to W's, dilations and strides to 1, pads (begins, ends) to 0.
#include <cmath>

#include "ops/deform_conv.hpp"

namespace kiln::ops {

std::vector<std::int64_t> deform_conv::list(const std::vector<std::int64_t>& v, const char* attr, std::size_t n,
                                      std::int64_t def) {
    if (v.empty()) return std::vector<std::int64_t>(n, def);
    if (v.size() != n) fail(attr, " has ", v.size(), " values; expected ", n);
    return v;
}

std::pair<std::vector<std::size_t>, std::vector<std::size_t>> deform_conv::geometry(const shape& x,
                                                                                    const shape& w) const {
    std::size_t r = x.ndim() - 2;
    std::vector<std::size_t> k(w.lens().begin() + 2, w.lens().end());
    if (!kernel_shape.empty() && std::vector<std::size_t>(kernel_shape.begin(), kernel_shape.end()) != k)
        fail("kernel_shape does not match W's spatial dims ", lens_to_string(k));
    auto dil = list(dilations, "dilations", r, 1), st = list(strides, "strides", r, 1);
    auto pd = list(pads, "pads", 2 * r, 0);
    std::vector<std::size_t> out;
    for (std::size_t d = 0; d < r; ++d) {
        if (dil[d] < 1 || st[d] < 1 || pd[d] < 0 || pd[d + r] < 0)
            fail("dilations and strides must be >= 1 and pads >= 0 (dim ", d, ")");
        std::int64_t span = (std::int64_t(k[d]) - 1) * dil[d] + 1;
        std::int64_t room = std::int64_t(x.lens()[d + 2]) + pd[d] + pd[d + r] - span;
        if (room < 0) fail("the kernel (", span, " wide with dilation) does not fit the padded input in dim ", d);
        out.push_back(std::size_t(room / st[d] + 1));
    }
    return {k, out};
}

shape deform_conv::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 3, 5);
    check_static(in);
    check_same_type(in);
    check_type(in, 0, float_type, "a float type");
    check_rank(in, 0, 3, true);
    std::size_t r = in[0].ndim() - 2, c = in[0].lens()[1], m = in[1].lens()[0];
    check_rank(in, 1, r + 2);
    check_rank(in, 2, r + 2);
    if (group < 1 || offset_group < 1) fail("group and offset_group must be >= 1");
    if (in[1].lens()[1] * std::size_t(group) != c || m % std::size_t(group) != 0)
        fail("W ", lens_to_string(in[1].lens()), " does not fit ", c, " input channels in ", group, " groups");
    if (c % std::size_t(offset_group) != 0)
        fail(c, " input channels do not split into ", offset_group, " offset groups");
    auto [k, out] = geometry(in[0], in[1]);
    std::size_t taps = std::size_t(offset_group) * elements_of(k);
    std::vector<std::size_t> lens{in[0].lens()[0], taps * r};
    lens.insert(lens.end(), out.begin(), out.end());
    if (in[2].lens() != lens) fail("offset is ", lens_to_string(in[2].lens()), "; expected ", lens_to_string(lens));
    if (in.size() > 3 && in[3].lens() != std::vector<std::size_t>{m})
        fail("B is ", lens_to_string(in[3].lens()), "; expected {", m, "}");
    lens[1] = taps;
    if (in.size() > 4 && in[4].lens() != lens)
        fail("mask is ", lens_to_string(in[4].lens()), "; expected ", lens_to_string(lens));
    lens[1] = m;
    return {in[0].type(), lens};
}

double deform_conv::interpolate(const double* plane, const std::vector<std::size_t>& lens,
                                const std::vector<double>& p) {
    std::size_t r = lens.size();
    double acc = 0;
    for (std::size_t corner = 0; corner < (std::size_t{1} << r); ++corner) {
        double w = 1;
        std::size_t at = 0;
        for (std::size_t d = 0; d < r && w != 0; ++d) {
            double lo = std::floor(p[d]);
            bool up = (corner >> d) & 1;
            double i = lo + (up ? 1 : 0);
            w *= up ? p[d] - lo : 1 - (p[d] - lo);
            if (i < 0 || i >= double(lens[d]))
                w = 0;
            else
                at = at * lens[d] + std::size_t(i);
        }
        if (w != 0) acc += w * plane[at];
    }
    return acc;
}

// cols[n][ic][tap][o]: the (masked) input value that each tap reads for each output position.
std::vector<double> deform_conv::im2col(std::span<const argument> args, const std::vector<std::size_t>& k,
                                        const std::vector<std::size_t>& spatial_out) const {
    const shape& xs = args[0].get_shape();
    std::size_t r = k.size(), batch = xs.lens()[0], c = xs.lens()[1], groups = std::size_t(offset_group);
    std::vector<std::size_t> in_lens(xs.lens().begin() + 2, xs.lens().end());
    std::size_t plane = elements_of(in_lens), taps = elements_of(k), outs = elements_of(spatial_out);
    auto dil = list(dilations, "dilations", r, 1), st = list(strides, "strides", r, 1);
    auto pd = list(pads, "pads", 2 * r, 0);
    auto x = to_doubles(args[0]), offset = to_doubles(args[2]);
    std::vector<double> mask = args.size() > 4 ? to_doubles(args[4]) : std::vector<double>();
    std::vector<double> cols(batch * c * taps * outs), p(r);
    shape tap_grid(dtype::float32, k), out_grid(dtype::float32, spatial_out);
    for (std::size_t n = 0; n < batch; ++n)
        for (std::size_t og = 0; og < groups; ++og)
            for (std::size_t t = 0; t < taps; ++t)
                for (std::size_t o = 0; o < outs; ++o) {
                    auto tap = tap_grid.multi(t), pos = out_grid.multi(o);
                    std::size_t ch = ((n * groups + og) * taps + t) * r;  // offset channel of dim 0
                    for (std::size_t d = 0; d < r; ++d)
                        p[d] = double(std::int64_t(pos[d]) * st[d] - pd[d] + std::int64_t(tap[d]) * dil[d]) +
                               offset[(ch + d) * outs + o];
                    double scale = mask.empty() ? 1.0 : mask[((n * groups + og) * taps + t) * outs + o];
                    for (std::size_t ic = og * (c / groups); ic < (og + 1) * (c / groups); ++ic)
                        cols[((n * c + ic) * taps + t) * outs + o] =
                            scale * interpolate(&x[(n * c + ic) * plane], in_lens, p);
                }
    return cols;
}

// y[n][oc][o] = B[oc] + sum over the group's input channels and taps of W * cols.
argument deform_conv::compute(const shape& out, std::span<const argument> args) const {
    auto [k, spatial_out] = geometry(args[0].get_shape(), args[1].get_shape());
    auto cols = im2col(args, k, spatial_out);
    std::size_t batch = out.lens()[0], c = args[0].get_shape().lens()[1], m = out.lens()[1];
    std::size_t taps = elements_of(k), outs = elements_of(spatial_out);
    std::size_t cpg = c / std::size_t(group), mpg = m / std::size_t(group);
    auto w = to_doubles(args[1]);
    auto bias = args.size() > 3 ? to_doubles(args[3]) : std::vector<double>(m, 0.0);
    std::vector<double> y(out.elements());
    for (std::size_t n = 0; n < batch; ++n)
        for (std::size_t oc = 0; oc < m; ++oc)
            for (std::size_t o = 0; o < outs; ++o) {
                double acc = bias[oc];
                std::size_t first = oc / mpg * cpg;
                for (std::size_t icg = 0; icg < cpg; ++icg)
                    for (std::size_t t = 0; t < taps; ++t)
                        acc += w[(oc * cpg + icg) * taps + t] * cols[((n * c + first + icg) * taps + t) * outs + o];
                y[(n * m + oc) * outs + o] = acc;
            }
    return from_doubles(out, y);
}

KILN_REGISTER_OP(deform_conv)

}  // namespace kiln::ops
