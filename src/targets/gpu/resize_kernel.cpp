// Generated Resize (every mode: nearest, linear, cubic, with ref's coordinate transformations,
// exclude_outside and tf_crop_and_resize's extrapolation): ref's own per-dim sampling plan
// (ops::resize::plan: for each output index of each dim, the input indices and weights it
// blends) is made at compile time and uploaded as tables; one thread per output element sums
// the product of one tap per dim times the input element, in double and in ref's order, so the
// result is ref's to the last bit.
#include "core/error.hpp"
#include "ops/resize.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

void lower_resize(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::resize>();
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& y = ins.get_shape();
    if (!y.standard()) fail("gpu: resize into a non-standard output: ", ctx.where(ins));
    std::size_t rank = x.ndim();
    // Per dim: `taps` slots per output index; index -1 in slot 0 marks an extrapolated index.
    std::vector<std::int32_t> index;
    std::vector<double> weight;
    std::vector<std::size_t> taps(rank), start(rank);
    for (std::size_t d = 0; d < rank; ++d) {
        auto p = op.plan(d, x.lens()[d], y.lens()[d]);
        for (const auto& t : p.taps) taps[d] = std::max(taps[d], t.size());
        taps[d] = std::max<std::size_t>(taps[d], 1);
        start[d] = index.size();
        for (std::size_t o = 0; o < y.lens()[d]; ++o) {
            for (std::size_t k = 0; k < taps[d]; ++k) {
                bool real = k < p.taps[o].size();
                index.push_back(k == 0 && p.extrapolated[o] ? -1 : real ? static_cast<std::int32_t>(p.taps[o][k].index) : 0);
                weight.push_back(real ? p.taps[o][k].weight : 0.0);
            }
        }
    }
    std::string ty = device_type(y.type());
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n",
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_resize(", ty, "* __restrict__ y, const ",
                           device_type(x.type()), "* __restrict__ x, const kiln::i32* __restrict__ ti, const double* __restrict__ tw) {\n",
                           "    for (kiln::index_t i = kiln::global_thread(); i < ", y.elements(), "ull; i += kiln::grid_threads()) {\n",
                           "        kiln::index_t r = i; kiln::i64 c[", std::max<std::size_t>(rank, 1), "];\n");
    for (std::size_t d = rank; d-- > 0;)
        code += cat("        c[", d, "] = (kiln::i64)(r % ", y.lens()[d], "ull); r /= ", y.lens()[d], "ull;\n");
    std::string extrapolated = "false";
    for (std::size_t d = 0; d < rank; ++d) {
        code += cat("        const kiln::i32* I", d, " = ti + ", start[d], "ll + c[", d, "] * ", taps[d], "ll;\n",
                    "        const double* W", d, " = tw + ", start[d], "ll + c[", d, "] * ", taps[d], "ll;\n");
        extrapolated += cat(" || I", d, "[0] < 0");
    }
    code += cat("        if (", extrapolated, ") { y[i] = kiln::storer<", ty, ">::from((double)",
                double_literal(op.extrapolation_value), "); continue; }\n        double sum = 0;\n");
    // One loop per dim, the first outermost, as ref enumerates tap combinations.
    std::string close, weight_expr, offset = "0";
    for (std::size_t d = 0; d < rank; ++d) {
        code += cat("        for (int t", d, " = 0; t", d, " < ", taps[d], "; ++t", d, ") {\n");
        close += "        }\n";
        weight_expr += cat(d ? " * " : "", "W", d, "[t", d, "]");
        offset += cat(" + (kiln::i64)I", d, "[t", d, "] * ", x.strides()[d], "ll");
    }
    code += cat("        sum += ", rank ? "(1.0 * " + weight_expr + ")" : "1.0", " * (double)kiln::load(x[", offset, "]);\n", close);
    // Integers round half to even, as ref's nearbyint.
    code += cat("        y[i] = kiln::storer<", ty, ">::from(", is_float(y.type()) ? "sum" : "rint(sum)", ");\n    }\n}\n");
    argument ti(shape(dtype::int32, std::vector<std::size_t>{index.size()}));
    std::copy(index.begin(), index.end(), ti.as<std::int32_t>());
    argument tw(shape(dtype::float64, std::vector<std::size_t>{weight.size()}));
    std::copy(weight.begin(), weight.end(), tw.as<double>());
    std::string where = ctx.where(ins);
    ctx.add_kernel(ins, {"kiln_resize", code, where}, elementwise_launch(y.elements()),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0]), ctx.upload(ti, where), ctx.upload(tw, where)});
}

const gpu_lowering_registrar resize_lowering{{
    "resize (generated kernel over ref's sampling tables)",
    [](const instruction& ins) {
        return ins.get_operator().get_if<ops::resize>() && ins.inputs().size() == 1 && !ins.get_shape().dynamic() &&
               !ins.inputs()[0]->get_shape().dynamic();
    },
    lower_resize}};

}  // namespace
}  // namespace kiln::gpu
