// Integer dot and gemm (cuBLASLt's integer GEMMs do not wrap as ONNX does): a generated kernel,
// one thread per output element, accumulating in 64 bits and wrapping to the element type as ref.
// gemm's alpha and beta stay exact when they are whole numbers, else go through double and
// truncate, as ref's scale_add. Correct, not fast.
#include <cmath>

#include "core/error.hpp"
#include "ops/gemm.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

// An operand as a batch of matrices [batch..., rows, cols] read through its strides: a vector is
// a row (a) or a column (b), its missing batch dims and batch dims of 1 broadcast (stride 0).
struct matrix {
    std::vector<std::size_t> batch_strides;
    std::size_t row_stride = 0, col_stride = 0;
};
matrix as_matrix(const shape& s, std::size_t batch_rank, const std::vector<std::size_t>& batch, bool is_a) {
    matrix m;
    std::vector<std::size_t> lens = s.lens(), strides = s.strides();
    if (lens.size() == 1) {
        if (is_a) lens.insert(lens.begin(), 1), strides.insert(strides.begin(), 0);
        else lens.push_back(1), strides.push_back(0);
    }
    std::size_t nb = lens.size() - 2;
    m.batch_strides.assign(batch_rank, 0);
    for (std::size_t d = 0; d < nb; ++d)
        if (lens[d] != 1 || batch[batch_rank - nb + d] == 1) m.batch_strides[batch_rank - nb + d] = strides[d];
    m.row_stride = lens[nb] == 1 ? 0 : strides[nb];
    m.col_stride = lens[nb + 1] == 1 ? 0 : strides[nb + 1];
    return m;
}

void lower_int_matmul(lowering_context& ctx, const instruction& ins) {
    const shape& as = ins.inputs()[0]->get_shape();
    const shape& bs = ins.inputs()[1]->get_shape();
    const shape& y = ins.get_shape();
    const auto* g = ins.get_operator().get_if<ops::gemm>();
    std::size_t m = as.ndim() == 1 ? 1 : as.lens()[as.ndim() - 2], k = as.lens().back();
    std::size_t n = bs.ndim() == 1 ? 1 : bs.lens().back();
    if (g && g->trans_a) std::swap(m, k);
    if (g && g->trans_b) n = bs.lens()[0];
    // The output's batch dims: all of its dims but the matrix ones (y's elements in row-major
    // order are [batch..., m, n]'s, whatever dims of size 1 the vector cases dropped).
    std::size_t batch_rank = std::max(as.ndim(), bs.ndim()) > 2 ? std::max(as.ndim(), bs.ndim()) - 2 : 0;
    std::vector<std::size_t> batch(y.lens().begin(), y.lens().begin() + static_cast<std::ptrdiff_t>(batch_rank));
    matrix a = as_matrix(as, batch_rank, batch, true), b = as_matrix(bs, batch_rank, batch, false);
    if (g && g->trans_a) std::swap(a.row_stride, a.col_stride);
    if (g && g->trans_b) std::swap(b.row_stride, b.col_stride);
    std::string acc = is_signed(y.type()) ? "kiln::i64" : "kiln::u64", ty = device_type(y.type());
    std::string params = cat(ty, "* __restrict__ y, const ", ty, "* __restrict__ a, const ", ty, "* __restrict__ b");
    std::vector<void*> ptrs{ctx.address(ins), ctx.address(*ins.inputs()[0]), ctx.address(*ins.inputs()[1])};
    std::string code = cat("    for (kiln::index_t e = kiln::global_thread(); e < ", y.elements(), "ull; e += kiln::grid_threads()) {\n",
                           "        kiln::index_t r = e;\n",
                           "        const kiln::i64 j = (kiln::i64)(r % ", n, "ull); r /= ", n, "ull;\n",
                           "        const kiln::i64 i = (kiln::i64)(r % ", m, "ull); r /= ", m, "ull;\n",
                           "        kiln::i64 ao = i * ", a.row_stride, "ll, bo = j * ", b.col_stride, "ll;\n");
    for (std::size_t d = batch_rank; d-- > 0;)
        code += cat("        { const kiln::i64 c = (kiln::i64)(r % ", batch[d], "ull); r /= ", batch[d], "ull; ao += c * ",
                    a.batch_strides[d], "ll; bo += c * ", b.batch_strides[d], "ll; }\n");
    code += cat("        ", acc, " s = 0;\n",
                "        for (kiln::i64 q = 0; q < ", k, "ll; ++q) s += (", acc, ")a[ao + q * ", a.col_stride, "ll] * (", acc,
                ")b[bo + q * ", b.row_stride, "ll];\n");
    std::string result = "s";
    if (g) {
        bool exact = g->alpha == std::trunc(g->alpha) && g->beta == std::trunc(g->beta);
        std::string c = "0";
        if (ins.inputs().size() > 2 && g->beta != 0) {
            shape cs = broadcast_to(ins.inputs()[2]->get_shape(), y.lens());
            params += cat(", const ", ty, "* __restrict__ cin");
            ptrs.push_back(ctx.address(*ins.inputs()[2]));
            c = cat("(", acc, ")cin[i * ", cs.strides()[0], "ll + j * ", cs.strides()[1], "ll]");
        }
        result = exact ? cat("(", acc, ")", static_cast<std::int64_t>(g->alpha), "ll * s + (", acc, ")",
                             static_cast<std::int64_t>(g->beta), "ll * ", c)
                       : cat("(", acc, ")(", double_literal(g->alpha), " * (double)s + ", double_literal(g->beta), " * (double)", c, ")");
    }
    code += cat("        y[e] = (", ty, ")(", result, ");\n    }\n}\n");
    if (!y.standard()) fail("gpu: integer matmul into a non-standard output: ", ctx.where(ins));
    std::string src = cat("#include \"kiln_elementwise.cuh\"\n",
                          "extern \"C\" __global__ void __launch_bounds__(256) kiln_int_matmul(", params, ") {\n", code);
    ctx.add_kernel(ins, {"kiln_int_matmul", src, ctx.where(ins)}, elementwise_launch(y.elements()), std::move(ptrs));
}

const gpu_lowering_registrar int_matmul_lowering{{
    "integer dot or gemm (generated kernel)",
    [](const instruction& ins) {
        const auto& op = ins.get_operator();
        if (!op.get_if<ops::dot>() && !op.get_if<ops::gemm>()) return false;
        dtype t = ins.get_shape().type();
        return is_integral(t) && t != dtype::bool_ && !ins.get_shape().dynamic();
    },
    lower_int_matmul}};

}  // namespace
}  // namespace kiln::gpu
