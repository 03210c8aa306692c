// dft: one thread per output bin (real and imaginary part), summing the signal times its
// twiddles directly in double as ref does (ops/dft.cpp; no FFT: correct, not fast). The inverse
// one-sided transform rebuilds the mirrored bins of a Hermitian spectrum from their conjugates.
#include <numbers>

#include "core/error.hpp"
#include "ops/dft.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

void lower_dft(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::dft>();
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& y = ins.get_shape();
    const std::size_t rank = x.ndim(), a = op.signal_axis(rank), len = x.lens()[a];
    const std::size_t n = op.size(len), used = op.used(len), parts = x.lens().back(), out_parts = y.lens().back();
    // The output's points (every dim but the last) and where each one's line starts in x.
    std::vector<std::size_t> points(y.lens().begin(), y.lens().end() - 1), strides(x.strides().begin(), x.strides().end() - 1);
    strides[a] = 0;
    std::size_t inner = 1, count = 1;
    for (std::size_t d = a + 1; d < points.size(); ++d) inner *= points[d];
    for (auto p : points) count *= p;
    const std::string sa = cat(x.strides()[a], "ll"), imag = cat(x.strides().back(), "ll");
    auto value = [&](const std::string& j) {   // input value j of the line, as re and im
        return cat("const double xr = (double)kiln::load(x[base + (kiln::i64)(", j, ") * ", sa, "]);\n",
                   "                const double xi = ", parts == 2 ? cat("(double)kiln::load(x[base + (kiln::i64)(", j, ") * ", sa, " + ", imag, "])") : "0.0", ";\n");
    };
    // e^(sign 2 pi i j k / n), j k reduced mod n as ref does.
    const std::string twiddle = cat("const double angle = ", op.inverse ? "1.0" : "-1.0", " * 2 * ", double_literal(std::numbers::pi),
                                    " * (double)((j * k) % ", n, "ull) / ", n, ".0;\n",
                                    "                const double c = cos(angle), s = sin(angle);\n");
    std::string sum;
    if (!op.inverse) {
        sum = cat("        const kiln::u64 k = bin;\n        for (kiln::u64 j = 0; j < ", used, "ull; ++j) {\n                ", value("j"), "                ", twiddle,
                  "                re += xr * c - xi * s; im += xr * s + xi * c;\n            }\n");
    } else {
        // Bin j of the full spectrum: given, or the conjugate of bin n - j (one-sided), or 0.
        // Here k is the spectrum's bin and j the output's (ref's names).
        sum = cat("        const kiln::u64 j = bin;\n",
                  "        for (kiln::u64 k = 0; k < ", n, "ull; ++k) {\n",
                  "            double sr = 0, si = 0;\n",
                  "            if (k < ", used, "ull) {\n                ", value("k"), "                sr = xr; si = xi;\n            }",
                  op.onesided ? cat(" else if (", n, "ull - k < ", used, "ull) {\n                ", value(cat(n, "ull - k")),
                                    "                sr = xr; si = -xi;\n            }")
                              : "",
                  "\n            ", twiddle,
                  "            re += sr * c - si * s; im += sr * s + si * c;\n        }\n",
                  "        re /= ", n, ".0; im /= ", n, ".0;\n");
    }
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n",
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_dft(", device_type(y.type()), "* __restrict__ y, const ",
                           device_type(x.type()), "* __restrict__ x) {\n",
                           "    constexpr auto L = kiln::layout<", points.size(), ">{{");
    for (std::size_t d = 0; d < points.size(); ++d) code += cat(d ? ", " : "", points[d], "ull");
    code += "}, {";
    for (std::size_t d = 0; d < points.size(); ++d) code += cat(d ? ", " : "", strides[d], "ull");
    code += cat("}};\n",
                "    for (kiln::index_t i = kiln::global_thread(); i < ", count, "ull; i += kiln::grid_threads()) {\n",
                "        const kiln::u64 bin = i / ", inner, "ull % ", y.lens()[a], "ull;\n",
                "        const kiln::i64 base = (kiln::i64)L.offset(i);\n",
                "        double re = 0, im = 0;\n", sum,
                "        kiln::store(y[i * ", out_parts, "ull], re);\n",
                out_parts == 2 ? "        kiln::store(y[i * 2ull + 1], im);\n" : "", "    }\n}\n");
    ctx.add_kernel(ins, {"kiln_dft", code, ctx.where(ins)}, elementwise_launch(count),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0])});
}

const gpu_lowering_registrar dft_lowering{{
    "dft (generated kernel, one thread per output bin)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::dft>() && ins.get_shape().standard(); },
    lower_dft,
}};

}  // namespace
}  // namespace kiln::gpu
