// nll_loss: "none" is one thread per element; "sum" and "mean" are one thread walking every
// element in ref's order, summing in double as ref does (correct, not fast: losses are small).
// A target outside [0, C) that is not ignore_index is a run-time error naming the element.
#include "core/error.hpp"
#include "ops/loss.hpp"
#include "targets/gpu/body_kernel.hpp"
#include "targets/gpu/lane_util.hpp"

namespace kiln::gpu {
namespace {

void lower_nll_loss(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::nll_loss>();
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& t = ins.inputs()[1]->get_shape();
    const shape& y = ins.get_shape();
    const bool weighted = ins.inputs().size() == 3, none = op.reduction == "none";
    const std::size_t classes = x.lens()[1], count = t.elements();
    std::vector<std::size_t> not_class(x.ndim());
    for (std::size_t d = 0; d < x.ndim(); ++d) not_class[d] = d;
    not_class.erase(not_class.begin() + 1);
    std::string params = cat(device_type(y.type()), "* __restrict__ y, const ", device_type(x.type()), "* __restrict__ x, const ",
                             device_type(t.type()), "* __restrict__ target");
    if (weighted) params += cat(", const ", device_type(x.type()), "* __restrict__ w");
    // The loss of element e (its target k, weight wk), or a skip when ignored; bad targets raise.
    std::string element = cat(
        "        const kiln::i64 k = (kiln::i64)target[T.offset(e)];\n",
        op.has_ignore_index ? cat("        if (k == ", op.ignore_index, "ll) { ", none ? "kiln::store(y[e], 0.0); " : "", "continue; }\n") : "",
        "        if (k < 0 || k >= ", classes, "ll) { kiln::raise(err, kiln::error_index_out_of_range, k, e); ",
        none ? "kiln::store(y[e], 0.0); " : "", "continue; }\n",
        "        const double wk = ", weighted ? cat("(double)kiln::load(w[k * ", ins.inputs()[2]->get_shape().strides()[0], "ll])") : "1.0", ";\n",
        "        const double l = -(double)kiln::load(x[X.offset(e) + k * ", x.strides()[1], "ll]) * wk;\n");
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n#include \"kiln_error.cuh\"\n",
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_nll_loss(", params, ", kiln::error_slot* err) {\n",
                           "    constexpr auto X = ", layout_of(x, not_class), ";\n",
                           "    constexpr auto T = ", layout_of_all(t), ";\n");
    if (none) {
        code += cat("    for (kiln::index_t e = kiln::global_thread(); e < ", count, "ull; e += kiln::grid_threads()) {\n", element,
                    "        kiln::store(y[e], l);\n    }\n}\n");
    } else {
        code += cat("    if (kiln::global_thread() != 0) return;\n",
                    "    double sum = 0, weight_sum = 0;\n",
                    "    for (kiln::index_t e = 0; e < ", count, "ull; ++e) {\n", element,
                    "        sum += l;\n        weight_sum += wk;\n    }\n",
                    "    kiln::store(y[0], ", op.reduction == "sum" ? "sum" : "sum / weight_sum", ");\n}\n");
    }
    void* err = ctx.error_slot(ins, [classes, ignore = op.has_ignore_index](const error_slot& s) {
        return cat("target ", s.value, " at element ", s.position, " is outside the ", classes, " classes [0, ", classes, ")",
                   ignore ? " and is not ignore_index" : "");
    });
    std::vector<void*> pointers{ctx.address(ins)};
    for (auto i : ins.inputs()) pointers.push_back(ctx.address(*i));
    pointers.push_back(err);
    ctx.add_kernel(ins, {"kiln_nll_loss", code, ctx.where(ins)}, elementwise_launch(none ? count : 1), std::move(pointers));
}

const gpu_lowering_registrar nll_loss_lowering{{
    "nll_loss (generated kernel)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::nll_loss>() && ins.get_shape().standard(); },
    lower_nll_loss,
}};

}  // namespace
}  // namespace kiln::gpu
