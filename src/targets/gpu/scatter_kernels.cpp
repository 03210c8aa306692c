// Generated ScatterElements and ScatterND: a copy of data into the output (one element per
// thread), then the updates applied by one thread in ref's row-major order, so duplicate indices
// and reductions give exactly ref's result (correct, not fast: a parallel path for reduction none
// without duplicates is future work). Negative indices count from the end; an index out of range
// is recorded in the instruction's error slot (device/kiln_error.cuh), which fails the run with the
// reference's message, and its update is skipped, so nothing out of bounds is written.
#include "core/error.hpp"
#include "ops/scatter.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

// The update combined into the output element d (both in their compute type), as ref's combine.
std::string combined(const std::string& reduction, const std::string& where) {
    if (reduction == "none") return "u";
    if (reduction == "add") return "d + u";
    if (reduction == "mul") return "d * u";
    if (reduction == "max") return "(d < u ? u : d)";
    if (reduction == "min") return "(u < d ? u : d)";
    fail("gpu: scatter reduction '", reduction, "' the generated kernel does not take: ", where);
}

// `dst`: statements setting `off` (the output offset) from the update's coordinates c[] (and its
// row-major number n); `explain` words a recorded index out of range.
void lower_scatter(lowering_context& ctx, const instruction& ins, const std::string& reduction, const std::string& dst,
                   error_explainer explain) {
    const shape& data = ins.inputs()[0]->get_shape();
    const shape& idx = ins.inputs()[1]->get_shape();
    const shape& upd = ins.inputs()[2]->get_shape();
    const shape& y = ins.get_shape();
    if (!y.standard()) fail("gpu: scatter into a non-standard output: ", ctx.where(ins));
    elementwise_spec copy{{data}, y, "const auto y = x0;"};
    ctx.add_kernel(ins, make_elementwise_kernel(copy, ctx.where(ins)), elementwise_launch(y.elements()),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0])});
    std::string ty = device_type(y.type()), ct = compute_type(y.type());
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n#include \"kiln_error.cuh\"\n#include \"scalar_helpers.h\"\n",
                           "extern \"C\" __global__ void kiln_scatter(", ty, "* __restrict__ y, const ", device_type(idx.type()),
                           "* __restrict__ idx, const ", ty, "* __restrict__ upd, kiln::error_slot* err) {\n",
                           "    if (blockIdx.x != 0 || threadIdx.x != 0) return;\n",
                           "    for (kiln::index_t n = 0; n < ", upd.elements(), "ull; ++n) {\n",
                           "        kiln::index_t r = n; kiln::i64 c[", std::max<std::size_t>(upd.ndim(), 1), "]; kiln::i64 off = 0;\n");
    for (std::size_t d = upd.ndim(); d-- > 0;)
        code += cat("        c[", d, "] = (kiln::i64)(r % ", upd.lens()[d], "ull); r /= ", upd.lens()[d], "ull;\n");
    std::string uoff = "0";
    for (std::size_t d = 0; d < upd.ndim(); ++d) uoff += cat(" + c[", d, "] * ", upd.strides()[d], "ll");
    code += cat(dst, "        const ", ct, " d = kiln::load(y[off]), u = kiln::load(upd[", uoff, "]);\n",
                "        y[off] = kiln::storer<", ty, ">::from(", combined(reduction, ctx.where(ins)), ");\n    }\n}\n");
    void* err = ctx.error_slot(ins, std::move(explain));
    ctx.add_kernel(ins, {"kiln_scatter", code, ctx.where(ins)}, launch_dims{1, 1},
                   {ctx.address(ins), ctx.address(*ins.inputs()[1]), ctx.address(*ins.inputs()[2]), err});
}

// out[c with c[axis] = indices[c]] (+)= updates[c].
void lower_scatter_elements(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::scatter_elements>();
    const shape& idx = ins.inputs()[1]->get_shape();
    const shape& y = ins.get_shape();
    std::size_t axis = static_cast<std::size_t>(op.axis < 0 ? op.axis + static_cast<std::int64_t>(y.ndim()) : op.axis);
    std::string ioff = "0", dst;
    for (std::size_t d = 0; d < y.ndim(); ++d) {
        ioff += cat(" + c[", d, "] * ", idx.strides()[d], "ll");
        if (d != axis) dst += cat("        off += c[", d, "] * ", y.strides()[d], "ll;\n");
    }
    // The indices have the updates' lens: update n reads indices element n.
    std::size_t n = y.lens()[axis];
    dst += cat(checked_index("k", cat("idx[", ioff, "]"), n, "n", "continue;"), "        off += k * ", y.strides()[axis], "ll;\n");
    lower_scatter(ctx, ins, op.reduction, dst, [axis, n](const error_slot& s) { return index_out_of_range(s, axis, n); });
}

// out[indices[c[0..q), :], c[q..)] (+)= updates[c]: the first q update dims pick an index tuple.
void lower_scatternd(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::scatternd>();
    const shape& idx = ins.inputs()[1]->get_shape();
    const shape& y = ins.get_shape();
    std::size_t q = idx.ndim() - 1, k = idx.lens().back();
    // tuple: the row-major number of the index tuple, whose j-th index is indices element tuple * k + j.
    std::string ib = "0", tuple = "0ull", dst;
    for (std::size_t d = 0; d < q; ++d) {
        ib += cat(" + c[", d, "] * ", idx.strides()[d], "ll");
        tuple = cat("(", tuple, " * ", idx.lens()[d], "ull + (kiln::u64)c[", d, "])");
    }
    dst += cat("        const kiln::i64 ib = ", ib, ";\n        const kiln::u64 tuple = ", tuple, ";\n");
    for (std::size_t j = 0; j < k; ++j) {
        std::string v = cat("k", j);
        dst += cat(checked_index(v, cat("idx[ib + ", j * idx.strides().back(), "ll]"), y.lens()[j],
                                 cat("tuple * ", k, "ull + ", j, "ull"), "continue;"),
                   "        off += ", v, " * ", y.strides()[j], "ll;\n");
    }
    for (std::size_t d = k; d < y.ndim(); ++d) dst += cat("        off += c[", q + d - k, "] * ", y.strides()[d], "ll;\n");
    lower_scatter(ctx, ins, op.reduction, dst, [k, lens = y.lens()](const error_slot& s) {
        std::size_t dim = s.position % k;
        return index_out_of_range(s, dim, lens[dim]);
    });
}

bool static_shapes(const instruction& ins) {
    if (ins.get_shape().dynamic()) return false;
    for (auto i : ins.inputs())
        if (i->get_shape().dynamic()) return false;
    return true;
}

const gpu_lowering_registrar scatter_elements_lowering{{
    "scatter_elements (generated copy and in-order update kernels)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::scatter_elements>() && static_shapes(ins); },
    lower_scatter_elements}};

const gpu_lowering_registrar scatternd_lowering{{
    "scatternd (generated copy and in-order update kernels)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::scatternd>() && static_shapes(ins); },
    lower_scatternd}};

}  // namespace
}  // namespace kiln::gpu
