// topk (ops/topk.hpp) as one generated kernel writing both results of its tuple, values and int64
// indices. One thread per input element counts the elements of its row that come before it in
// ref's stable order (larger first, or smaller with largest=false; NaN above every number; equal
// elements by lower index); an element whose rank is below k writes its value and index at that
// rank. So ties, NaN and -0/+0 follow ref exactly and every row runs in parallel; a thread stops
// counting once its rank reaches k, but a row still costs O(n^2) comparisons: correct, not fast.
// The values are copied, not converted, so they are bitwise ref's.
#include <algorithm>

#include "core/error.hpp"
#include "ops/topk.hpp"
#include "targets/gpu/lane_util.hpp"
#include "targets/gpu/lowering.hpp"

namespace kiln::gpu {
namespace {

void lower_topk(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::topk>();
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& v = ins.get_shape().sub_shapes()[0];
    const shape& ix = ins.get_shape().sub_shapes()[1];
    std::size_t axis = static_cast<std::size_t>(op.axis < 0 ? op.axis + static_cast<std::int64_t>(x.ndim()) : op.axis);
    std::size_t n = x.lens()[axis], rows = x.elements() / std::max<std::size_t>(n, 1);
    if (v.elements() == 0) return;   // k = 0 (or an empty row set): nothing to write
    lane_split s = split(x.ndim(), {axis});
    // before(a, b): a comes first in the order; NaN compares above every number.
    std::string greater = "(a != a ? b == b : b != b ? false : a > b)";
    std::string code = cat(
        "#include \"kiln_elementwise.cuh\"\n",
        "template <class C> __device__ __forceinline__ bool before(C a, C b) {\n",
        op.largest ? "" : "    const C t = a; a = b; b = t;\n",
        "    return ", greater, ";\n}\n",
        "extern \"C\" __global__ void __launch_bounds__(256) kiln_topk(", device_type(v.type()), "* __restrict__ values, ",
        "kiln::i64* __restrict__ indices, const ", device_type(x.type()), "* __restrict__ x) {\n",
        "    constexpr auto X = ", layout_of(x, s.kept), ";\n",
        "    constexpr auto V = ", layout_of(v, s.kept), ";\n",
        "    constexpr auto I = ", layout_of(ix, s.kept), ";\n",
        "    constexpr kiln::i64 N = ", n, "ll, K = ", op.k, "ll, S = ", x.strides()[axis], "ll;\n",
        "    for (kiln::index_t t = kiln::global_thread(); t < ", rows * n, "ull; t += kiln::grid_threads()) {\n",
        "        const kiln::index_t row = t / N;\n",
        "        const kiln::i64 i = (kiln::i64)(t % N), base = X.offset(row);\n",
        "        const auto xi = kiln::load(x[base + i * S]);\n",
        "        kiln::i64 rank = 0;\n",
        "        for (kiln::i64 j = 0; j < N && rank < K; ++j) {\n",
        "            if (j == i) continue;\n",
        "            const auto xj = kiln::load(x[base + j * S]);\n",
        "            rank += before(xj, xi) || (j < i && !before(xi, xj));\n",
        "        }\n",
        "        if (rank >= K) continue;\n",
        "        values[V.offset(row) + rank * ", v.strides()[axis], "ll] = x[base + i * S];\n",
        "        indices[I.offset(row) + rank * ", ix.strides()[axis], "ll] = i;\n",
        "    }\n}\n");
    ctx.add_kernel(ins, {"kiln_topk", code, ctx.where(ins)}, elementwise_launch(rows * n),
                   {ctx.element_address(ins, 0), ctx.element_address(ins, 1), ctx.address(*ins.inputs()[0])});
}

const gpu_lowering_registrar topk_lowering{{
    "topk (generated kernel, one thread per element ranking it in its row)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::topk>() != nullptr; },
    lower_topk}};

}  // namespace
}  // namespace kiln::gpu
