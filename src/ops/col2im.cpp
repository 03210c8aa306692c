// col2im, as ONNX Col2Im with image_shape and block_shape as attributes: the inverse of an
// im2col. Input [N, C * prod(block_shape), L] holds, for every one of the L sliding block
// positions (row-major over the spatial dims), the C blocks' elements; each is added at its
// image position, so overlapping blocks sum. Output [N, C, image_shape...]. dilations and
// strides default to 1, pads (begins then ends) to 0; positions in the padding are dropped.
#include "ops/col2im.hpp"

namespace kiln::ops {
namespace {

std::vector<std::size_t> to_sizes(const std::vector<std::int64_t>& v) { return {v.begin(), v.end()}; }

}  // namespace

col2im::geometry col2im::plan() const {
    std::size_t r = image_shape.size();
    if (r == 0) fail("image_shape is empty; expected one size per spatial dim");
    if (block_shape.size() != r)
        fail("block_shape has ", block_shape.size(), " values; expected ", r, " (as image_shape)");
    auto list = [&](const std::vector<std::int64_t>& v, const char* attr, std::size_t n, std::int64_t def) {
        if (v.empty()) return std::vector<std::int64_t>(n, def);
        if (v.size() != n) fail(attr, " has ", v.size(), " values; expected ", n);
        return v;
    };
    geometry g{image_shape,
               block_shape,
               list(dilations, "dilations", r, 1),
               list(strides, "strides", r, 1),
               list(pads, "pads", 2 * r, 0),
               {}};
    for (std::size_t d = 0; d < r; ++d) {
        if (g.image[d] < 1 || g.block[d] < 1) fail("image_shape and block_shape must be >= 1 (dim ", d, ")");
        if (g.dilation[d] < 1 || g.stride[d] < 1) fail("dilations and strides must be >= 1 (dim ", d, ")");
        if (g.pad[d] < 0 || g.pad[d + r] < 0) fail("pads must be >= 0 (dim ", d, ")");
        std::int64_t span = g.dilation[d] * (g.block[d] - 1) + 1;
        std::int64_t room = g.image[d] + g.pad[d] + g.pad[d + r] - span;
        if (room < 0) fail("the block (", span, " wide with dilation) does not fit the padded image in dim ", d);
        g.positions.push_back(room / g.stride[d] + 1);
    }
    g.pad.resize(r);
    return g;
}

shape col2im::compute_shape(std::span<const shape> in) const {
    geometry g = plan();
    check_input_count(in, 1);
    check_static(in);
    check_type(in, 0, numeric_type, "a numeric type");
    check_rank(in, 0, 3);
    const auto& x = in[0].lens();
    std::size_t block = elements_of(to_sizes(g.block)), positions = elements_of(to_sizes(g.positions));
    if (x[1] % block != 0) fail("input dim 1 is ", x[1], "; expected a multiple of the block size ", block);
    if (x[2] != positions) fail("input dim 2 is ", x[2], "; expected ", positions, " block positions");
    std::vector<std::size_t> lens{x[0], x[1] / block};
    for (auto s : g.image) lens.push_back(static_cast<std::size_t>(s));
    return {in[0].type(), lens};
}

argument col2im::compute(const shape& out, std::span<const argument> args) const {
    geometry g = plan();
    std::size_t r = g.image.size();
    auto x = to_doubles(args[0]);
    std::vector<double> y(out.elements());
    std::size_t batch = out.lens()[0], channels = out.lens()[1];
    std::size_t image = elements_of(out.lens()) / (batch * channels);
    auto blocks = to_sizes(g.block), positions = to_sizes(g.positions);
    std::size_t k = 0;  // x is read in row-major order: [n][c][block offset][position]
    for (std::size_t nc = 0; nc < batch * channels; ++nc)
        for_each_index(blocks, [&](std::span<const std::size_t> b) {
            for_each_index(positions, [&](std::span<const std::size_t> p) {
                double v = x[k++];
                std::size_t at = 0;
                for (std::size_t d = 0; d < r; ++d) {
                    std::int64_t i =
                        std::int64_t(p[d]) * g.stride[d] - g.pad[d] + std::int64_t(b[d]) * g.dilation[d];
                    if (i < 0 || i >= g.image[d]) return;
                    at = at * std::size_t(g.image[d]) + std::size_t(i);
                }
                y[nc * image + at] += v;
            });
        });
    return from_doubles(out, y);
}
KILN_REGISTER_OP(col2im)

}  // namespace kiln::ops
