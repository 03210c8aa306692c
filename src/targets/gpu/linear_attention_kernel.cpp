// linear_attention (ops/linear_attention.hpp) as one generated kernel writing both results of its
// tuple, the output and the final state. Every column j of a KV head's state S (dk x dv) evolves
// on its own (decay scales rows, the delta rule reads S^T k one column at a time, the update adds
// k v_j), so one thread per (batch, KV head, column) keeps its column in registers and walks the
// tokens in order, in double as ref does (correct, not fast: the tokens run one after another).
#include <cmath>

#include "core/error.hpp"
#include "ops/linear_attention.hpp"
#include "targets/gpu/body_kernel.hpp"
#include "targets/gpu/elementwise.hpp"
#include "targets/gpu/lane_util.hpp"
#include "targets/gpu/lowering.hpp"

namespace kiln::gpu {
namespace {

// "base + a * s0 + b * s1 + c * s2" for a rank-3 input's element (a, b, c).
std::string at3(const shape& s, const char* a, const char* b, const std::string& c) {
    const auto& st = s.strides();
    return cat("(", a, ") * ", st[0], "ll + (", b, ") * ", st[1], "ll + (", c, ") * ", st[2], "ll");
}

void lower_linear_attention(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::linear_attention>();
    const auto& in = ins.inputs();
    const shape &q = in[0]->get_shape(), &k = in[1]->get_shape(), &v = in[2]->get_shape(), &s = in[3]->get_shape();
    const shape& o = ins.get_shape().sub_shapes()[0];
    const shape& so = ins.get_shape().sub_shapes()[1];
    const std::size_t b = q.lens()[0], t = q.lens()[1], hq = std::size_t(op.q_num_heads), hkv = std::size_t(op.kv_num_heads);
    const std::size_t dk = q.lens()[2] / hq, dv = v.lens()[2] / hkv, group = hq / hkv;
    if (o.elements() + so.elements() == 0) return;
    std::size_t next = 4;
    const instruction* g = op.gated() ? &*in[next++] : nullptr;
    const instruction* beta = op.delta() ? &*in[next] : nullptr;
    const double scale = op.scale == 0 ? 1 / std::sqrt(double(dk)) : double(op.scale);
    const auto& ss = s.strides();
    const auto& sos = so.strides();
    std::string params = cat(device_type(o.type()), "* __restrict__ out, ", device_type(so.type()), "* __restrict__ state_out, const ",
                             device_type(q.type()), "* __restrict__ q, const ", device_type(k.type()), "* __restrict__ k, const ",
                             device_type(v.type()), "* __restrict__ v, const ", device_type(s.type()), "* __restrict__ state");
    std::vector<void*> pointers = {ctx.element_address(ins, 0), ctx.element_address(ins, 1), ctx.address(*in[0]),
                                   ctx.address(*in[1]), ctx.address(*in[2]), ctx.address(*in[3])};
    std::string gated, delta;
    if (g) {
        const shape& gs = g->get_shape();
        params += cat(", const ", device_type(gs.type()), "* __restrict__ g");
        pointers.push_back(ctx.address(*g));
        std::string col = gs.lens()[2] == hkv ? "h" : "h * DK + i";
        gated = cat("        for (kiln::i64 i = 0; i < DK; ++i) st[i] *= exp((double)kiln::load(g[", at3(gs, "bi", "ti", col), "]));\n");
    }
    if (beta) {
        const shape& bs = beta->get_shape();
        params += cat(", const ", device_type(bs.type()), "* __restrict__ beta");
        pointers.push_back(ctx.address(*beta));
        delta = cat("        {\n",
                    "            double retrieved = 0;\n",
                    "            for (kiln::i64 i = 0; i < DK; ++i) retrieved += st[i] * (double)kiln::load(k[", at3(k, "bi", "ti", "h * DK + i"), "]);\n",
                    "            vt = (double)kiln::load(beta[", at3(bs, "bi", "ti", bs.lens()[2] == 1 ? "0" : "h"), "]) * (vt - retrieved);\n",
                    "        }\n");
    }
    std::string code = cat(
        "#include \"kiln_elementwise.cuh\"\n",
        "extern \"C\" __global__ void __launch_bounds__(256) kiln_linear_attention(", params, ") {\n",
        "    constexpr kiln::i64 T = ", t, ", HKV = ", hkv, ", DK = ", dk, ", DV = ", dv, ", GROUP = ", group, ";\n",
        "    for (kiln::index_t n = kiln::global_thread(); n < ", b * hkv * dv, "ull; n += kiln::grid_threads()) {\n",
        "    const kiln::i64 j = (kiln::i64)(n % DV), h = (kiln::i64)((n / DV) % HKV), bi = (kiln::i64)(n / (DV * HKV));\n",
        "    double st[DK];\n",
        "    for (kiln::i64 i = 0; i < DK; ++i)\n",
        "        st[i] = (double)kiln::load(state[bi * ", ss[0], "ll + h * ", ss[1], "ll + i * ", ss[2], "ll + j * ", ss[3], "ll]);\n",
        "    for (kiln::i64 ti = 0; ti < T; ++ti) {\n",
        gated,
        "        double vt = (double)kiln::load(v[", at3(v, "bi", "ti", "h * DV + j"), "]);\n",
        delta,
        "        for (kiln::i64 i = 0; i < DK; ++i) st[i] += (double)kiln::load(k[", at3(k, "bi", "ti", "h * DK + i"), "]) * vt;\n",
        "        for (kiln::i64 hg = h * GROUP; hg < (h + 1) * GROUP; ++hg) {\n",
        "            double acc = 0;\n",
        "            for (kiln::i64 i = 0; i < DK; ++i) acc += (double)kiln::load(q[", at3(q, "bi", "ti", "hg * DK + i"), "]) * st[i];\n",
        "            kiln::store(out[", at3(o, "bi", "ti", "hg * DV + j"), "], ", double_literal(scale), " * acc);\n",
        "        }\n",
        "    }\n",
        "    for (kiln::i64 i = 0; i < DK; ++i)\n",
        "        kiln::store(state_out[bi * ", sos[0], "ll + h * ", sos[1], "ll + i * ", sos[2], "ll + j * ", sos[3], "ll], st[i]);\n",
        "    }\n}\n");
    ctx.add_kernel(ins, {"kiln_linear_attention", code, ctx.where(ins)}, elementwise_launch(b * hkv * dv), std::move(pointers));
}

const gpu_lowering_registrar linear_attention_lowering{{
    "linear_attention (generated kernel, one thread per state column walking the tokens)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::linear_attention>() != nullptr; },
    lower_linear_attention}};

}  // namespace
}  // namespace kiln::gpu
