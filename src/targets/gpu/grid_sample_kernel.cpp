// grid_sample: one thread per output element [n, c, point]. It reads the point's coordinates,
// makes each spatial dim's taps (device/kiln_grid_sample.cuh, ref's rules in double) and sums the
// products of the taps in ref's order (the first spatial dim fastest; taps outside the input,
// with zeros padding, left out), in double, rounded once to the element type.
#include "core/error.hpp"
#include "ops/grid_sample.hpp"
#include "targets/gpu/lane_util.hpp"
#include "targets/gpu/lowering.hpp"

namespace kiln::gpu {
namespace {

void lower_grid_sample(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::grid_sample>();
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& g = ins.inputs()[1]->get_shape();
    const shape& y = ins.get_shape();
    const std::size_t r = x.ndim() - 2, channels = x.lens()[1];
    const std::size_t points = y.elements() / std::max<std::size_t>(1, x.lens()[0] * channels);
    const int mode = op.mode == "linear" ? 0 : op.mode == "nearest" ? 1 : 2;
    const int padding = op.padding_mode == "zeros" ? 0 : op.padding_mode == "border" ? 1 : 2;
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n#include \"kiln_grid_sample.cuh\"\n",
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_grid_sample(", device_type(y.type()),
                           "* __restrict__ y, const ", device_type(x.type()), "* __restrict__ x, const ",
                           device_type(g.type()), "* __restrict__ grid) {\n",
                           "    typedef kiln::grid_sampler<", mode, ", ", padding, ", ", op.align_corners ? "true" : "false", "> S;\n",
                           "    constexpr auto G = ", layout_of_all(g), ";\n",
                           "    for (kiln::index_t i = kiln::global_thread(); i < ", y.elements(), "ull; i += kiln::grid_threads()) {\n",
                           "        const kiln::index_t p = i % ", points, "ull, c = i / ", points, "ull % ", channels,
                           "ull, n = i / ", points * channels, "ull;\n",
                           "        kiln::grid_taps t[", r, "];\n");
    for (std::size_t d = 0; d < r; ++d)
        code += cat("        t[", d, "] = S::taps((double)kiln::load(grid[G.offset((n * ", points, "ull + p) * ", r, "ull + ",
                    r - 1 - d, "ull)]), ", x.lens()[d + 2], "ll);\n");
    code += cat("        const kiln::i64 base = (kiln::i64)n * ", x.strides()[0], "ll + (kiln::i64)c * ", x.strides()[1], "ll;\n",
                "        double acc = 0;\n");
    // The last spatial dim's taps outermost, as ref lists the products.
    std::string indent = "        ";
    for (std::size_t d = r; d-- > 0;) {
        code += cat(indent, "for (int k", d, " = 0; k", d, " < t[", d, "].count; ++k", d, ") {\n");
        indent += "    ";
        code += cat(indent, "if (t[", d, "].index[k", d, "] < 0) continue;\n");
    }
    std::string weight = "1.0", offset = "base";
    for (std::size_t d = 0; d < r; ++d) {
        weight = cat("(", weight, " * t[", d, "].weight[k", d, "])");
        offset += cat(" + t[", d, "].index[k", d, "] * ", x.strides()[d + 2], "ll");
    }
    code += cat(indent, "acc += ", weight, " * (double)kiln::load(x[", offset, "]);\n");
    for (std::size_t d = 0; d < r; ++d) {
        indent.resize(indent.size() - 4);
        code += cat(indent, "}\n");
    }
    code += cat("        kiln::store(y[i], acc);\n    }\n}\n");
    ctx.add_kernel(ins, {"kiln_grid_sample", code, ctx.where(ins)}, elementwise_launch(y.elements()),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0]), ctx.address(*ins.inputs()[1])});
}

const gpu_lowering_registrar grid_sample_lowering{{
    "grid_sample (generated kernel, one thread per output element)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::grid_sample>() && ins.get_shape().standard(); },
    lower_grid_sample,
}};

}  // namespace
}  // namespace kiln::gpu
