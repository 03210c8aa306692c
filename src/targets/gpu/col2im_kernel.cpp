// col2im: the geometry is static, so the lowering lists, for every image position, the (block
// offset, block position) pairs that add to it, in the order ref adds them (ops/col2im.cpp), as
// a table uploaded once (CSR: each position's first entry, then the entries). One thread per
// output element sums its x values in double and rounds once.
#include "core/error.hpp"
#include "core/argument.hpp"
#include "ops/col2im.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

// For each image position (row-major), the x rows (block offset b) and columns (position p)
// that land there, as b * positions + p, in increasing order (ref's).
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> gather_table(const ops::col2im::geometry& g) {
    const std::size_t r = g.image.size();
    std::size_t image = 1, blocks = 1, positions = 1;
    for (std::size_t d = 0; d < r; ++d) image *= g.image[d], blocks *= g.block[d], positions *= g.positions[d];
    std::vector<std::vector<std::int64_t>> at(image);
    std::vector<std::int64_t> b(r), p(r);
    for (std::size_t bi = 0; bi < blocks; ++bi) {
        for (std::size_t rest = bi, d = r; d-- > 0;) b[d] = std::int64_t(rest % g.block[d]), rest /= g.block[d];
        for (std::size_t pi = 0; pi < positions; ++pi) {
            for (std::size_t rest = pi, d = r; d-- > 0;) p[d] = std::int64_t(rest % g.positions[d]), rest /= g.positions[d];
            std::int64_t where = 0;
            bool inside = true;
            for (std::size_t d = 0; d < r && inside; ++d) {
                std::int64_t i = p[d] * g.stride[d] - g.pad[d] + b[d] * g.dilation[d];
                inside = i >= 0 && i < g.image[d];
                where = where * g.image[d] + i;
            }
            if (inside) at[std::size_t(where)].push_back(std::int64_t(bi * positions + pi));
        }
    }
    std::vector<std::int64_t> first{0}, entries;
    for (const auto& v : at) {
        entries.insert(entries.end(), v.begin(), v.end());
        first.push_back(std::int64_t(entries.size()));
    }
    if (entries.empty()) entries.push_back(0);
    return {first, entries};
}

void lower_col2im(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::col2im>();
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& y = ins.get_shape();
    auto g = op.plan();
    auto [first, entries] = gather_table(g);
    std::size_t positions = 1, blocks = 1;
    for (auto v : g.positions) positions *= std::size_t(v);
    for (auto v : g.block) blocks *= std::size_t(v);
    const std::size_t image = first.size() - 1, channels = y.lens()[1];
    std::string code = cat(
        "#include \"kiln_elementwise.cuh\"\n",
        "extern \"C\" __global__ void __launch_bounds__(256) kiln_col2im(", device_type(y.type()), "* __restrict__ y, const ",
        device_type(x.type()), "* __restrict__ x, const kiln::i64* __restrict__ first, const kiln::i64* __restrict__ entries) {\n",
        "    for (kiln::index_t i = kiln::global_thread(); i < ", y.elements(), "ull; i += kiln::grid_threads()) {\n",
        "        const kiln::index_t at = i % ", image, "ull, c = i / ", image, "ull % ", channels, "ull, n = i / ", image * channels, "ull;\n",
        "        const kiln::i64 base = (kiln::i64)n * ", x.strides()[0], "ll + (kiln::i64)(c * ", blocks, "ull) * ", x.strides()[1], "ll;\n",
        "        double acc = 0;\n",
        "        for (kiln::i64 e = first[at]; e < first[at + 1]; ++e) {\n",
        "            const kiln::i64 k = entries[e], b = k / ", positions, "ll, p = k % ", positions, "ll;\n",
        "            acc += (double)kiln::load(x[base + b * ", x.strides()[1], "ll + p * ", x.strides()[2], "ll]);\n",
        "        }\n",
        "        kiln::store(y[i], acc);\n    }\n}\n");
    auto table = [&](const std::vector<std::int64_t>& v, const char* what) {
        return ctx.upload(literal(shape(dtype::int64, std::vector<std::size_t>{v.size()}), std::span<const std::int64_t>(v)).get_argument(),
                          cat(ctx.where(ins), " (", what, ")"));
    };
    std::byte* f = table(first, "col2im's first entries");
    std::byte* e = table(entries, "col2im's entries");
    ctx.add_kernel(ins, {"kiln_col2im", code, ctx.where(ins)}, elementwise_launch(y.elements()),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0]), f, e});
}

const gpu_lowering_registrar col2im_lowering{{
    "col2im (generated kernel over a gather table)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::col2im>() && ins.get_shape().standard(); },
    lower_col2im,
}};

}  // namespace
}  // namespace kiln::gpu
