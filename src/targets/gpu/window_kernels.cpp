// Generated kernels for pooling (one output element per thread, or per warp for windows of 32
// taps or more, over baked geometry) and the attention the flash kernel does not take (flash_attention.hpp: float32,
// other head sizes): one block per query row, scores in shared memory, softmax, then the
// weighted sum of values; fp32 accumulation.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/attention.hpp"
#include "ops/pooling.hpp"
#include "ops/window.hpp"
#include "targets/gpu/body_kernel.hpp"
#include "targets/gpu/elementwise.hpp"
#include "targets/gpu/flash_attention.hpp"
#include "targets/gpu/gemm_attention.hpp"

namespace kiln::gpu {
namespace {

std::string list(const std::vector<std::size_t>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]) + "ull";
    return s;
}

void lower_pooling(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::pooling>();
    const shape& x = ctx.layout(*ins.inputs().at(0));
    const shape& y = ctx.layout(ins);
    if (!y.packed()) fail("gpu: pooling into an output with gaps or overlaps: ", ctx.where(ins));
    // Threads walk the output in its memory order (channels-last too), so writes are contiguous.
    std::vector<std::size_t> order(y.ndim());
    for (std::size_t d = 0; d < order.size(); ++d) order[d] = d;
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return y.strides()[a] > y.strides()[b]; });
    std::size_t dims = x.lens().size() - 2;
    ops::window win = op.global ? ops::window::make(dims, {}, {}, {})
                                : ops::window::make(dims, op.padding, op.stride, op.dilations, "stride", "dilations");
    std::vector<std::size_t> kernel = op.global ? std::vector<std::size_t>(x.lens().begin() + 2, x.lens().end())
                                                : ops::spatial_attr("lengths", op.lengths, dims, 1, 1);
    std::size_t taps = 1;
    for (auto k : kernel) taps *= k;
    // Large windows (global pooling: a squeeze-excitation's 28x28 at batch 1) take one warp per
    // output, its lanes striding over the taps, so that few outputs still fill the GPU; a thread
    // walking 784 taps alone took 97 us of mobilenet_v3_large's 0.5 ms.
    const bool warp = taps >= 32;
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n",
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_pool(", device_type(y.type()),
                           "* __restrict__ y, const ", device_type(x.type()), "* __restrict__ x) {\n",
                           warp ? cat("    const unsigned lane = threadIdx.x & 31u;\n",
                                      "    for (kiln::index_t i = kiln::global_thread() / 32; i < ", y.elements(),
                                      "ull; i += kiln::grid_threads() / 32) {\n")
                                : cat("    for (kiln::index_t i = kiln::global_thread(); i < ", y.elements(), "ull; i += kiln::grid_threads()) {\n"),
                           "        kiln::index_t r = i; kiln::i64 o[", x.lens().size(), "];\n");
    for (std::size_t k = order.size(); k-- > 0;)
        code += cat("        o[", order[k], "] = (kiln::i64)(r % ", y.lens()[order[k]], "ull); r /= ", y.lens()[order[k]], "ull;\n");
    code += cat("        const kiln::i64 base = o[0] * ", x.strides()[0], "ll + o[1] * ", x.strides()[1], "ll;\n",
                "        float mx = kiln::neg_inf_f(), sum = 0, lp = 0; kiln::i64 real = 0, padded = 0;\n",
                "        for (kiln::index_t t = ", warp ? "lane" : "0", "; t < ", taps, "ull; t += ", warp ? 32 : 1, ") {\n",
                "            kiln::index_t tr = t; bool in = true, in_padded = true; kiln::i64 off = base;\n");
    for (std::size_t d = dims; d-- > 0;) {
        code += cat("            { kiln::i64 k = (kiln::i64)(tr % ", kernel[d], "ull); tr /= ", kernel[d], "ull;\n",
                    "              kiln::i64 p = o[", d + 2, "] * ", win.stride[d], "ll + k * ", win.dilation[d], "ll - ",
                    win.pad_begin[d], "ll;\n",
                    "              in = in && p >= 0 && p < ", x.lens()[d + 2], "ll; in_padded = in_padded && p < ",
                    x.lens()[d + 2] + win.pad_end[d], "ll; off += p * ", x.strides()[d + 2], "ll; }\n");
    }
    code += cat("            if (!in) { padded += in_padded; continue; }\n",
                "            const float v = kiln::load(x[off]); ++real;\n",
                "            mx = kiln::max_nan(mx, v); sum += v; lp += pow(fabsf(v), ", op.lp_order, ".0f);\n        }\n");
    std::string result = op.mode == "max"      ? "mx"
                         : op.mode == "lpnorm" ? cat("pow(lp, 1.0f / ", op.lp_order, ".0f)")
                                               : cat("sum / (float)(real", op.count_include_pad ? " + padded" : "", ")");
    if (warp)   // every lane gets the warp's combination; lane 0 stores it
        code += "        for (int s = 16; s > 0; s >>= 1) mx = kiln::max_nan(mx, __shfl_xor_sync(0xffffffffu, mx, s));\n"
                "        sum = kiln::warp_sum(sum); lp = kiln::warp_sum(lp); real = kiln::warp_sum(real); padded = kiln::warp_sum(padded);\n"
                "        if (lane != 0) continue;\n";
    // In memory order the i-th element is at offset i.
    code += cat("        kiln::store(y[i], ", result, ");\n    }\n}\n");
    code.insert(code.find("\n") + 1, "#include \"kiln_lane.cuh\"\n");
    ctx.add_kernel(ins, {"kiln_pool", code, ctx.where(ins)}, elementwise_launch(y.elements() * (warp ? 32 : 1)),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0])});
}

