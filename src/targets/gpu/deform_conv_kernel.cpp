// deform_conv: one thread per output element [n, oc, position], summing bias + W * (mask *
// X interpolated at the tap's displaced position) over the group's input channels and taps in
// ref's order, in double (ops/deform_conv.cpp; correct, not fast: no im2col buffer, no GEMM).
#include "core/error.hpp"
#include "ops/deform_conv.hpp"
#include "targets/gpu/body_kernel.hpp"
#include "targets/gpu/lane_util.hpp"

namespace kiln::gpu {
namespace {

template <class T>
std::string array(const char* name, const std::vector<T>& v) {
    std::string s = cat("    constexpr kiln::i64 ", name, "[] = {");
    for (std::size_t i = 0; i < v.size(); ++i) s += cat(i ? ", " : "", static_cast<std::int64_t>(v[i]), "ll");
    return s + "};\n";
}

void lower_deform_conv(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::deform_conv>();
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& w = ins.inputs()[1]->get_shape();
    const shape& off = ins.inputs()[2]->get_shape();
    const shape& y = ins.get_shape();
    const bool bias = ins.inputs().size() > 3, masked = ins.inputs().size() > 4;
    auto [k, spatial_out] = op.geometry(x, w);
    const std::size_t r = k.size(), c = x.lens()[1], m = y.lens()[1], groups = std::size_t(op.offset_group);
    std::size_t taps = 1, outs = 1;
    for (auto v : k) taps *= v;
    for (auto v : spatial_out) outs *= v;
    const std::size_t cpg = c / std::size_t(op.group), mpg = m / std::size_t(op.group);
    std::vector<std::size_t> in_lens(x.lens().begin() + 2, x.lens().end()), in_strides(x.strides().begin() + 2, x.strides().end());
    std::string params = cat(device_type(y.type()), "* __restrict__ y, const ", device_type(x.type()), "* __restrict__ x, const ",
                             device_type(w.type()), "* __restrict__ w, const ", device_type(off.type()), "* __restrict__ offset");
    if (bias) params += cat(", const ", device_type(x.type()), "* __restrict__ b");
    if (masked) params += cat(", const ", device_type(x.type()), "* __restrict__ mask");
    std::string code = cat(
        "#include \"kiln_elementwise.cuh\"\n",
        "extern \"C\" __global__ void __launch_bounds__(256) kiln_deform_conv(", params, ") {\n",
        "    constexpr int R = ", r, ";\n", array("IL", in_lens), array("IS", in_strides), array("K", k), array("OL", spatial_out),
        array("DIL", ops::deform_conv::list(op.dilations, "dilations", r, 1)),
        array("ST", ops::deform_conv::list(op.strides, "strides", r, 1)),
        array("PD", ops::deform_conv::list(op.pads, "pads", 2 * r, 0)),
        "    constexpr auto W = ", layout_of_all(w), ";\n",
        "    constexpr auto O = ", layout_of_all(off), ";\n",
        masked ? cat("    constexpr auto Mk = ", layout_of_all(ins.inputs()[4]->get_shape()), ";\n") : "",
        "    for (kiln::index_t i = kiln::global_thread(); i < ", y.elements(), "ull; i += kiln::grid_threads()) {\n",
        "        const kiln::index_t o = i % ", outs, "ull, oc = i / ", outs, "ull % ", m, "ull, n = i / ", outs * m, "ull;\n",
        "        kiln::i64 pos[R], tap[R];\n",
        "        for (kiln::index_t d = R, rest = o; d-- > 0;) { pos[d] = (kiln::i64)(rest % OL[d]); rest /= OL[d]; }\n",
        "        double acc = ", bias ? cat("(double)kiln::load(b[oc * ", ins.inputs()[3]->get_shape().strides()[0], "ull])") : "0.0", ";\n",
        "        const kiln::index_t first = oc / ", mpg, "ull * ", cpg, "ull;\n",
        "        for (kiln::index_t icg = 0; icg < ", cpg, "ull; ++icg) {\n",
        "            const kiln::index_t ic = first + icg, og = ic / ", c / groups, "ull;\n",
        "            const kiln::i64 plane = (kiln::i64)n * ", x.strides()[0], "ll + (kiln::i64)ic * ", x.strides()[1], "ll;\n",
        "            for (kiln::index_t t = 0; t < ", taps, "ull; ++t) {\n",
        "                for (kiln::index_t d = R, rest = t; d-- > 0;) { tap[d] = (kiln::i64)(rest % K[d]); rest /= K[d]; }\n",
        "                const kiln::index_t ch = ((n * ", groups, "ull + og) * ", taps, "ull + t) * R;\n",
        "                double p[R];\n",
        "                for (int d = 0; d < R; ++d)\n",
        "                    p[d] = double(pos[d] * ST[d] - PD[d] + tap[d] * DIL[d]) + (double)kiln::load(offset[O.offset((ch + d) * ",
        outs, "ull + o)]);\n",
        "                const double scale = ", masked ? cat("(double)kiln::load(mask[Mk.offset(((n * ", groups, "ull + og) * ", taps, "ull + t) * ", outs, "ull + o)])") : "1.0", ";\n",
        // interpolate(): n-linear over the 2^R corners, zero outside; a zero weight ends a corner.
        "                double v = 0;\n",
        "                for (int corner = 0; corner < (1 << R); ++corner) {\n",
        "                    double wt = 1;\n",
        "                    kiln::i64 at = plane;\n",
        "                    for (int d = 0; d < R && wt != 0; ++d) {\n",
        "                        const double lo = floor(p[d]);\n",
        "                        const bool up = (corner >> d) & 1;\n",
        "                        const double e = lo + (up ? 1 : 0);\n",
        "                        wt *= up ? p[d] - lo : 1 - (p[d] - lo);\n",
        "                        if (e < 0 || e >= double(IL[d])) wt = 0;\n",
        "                        else at += (kiln::i64)e * IS[d];\n",
        "                    }\n",
        "                    if (wt != 0) v += wt * (double)kiln::load(x[at]);\n",
        "                }\n",
        "                acc += (double)kiln::load(w[W.offset((oc * ", cpg, "ull + icg) * ", taps, "ull + t)]) * (scale * v);\n",
        "            }\n        }\n",
        "        kiln::store(y[i], acc);\n    }\n}\n");
    std::vector<void*> pointers{ctx.address(ins)};
    for (auto i : ins.inputs()) pointers.push_back(ctx.address(*i));
    ctx.add_kernel(ins, {"kiln_deform_conv", code, ctx.where(ins)}, elementwise_launch(y.elements()), std::move(pointers));
}

const gpu_lowering_registrar deform_conv_lowering{{
    "deform_conv (generated kernel, one thread per output element)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::deform_conv>() && ins.get_shape().standard(); },
    lower_deform_conv,
}};

}  // namespace
}  // namespace kiln::gpu
