// Generated LRN (local response normalisation across channels): one thread per element sums the
// squares of its channel window (size channels around it, clipped at the edges) and divides, in
// double as ref does.
#include "core/error.hpp"
#include "ops/pooling.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

void lower_lrn(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::lrn>();
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& y = ins.get_shape();
    std::int64_t before = (op.size - 1) / 2, after = op.size / 2;
    std::int64_t channels = static_cast<std::int64_t>(x.lens()[1]);
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n",
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_lrn(", device_type(y.type()),
                           "* __restrict__ y, const ", device_type(x.type()), "* __restrict__ x) {\n",
                           "    for (kiln::index_t i = kiln::global_thread(); i < ", y.elements(), "ull; i += kiln::grid_threads()) {\n",
                           "        kiln::index_t r = i; kiln::i64 off = 0, c = 0;\n");
    for (std::size_t d = x.ndim(); d-- > 0;) {
        code += cat("        { const kiln::i64 k = (kiln::i64)(r % ", x.lens()[d], "ull); r /= ", x.lens()[d], "ull; off += k * ",
                    x.strides()[d], "ll;", d == 1 ? " c = k;" : "", " }\n");
    }
    code += cat("        double sq = 0;\n",
                "        const kiln::i64 lo = c - ", before, "ll < 0 ? 0 : c - ", before, "ll;\n",
                "        const kiln::i64 hi = c + ", after, "ll > ", channels - 1, "ll ? ", channels - 1, "ll : c + ", after, "ll;\n",
                "        for (kiln::i64 k = lo; k <= hi; ++k) { const double v = (double)kiln::load(x[off + (k - c) * ",
                x.strides()[1], "ll]); sq += v * v; }\n",
                "        const double v = (double)kiln::load(x[off]);\n",
                "        y[i] = kiln::storer<", device_type(y.type()), ">::from(v / pow(", double_literal(op.bias), " + ",
                double_literal(op.alpha), " / ", double_literal(static_cast<double>(op.size)), " * sq, ", double_literal(op.beta),
                "));\n    }\n}\n");
    if (!y.standard()) fail("gpu: lrn into a non-standard output: ", ctx.where(ins));
    ctx.add_kernel(ins, {"kiln_lrn", code, ctx.where(ins)}, elementwise_launch(y.elements()),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0])});
}

const gpu_lowering_registrar lrn_lowering{{
    "lrn (generated kernel)",
    [](const instruction& ins) {
        return ins.get_operator().get_if<ops::lrn>() && ins.inputs().size() == 1 && ins.get_shape().ndim() >= 2 &&
               !ins.inputs()[0]->get_shape().dynamic();
    },
    lower_lrn}};

}  // namespace
}  // namespace kiln::gpu
