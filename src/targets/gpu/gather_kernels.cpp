// Generated gather (ONNX Gather): one output element per thread; the index read from `indices`
// (negative counts from the end). An index out of range is recorded in the instruction's error
// slot (device/kiln_error.cuh), which fails the run with the reference's message; that element
// gets 0 and nothing out of bounds is read.
#include "core/error.hpp"
#include "ops/gather.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

void lower_gather(lowering_context& ctx, const instruction& ins) {
    const shape& data = ins.inputs()[0]->get_shape();
    const shape& idx = ins.inputs()[1]->get_shape();
    const shape& y = ins.get_shape();
    std::int64_t a = ins.get_operator().get<ops::gather>().axis;
    std::size_t axis = static_cast<std::size_t>(a < 0 ? a + static_cast<std::int64_t>(data.lens().size()) : a);
    std::size_t ni = idx.lens().size();
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n#include \"kiln_error.cuh\"\n",
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_gather(", device_type(y.type()),
                           "* __restrict__ y, const ", device_type(data.type()), "* __restrict__ data, const ",
                           device_type(idx.type()), "* __restrict__ idx, kiln::error_slot* err) {\n",
                           "    for (kiln::index_t i = kiln::global_thread(); i < ", y.elements(),
                           "ull; i += kiln::grid_threads()) {\n",
                           "        kiln::index_t r = i; kiln::i64 doff = 0, ioff = 0, c; kiln::u64 ipos = 0, iscale = 1;\n");
    // Output dims: data dims before axis, then the indices' dims, then data dims after axis.
    // ipos: the row-major position of the index read, which the error names as the reference does.
    for (std::size_t d = y.lens().size(); d-- > 0;) {
        code += cat("        c = (kiln::i64)(r % ", y.lens()[d], "ull); r /= ", y.lens()[d], "ull; ");
        if (d < axis) code += cat("doff += c * ", data.strides()[d], "ll;\n");
        else if (d < axis + ni)
            code += cat("ioff += c * ", idx.strides()[d - axis], "ll; ipos += (kiln::u64)c * iscale; iscale *= ",
                        idx.lens()[d - axis], "ull;\n");
        else code += cat("doff += c * ", data.strides()[d - ni + 1], "ll;\n");
    }
    std::size_t n = data.lens()[axis];
    std::string yi = y.standard() ? "i" : "0";
    code += cat(checked_index("k", "idx[ioff]", n, "ipos", cat("{ y[", yi, "] = ", device_type(y.type()), "{}; continue; }")),
                "        y[", yi, "] = data[doff + k * ", data.strides()[axis], "ll];\n    }\n}\n");
    if (!y.standard()) fail("gpu: gather into a non-standard output: ", ctx.where(ins));
    void* err = ctx.error_slot(ins, [axis, n](const error_slot& s) { return index_out_of_range(s, axis, n); });
    ctx.add_kernel(ins, {"kiln_gather", code, ctx.where(ins)}, elementwise_launch(y.elements()),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0]), ctx.address(*ins.inputs()[1]), err});
}

const gpu_lowering_registrar gather_lowering{{
    "gather (generated kernel)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::gather>() != nullptr; },
    [](lowering_context& ctx, const instruction& ins) { lower_gather(ctx, ins); }}};

}  // namespace
}  // namespace kiln::gpu

#include "ops/data_movement.hpp"

namespace kiln::gpu {
namespace {

// Concat: each output element copies from the input whose range along the axis holds it.
void lower_concat(lowering_context& ctx, const instruction& ins) {
    const shape& y = ins.get_shape();
    std::int64_t a = ins.get_operator().get<ops::concat>().axis;
    std::size_t nd = y.lens().size();
    std::size_t axis = static_cast<std::size_t>(a < 0 ? a + static_cast<std::int64_t>(nd) : a);
    std::string params = cat(device_type(y.type()), "* __restrict__ y");
    std::vector<void*> ptrs{ctx.address(ins)};
    for (std::size_t k = 0; k < ins.inputs().size(); ++k) {
        params += cat(", const ", device_type(ins.inputs()[k]->get_shape().type()), "* __restrict__ p", k);
        ptrs.push_back(ctx.address(*ins.inputs()[k]));
    }
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n",
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_concat(", params, ") {\n",
                           "    for (kiln::index_t i = kiln::global_thread(); i < ", y.elements(),
                           "ull; i += kiln::grid_threads()) {\n",
                           "        kiln::index_t r = i; kiln::i64 c[", std::max<std::size_t>(nd, 1), "];\n");
    for (std::size_t d = nd; d-- > 0;)
        code += cat("        c[", d, "] = (kiln::i64)(r % ", y.lens()[d], "ull); r /= ", y.lens()[d], "ull;\n");
    std::size_t start = 0;
    bool first = true;
    for (std::size_t k = 0; k < ins.inputs().size(); ++k) {
        const shape& s = ins.inputs()[k]->get_shape();
        std::size_t end = start + s.lens()[axis];
        if (s.lens()[axis] == 0) continue;
        std::string off;
        for (std::size_t d = 0; d < nd; ++d)
            off += cat(d ? " + " : "", d == axis ? cat("(c[", d, "] - ", start, "ll)") : cat("c[", d, "]"), " * ", s.strides()[d], "ll");
        code += cat("        ", first ? "" : "else ", "if (c[", axis, "] < ", end, "ll) y[i] = kiln::storer<", device_type(y.type()),
                    ">::from(kiln::load(p", k, "[", off, "]));\n");
        start = end;
        first = false;
    }
    code += "    }\n}\n";
    if (!y.standard()) fail("gpu: concat into a non-standard output: ", ctx.where(ins));
    ctx.add_kernel(ins, {"kiln_concat", code, ctx.where(ins)}, elementwise_launch(y.elements()), std::move(ptrs));
}

const gpu_lowering_registrar concat_lowering{{
    "concat (generated kernel)",
    [](const instruction& ins) {
        return ins.get_operator().get_if<ops::concat>() != nullptr && !ins.get_shape().lens().empty();
    },
    [](lowering_context& ctx, const instruction& ins) { lower_concat(ctx, ins); }}};

}  // namespace
}  // namespace kiln::gpu