std::string layout4(const shape& s) {
    return cat("kiln::layout<4>{{", list(s.lens()), "}, {", list(s.strides()), "}}");
}

void lower_attention(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::attention>();
    const shape &q = ins.inputs()[0]->get_shape(), &k = ins.inputs()[1]->get_shape(), &v = ins.inputs()[2]->get_shape();
    const shape& y = ins.get_shape();
    std::size_t B = q.lens()[0], H = q.lens()[1], S = q.lens()[2], D = q.lens()[3];
    std::size_t Hkv = k.lens()[1], Skv = k.lens()[2], Dv = v.lens()[3];
    // float64 computes in double, as ref; the rest in float.
    const bool f64 = q.type() == dtype::float64;
    const std::size_t acc = f64 ? 8 : 4;
    if ((Skv + D) * acc > 40000) fail("gpu: attention with ", Skv, " keys does not fit this kernel's shared memory: ", ctx.where(ins));
    double scale = op.scale != 0 ? op.scale : 1.0 / std::sqrt(static_cast<double>(D));
    std::string params = cat(device_type(y.type()), "* __restrict__ y, const ", device_type(q.type()), "* __restrict__ q, const ",
                             device_type(k.type()), "* __restrict__ k, const ", device_type(v.type()), "* __restrict__ v");
    std::vector<void*> ptrs{ctx.address(ins)};
    for (std::size_t i = 0; i < 3; ++i) ptrs.push_back(ctx.address(*ins.inputs()[i]));
    std::string bias = "(A)0";
    std::string mask_layout;
    if (ins.inputs().size() > 3) {
        const shape& m = ins.inputs()[3]->get_shape();
        params += cat(", const ", device_type(m.type()), "* __restrict__ mask");
        ptrs.push_back(ctx.address(*ins.inputs()[3]));
        std::vector<std::size_t> st(4, 0);
        std::size_t off = 4 - m.lens().size();
        for (std::size_t d = 0; d < m.lens().size(); ++d) st[off + d] = m.lens()[d] == 1 ? 0 : m.strides()[d];
        mask_layout = cat("    constexpr auto Lm = ", layout4(shape(m.type(), {B, H, S, Skv}, st)), ";\n");
        bias = m.type() == dtype::bool_ ? "(mask[Lm.offset(row * KEYS + j)] ? (A)0 : NEG)"
                                        : "(A)kiln::load(mask[Lm.offset(row * KEYS + j)])";
    }
    std::string causal = op.is_causal ? cat("if ((kiln::i64)j > (kiln::i64)i + ", op.causal_offset, "ll) s = NEG;\n") : "";
    std::string softcap = op.softcap > 0 ? cat("sc = (A)", flit(op.softcap), " * ", f64 ? "tanh" : "tanhf", "(sc / (A)", flit(op.softcap), ");\n") : "";
    std::string code = cat(
        "#include \"kiln_lane.cuh\"\n",
        "extern \"C\" __global__ void __launch_bounds__(256) kiln_attention(", params, ") {\n",
        "    typedef ", f64 ? "double" : "float", " A;\n    const A NEG = (A)kiln::neg_inf_f();\n",
        "    constexpr kiln::index_t KEYS = ", Skv, "ull, D = ", D, "ull, DV = ", Dv, "ull, S = ", S, "ull, H = ", H,
        "ull, GROUP = ", H / Hkv, "ull;\n",
        "    constexpr auto Lq = ", layout4(q), ";\n    constexpr auto Lk = ", layout4(k), ";\n",
        "    constexpr auto Lv = ", layout4(v), ";\n    constexpr auto Ly = ", layout4(y), ";\n", mask_layout,
        "    __shared__ A p[KEYS > 0 ? KEYS : 1]; __shared__ A qrow[D > 0 ? D : 1]; __shared__ A smem[32];\n",
        "    for (kiln::index_t row = blockIdx.x; row < ", B * H * S, "ull; row += gridDim.x) {\n",
        "        const kiln::index_t i = row % S, h = (row / S) % H, b = row / (S * H), kvh = h / GROUP;\n",
        "        __syncthreads();\n",
        "        for (kiln::index_t c = threadIdx.x; c < D; c += blockDim.x) qrow[c] = kiln::load(q[Lq.offset(row * D + c)]);\n",
        "        __syncthreads();\n",
        "        A top = NEG;\n",
        "        for (kiln::index_t j = threadIdx.x; j < KEYS; j += blockDim.x) {\n",
        "            const kiln::index_t krow = ((b * ", Hkv, "ull + kvh) * KEYS + j) * D;\n",
        "            A dot = 0; for (kiln::index_t c = 0; c < D; ++c) dot += qrow[c] * (A)kiln::load(k[Lk.offset(krow + c)]);\n",
        "            A sc = (A)", f64 ? dlit(scale) : flit(scale), " * dot;\n            ", softcap,
        "            A s = sc + ", bias, ";\n            ", causal,
        "            p[j] = s; top = kiln::max_nan(top, s);\n        }\n",
        "        top = kiln::block_reduce(top, [](A a, A b) { return kiln::max_nan(a, b); }, NEG, smem);\n",
        "        A sum = 0;\n",
        "        for (kiln::index_t j = threadIdx.x; j < KEYS; j += blockDim.x) { const A e = top == NEG ? (A)0 : ", f64 ? "exp" : "expf", "(p[j] - top); p[j] = e; sum += e; }\n",
        "        sum = kiln::block_reduce(sum, [](A a, A b) { return a + b; }, (A)0, smem);\n",
        "        __syncthreads();\n",
        "        for (kiln::index_t c = threadIdx.x; c < DV; c += blockDim.x) {\n",
        "            A acc = 0;\n",
        "            for (kiln::index_t j = 0; j < KEYS; ++j) acc += p[j] * (A)kiln::load(v[Lv.offset(((b * ", Hkv, "ull + kvh) * KEYS + j) * DV + c)]);\n",
        "            kiln::store(y[Ly.offset(row * DV + c)], sum > 0 ? acc / sum : (A)0);\n        }\n    }\n}\n");
    ctx.add_kernel(ins, {"kiln_attention", code, ctx.where(ins)},
                   {static_cast<unsigned>(std::min<std::size_t>(B * H * S, 1u << 20)), 128}, std::move(ptrs));
}

const gpu_lowering_registrar pooling_lowering{{
    "pooling (generated kernel)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::pooling>() != nullptr; },
    [](lowering_context& ctx, const instruction& ins) { lower_pooling(ctx, ins); },
    false,
    false,
    true,
    true,
}};
const gpu_lowering_registrar attention_lowering{{
    "attention (generated kernel, one block per query row)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::attention>() != nullptr && !flash_attention_takes(ins) &&
                                !gemm_attention_takes(ins); },
    [](lowering_context& ctx, const instruction& ins) { lower_attention(ctx, ins); }}};

}  // namespace
}  // namespace kiln::gpu
