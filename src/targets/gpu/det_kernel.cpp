// det: one thread per matrix, LU decomposition with partial pivoting in double as ref does
// (ops/det.cpp), on a copy of its matrix in scratch memory the step keeps (correct, not fast).
#include "core/error.hpp"
#include "ops/det.hpp"
#include "targets/gpu/body_kernel.hpp"
#include "targets/gpu/lane_util.hpp"

namespace kiln::gpu {
namespace {

void lower_det(lowering_context& ctx, const instruction& ins) {
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& y = ins.get_shape();
    const std::size_t m = x.lens().back(), count = y.elements(), rank = x.ndim();
    std::vector<std::size_t> batch(rank - 2);
    for (std::size_t d = 0; d < batch.size(); ++d) batch[d] = d;
    const std::string rs = cat(x.strides()[rank - 2], "ll"), cs = cat(x.strides()[rank - 1], "ll");
    std::string code = cat(
        "#include \"kiln_elementwise.cuh\"\n",
        "extern \"C\" __global__ void __launch_bounds__(256) kiln_det(", device_type(y.type()), "* __restrict__ y, const ",
        device_type(x.type()), "* __restrict__ x, double* __restrict__ scratch) {\n",
        "    constexpr auto B = ", layout_of(x, batch), ";\n",
        "    constexpr kiln::i64 M = ", m, ";\n",
        "    for (kiln::index_t i = kiln::global_thread(); i < ", count, "ull; i += kiln::grid_threads()) {\n",
        "        double* a = scratch + i * (kiln::index_t)(M * M);\n",
        "        const kiln::i64 base = (kiln::i64)B.offset(i);\n",
        "        for (kiln::i64 r = 0; r < M; ++r)\n",
        "            for (kiln::i64 c = 0; c < M; ++c) a[r * M + c] = (double)kiln::load(x[base + r * ", rs, " + c * ", cs, "]);\n",
        "        double det = 1;\n",
        "        for (kiln::i64 c = 0; c < M; ++c) {\n",
        "            kiln::i64 pivot = c;\n",
        "            for (kiln::i64 r = c + 1; r < M; ++r)\n",
        "                if (fabs(a[r * M + c]) > fabs(a[pivot * M + c])) pivot = r;\n",
        "            if (a[pivot * M + c] == 0) { det = 0; break; }\n",
        "            if (pivot != c) {\n",
        "                for (kiln::i64 k = 0; k < M; ++k) { const double t = a[c * M + k]; a[c * M + k] = a[pivot * M + k]; a[pivot * M + k] = t; }\n",
        "                det = -det;\n",
        "            }\n",
        "            det *= a[c * M + c];\n",
        "            for (kiln::i64 r = c + 1; r < M; ++r) {\n",
        "                const double f = a[r * M + c] / a[c * M + c];\n",
        "                for (kiln::i64 k = c; k < M; ++k) a[r * M + k] -= f * a[c * M + k];\n",
        "            }\n",
        "        }\n",
        "        kiln::store(y[i], det);\n",
        "    }\n}\n");
    std::byte* scratch = ctx.scratch(std::max<std::size_t>(1, count * m * m) * sizeof(double), "det's working matrices");
    ctx.add_kernel(ins, {"kiln_det", code, ctx.where(ins)}, elementwise_launch(count),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0]), scratch});
}

const gpu_lowering_registrar det_lowering{{
    "det (generated kernel, one thread per matrix)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::det>() && ins.get_shape().standard(); },
    lower_det,
}};

}  // namespace
}  // namespace kiln::gpu
