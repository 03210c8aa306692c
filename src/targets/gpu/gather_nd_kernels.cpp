// Generated GatherElements and GatherND: one output element per thread, its data offset from the
// indices read at run time (negative counts from the end). An index out of range is recorded in
// the instruction's error slot (device/kiln_error.cuh), which fails the run with the reference's
// message, as the gather kernel does; that element gets 0 and nothing out of bounds is read.
#include "core/error.hpp"
#include "ops/gather.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

// What an element whose index is out of range gets: 0.
std::string zeroed(const shape& y) { return cat("{ y[i] = ", device_type(y.type()), "{}; continue; }"); }

std::string kernel_head(const std::string& entry, const instruction& ins) {
    const shape& y = ins.get_shape();
    return cat("#include \"kiln_elementwise.cuh\"\n#include \"kiln_error.cuh\"\n",
               "extern \"C\" __global__ void __launch_bounds__(256) ", entry, "(", device_type(y.type()),
               "* __restrict__ y, const ", device_type(ins.inputs()[0]->get_shape().type()), "* __restrict__ data, const ",
               device_type(ins.inputs()[1]->get_shape().type()), "* __restrict__ idx, kiln::error_slot* err) {\n",
               "    for (kiln::index_t i = kiln::global_thread(); i < ", y.elements(), "ull; i += kiln::grid_threads()) {\n",
               "        kiln::index_t r = i; kiln::i64 c[", std::max<std::size_t>(y.ndim(), 1), "];\n");
}

// The output's coordinates c[d] of element i.
std::string coordinates(const shape& y) {
    std::string code;
    for (std::size_t d = y.ndim(); d-- > 0;)
        code += cat("        c[", d, "] = (kiln::i64)(r % ", y.lens()[d], "ull); r /= ", y.lens()[d], "ull;\n");
    return code;
}

void add(lowering_context& ctx, const instruction& ins, const std::string& entry, std::string code, error_explainer explain) {
    const shape& y = ins.get_shape();
    if (!y.standard()) fail("gpu: ", ins.name(), " into a non-standard output: ", ctx.where(ins));
    code += "    }\n}\n";
    void* err = ctx.error_slot(ins, std::move(explain));
    ctx.add_kernel(ins, {entry, code, ctx.where(ins)}, elementwise_launch(y.elements()),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0]), ctx.address(*ins.inputs()[1]), err});
}

// out[c] = data[c with c[axis] replaced by indices[c]]; out has the indices' lens.
void lower_gather_elements(lowering_context& ctx, const instruction& ins) {
    const shape& data = ins.inputs()[0]->get_shape();
    const shape& idx = ins.inputs()[1]->get_shape();
    const shape& y = ins.get_shape();
    std::int64_t a = ins.get_operator().get<ops::gather_elements>().axis;
    std::size_t axis = static_cast<std::size_t>(a < 0 ? a + static_cast<std::int64_t>(data.ndim()) : a);
    std::string code = kernel_head("kiln_gather_elements", ins) + coordinates(y);
    std::string ioff = "0", doff = "0";
    for (std::size_t d = 0; d < y.ndim(); ++d) {
        ioff += cat(" + c[", d, "] * ", idx.strides()[d], "ll");
        if (d != axis) doff += cat(" + c[", d, "] * ", data.strides()[d], "ll");
    }
    // The output has the indices' lens: its element i is the indices' element i.
    std::size_t n = data.lens()[axis];
    code += cat(checked_index("k", cat("idx[", ioff, "]"), n, "i", zeroed(y)), "        y[i] = data[", doff, " + k * ",
                data.strides()[axis], "ll];\n");
    add(ctx, ins, "kiln_gather_elements", code, [axis, n](const error_slot& s) { return index_out_of_range(s, axis, n); });
}

// out[batch..., j..., rest...] = data[batch..., indices[batch..., j..., 0..m), rest...].
void lower_gathernd(lowering_context& ctx, const instruction& ins) {
    const shape& data = ins.inputs()[0]->get_shape();
    const shape& idx = ins.inputs()[1]->get_shape();
    const shape& y = ins.get_shape();
    std::size_t b = static_cast<std::size_t>(ins.get_operator().get<ops::gathernd>().batch_dims);
    std::size_t q = idx.ndim(), m = idx.lens().back();
    std::string code = kernel_head("kiln_gathernd", ins) + coordinates(y);
    // The output's first q-1 dims index the tuples (the first b of them shared with data), the
    // rest are data's dims after the tuple.
    std::string ibase = "0", doff = "0";
    for (std::size_t d = 0; d + 1 < q; ++d) ibase += cat(" + c[", d, "] * ", idx.strides()[d], "ll");
    for (std::size_t d = 0; d < b; ++d) doff += cat(" + c[", d, "] * ", data.strides()[d], "ll");
    for (std::size_t d = b + m; d < data.ndim(); ++d) doff += cat(" + c[", q - 1 + d - b - m, "] * ", data.strides()[d], "ll");
    // tuple: the row-major number of the index tuple, whose j-th index is indices element tuple * m + j.
    std::string tuple = "0ull";
    for (std::size_t d = 0; d + 1 < q; ++d) tuple = cat("(", tuple, " * ", idx.lens()[d], "ull + (kiln::u64)c[", d, "])");
    code += cat("        kiln::i64 off = ", doff, ";\n        const kiln::i64 ib = ", ibase, ";\n",
                "        const kiln::u64 tuple = ", tuple, ";\n");
    for (std::size_t j = 0; j < m; ++j) {
        std::string k = cat("k", j);
        code += cat(checked_index(k, cat("idx[ib + ", j * idx.strides().back(), "ll]"), data.lens()[b + j],
                                  cat("tuple * ", m, "ull + ", j, "ull"), zeroed(y)),
                    "        off += ", k, " * ", data.strides()[b + j], "ll;\n");
    }
    code += "        y[i] = data[off];\n";
    add(ctx, ins, "kiln_gathernd", code, [b, m, lens = data.lens()](const error_slot& s) {
        std::size_t dim = b + s.position % m;
        return index_out_of_range(s, dim, lens[dim]);
    });
}

bool static_shapes(const instruction& ins) {
    if (ins.get_shape().dynamic()) return false;
    for (auto i : ins.inputs())
        if (i->get_shape().dynamic()) return false;
    return true;
}

const gpu_lowering_registrar gather_elements_lowering{{
    "gather_elements (generated kernel)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::gather_elements>() && static_shapes(ins); },
    lower_gather_elements}};

const gpu_lowering_registrar gathernd_lowering{{
    "gathernd (generated kernel)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::gathernd>() && static_shapes(ins); },
    lower_gathernd}};

}  // namespace
}  // namespace kiln::gpu
