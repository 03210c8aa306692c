// tensor_scatter (a KV cache update): one thread per output element, which takes the update's
// element that lands on its position along `axis` (from write_indices[b], wrapping in circular
// mode) or else the past's. A start that does not fit is a run-time error naming the batch entry.
#include "core/error.hpp"
#include "ops/tensor_scatter.hpp"
#include "targets/gpu/body_kernel.hpp"
#include "targets/gpu/lane_util.hpp"

namespace kiln::gpu {
namespace {

void lower_tensor_scatter(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::tensor_scatter>();
    const shape& past = ins.inputs()[0]->get_shape();
    const shape& update = ins.inputs()[1]->get_shape();
    const shape& y = ins.get_shape();
    const auto& l = y.lens();
    const std::size_t a = static_cast<std::size_t>(op.axis < 0 ? op.axis + std::int64_t(l.size()) : op.axis);
    std::size_t inner = 1, outer = 1;
    for (std::size_t d = a + 1; d < l.size(); ++d) inner *= l[d];
    for (std::size_t d = 1; d < a; ++d) outer *= l[d];
    const std::size_t seq = update.lens()[a], max_seq = l[a];
    const bool indexed = ins.inputs().size() == 3, linear = op.mode == "linear";
    std::string params = cat(device_type(y.type()), "* __restrict__ y, const ", device_type(past.type()), "* __restrict__ past, const ",
                             device_type(update.type()), "* __restrict__ update");
    if (indexed) params += ", const kiln::i64* __restrict__ write_indices";
    std::string code = cat(
        "#include \"kiln_elementwise.cuh\"\n#include \"kiln_error.cuh\"\n",
        "extern \"C\" __global__ void __launch_bounds__(256) kiln_tensor_scatter(", params, ", kiln::error_slot* err) {\n",
        "    constexpr auto P = ", layout_of_all(past), ";\n",
        "    constexpr auto U = ", layout_of_all(update), ";\n",
        "    constexpr kiln::i64 seq = ", seq, ", max_seq = ", max_seq, ";\n",
        "    for (kiln::index_t i = kiln::global_thread(); i < ", y.elements(), "ull; i += kiln::grid_threads()) {\n",
        "        const kiln::index_t in = i % ", inner, "ull, bo = i / ", inner * max_seq, "ull, b = bo / ", outer, "ull;\n",
        "        const kiln::i64 pos = (kiln::i64)(i / ", inner, "ull % ", max_seq, "ull);\n",
        "        const kiln::i64 start = ", indexed ? cat("write_indices[b * ", ins.inputs()[2]->get_shape().strides()[0], "ull]") : "0", ";\n",
        "        if (start < 0", linear ? " || start + seq > max_seq" : "", ") {\n",
        "            kiln::raise(err, kiln::error_index_out_of_range, start, b);\n",
        "            y[i] = past[P.offset(i)];\n            continue;\n        }\n",
        "        const kiln::i64 s = ", linear ? "pos - start" : "((pos - start) % max_seq + max_seq) % max_seq", ";\n",
        "        y[i] = s >= 0 && s < seq ? update[U.offset((bo * seq + s) * ", inner, "ull + in)] : past[P.offset(i)];\n",
        "    }\n}\n");
    void* err = ctx.error_slot(ins, [seq, max_seq, linear](const error_slot& s) {
        return cat("write_indices[", s.position, "] = ", s.value, ": ", seq, " positions from it do not fit in ", max_seq,
                   linear ? " (mode 'linear')" : "");
    });
    std::vector<void*> pointers{ctx.address(ins)};
    for (auto i : ins.inputs()) pointers.push_back(ctx.address(*i));
    pointers.push_back(err);
    ctx.add_kernel(ins, {"kiln_tensor_scatter", code, ctx.where(ins)}, elementwise_launch(y.elements()), std::move(pointers));
}

const gpu_lowering_registrar tensor_scatter_lowering{{
    "tensor_scatter (generated kernel, one thread per output element)",
    [](const instruction& ins) {
        return ins.get_operator().get_if<ops::tensor_scatter>() && ins.get_shape().standard();
    },
    lower_tensor_scatter,
}};

}  // namespace
}  // namespace kiln::gpu
