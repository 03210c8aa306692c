// Attention in float32/float64 as two cuBLASLt GEMMs around a softmax kernel: the scores
// q·kᵀ of every head into a buffer, one block per query row scaling, soft-capping, masking and
// normalising them in place, then P·v into the result. The flash kernel (flash_attention.cpp)
// is float16/bfloat16 only; the row kernel it would otherwise fall to (window_kernels.cpp) reads
// k and v a row per thread, uncoalesced, and took 55 of BERT's 83 ms at batch 64 in float32 on the
// H100. The scores cost B*H*S*Skv values of memory, so every attention of a program takes turns on
// one buffer (with the copies of q, k, v and y that are not in standard layout).
#include "targets/gpu/gemm_attention.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/attention.hpp"
#include "targets/gpu/contraction.hpp"
#include "targets/gpu/elementwise.hpp"
#include "targets/gpu/lane_util.hpp"

namespace kiln::gpu {
namespace {

// Beyond this the scores would take more device memory than a row kernel's slowness costs.
constexpr std::size_t max_buffer = std::size_t{2} << 30;

std::size_t round_up(std::size_t n) { return (n + 255) / 256 * 256; }

// A literal of the kernel's compute type.
std::string literal(double v, bool f64) { return f64 ? dlit(v) : flit(v); }

// The bytes of the shared buffer `ins` uses: its scores, then a standard copy of q, k, v and y.
std::size_t buffer_bytes(const instruction& ins) {
    const shape &q = ins.inputs()[0]->get_shape(), &k = ins.inputs()[1]->get_shape();
    std::size_t n = round_up(shape(q.type(), {q.lens()[0], q.lens()[1], q.lens()[2], k.lens()[2]}).bytes());
    for (std::size_t i = 0; i < 3; ++i) n += round_up(ins.inputs()[i]->get_shape().as_standard().bytes());
    return n + round_up(ins.get_shape().as_standard().bytes());
}

std::string reason(const instruction& ins) {
    const shape &q = ins.inputs()[0]->get_shape(), &k = ins.inputs()[1]->get_shape(), &v = ins.inputs()[2]->get_shape();
    if (q.type() != dtype::float32 && q.type() != dtype::float64) return cat(dtype_name(q.type()), " (float_type/double_type only)");
    if (k.type() != q.type() || v.type() != q.type() || ins.get_shape().type() != q.type()) return "mixed element types";
    if (q.dynamic() || k.dynamic() || v.dynamic() || ins.get_shape().dynamic()) return "dynamic shape";
    if (k.lens()[1] != q.lens()[1]) return cat(q.lens()[1], " query heads over ", k.lens()[1], " key heads");
    if (q.elements() == 0 || k.elements() == 0 || v.elements() == 0) return "empty";
    if (buffer_bytes(ins) > max_buffer) return cat("scores of ", buffer_bytes(ins) >> 20, " MiB");
    return {};
}

// `o` itself when standard, else a copy into `slot` (a step of its own).
body_operand standard(lowering_context& ctx, const instruction& ins, const body_operand& o, std::byte* slot) {
    if (o.s.standard()) return o;
    body_operand r{slot, o.s.as_standard()};
    copy_operand(ctx, ins, o, r);
    return r;
}

double scale_of(const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::attention>();
    return op.scale != 0 ? op.scale : 1.0 / std::sqrt(static_cast<double>(ins.inputs()[0]->get_shape().lens()[3]));
}

}  // namespace

// softcap(scale s) + mask + causal limit, then softmax (a row with no key left gives zeros, as
// the op does).
kernel_source attention_softmax_kernel(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::attention>();
    const shape& q = ins.inputs()[0]->get_shape();
    const double scale = scale_of(ins);
    const std::size_t B = q.lens()[0], H = q.lens()[1], S = q.lens()[2], Skv = ins.inputs()[1]->get_shape().lens()[2];
    const bool f64 = q.type() == dtype::float64;
    const std::string t = device_type(q.type()), e = f64 ? "exp" : "expf", th = f64 ? "tanh" : "tanhf";
    std::string params = cat(t, "* __restrict__ p"), mask_layout, bias = "0";
    if (ins.inputs().size() > 3) {
        const shape& m = ins.inputs()[3]->get_shape();
        params += cat(", const ", device_type(m.type()), "* __restrict__ mask");
        std::vector<std::size_t> st(4, 0);
        const std::size_t off = 4 - m.lens().size();
        for (std::size_t d = 0; d < m.lens().size(); ++d) st[off + d] = m.lens()[d] == 1 ? 0 : m.strides()[d];
        const shape full(m.type(), {B, H, S, Skv}, st);
        mask_layout = cat("    constexpr auto Lm = ", layout_of_all(full), ";\n");
        bias = m.type() == dtype::bool_ ? "(mask[Lm.offset(row * KEYS + j)] ? (T)0 : NEG)"
                                        : "(T)kiln::load(mask[Lm.offset(row * KEYS + j)])";
    }
    const std::string softcap = op.softcap > 0 ? cat("s = ", literal(op.softcap, f64), " * ", th, "(s / ", literal(op.softcap, f64), ");\n") : "";
    const std::string causal =
        op.is_causal ? cat("if ((kiln::i64)j > (kiln::i64)i + ", op.causal_offset, "ll) s = NEG;\n") : "";
    std::string code = cat(
        "#include \"kiln_lane.cuh\"\n",
        "extern \"C\" __global__ void __launch_bounds__(128) kiln_attention_softmax(", params, ") {\n",
        "    typedef ", t, " T;\n",
        "    constexpr kiln::index_t KEYS = ", Skv, "ull, S = ", S, "ull, ROWS = ", B * H * S, "ull;\n", mask_layout,
        "    const T NEG = (T)kiln::neg_inf_f();\n",
        "    __shared__ T smem[32];\n",
        "    for (kiln::index_t row = blockIdx.x; row < ROWS; row += gridDim.x) {\n",
        "        T* x = p + row * KEYS;\n",
        "        const kiln::index_t i = row % S;\n",
        "        T top = NEG;\n",
        "        for (kiln::index_t j = threadIdx.x; j < KEYS; j += blockDim.x) {\n",
        "            T s = ", literal(scale, f64), " * x[j];\n            ", softcap,
        "            s += ", bias, ";\n            ", causal,
        "            x[j] = s; top = kiln::max_nan(top, s);\n        }\n",
        "        top = kiln::block_reduce(top, [](T a, T b) { return kiln::max_nan(a, b); }, NEG, smem);\n",
        "        T sum = 0;\n",
        "        for (kiln::index_t j = threadIdx.x; j < KEYS; j += blockDim.x) {\n",
        "            const T w = top == NEG ? (T)0 : ", e, "(x[j] - top); x[j] = w; sum += w;\n        }\n",
        "        sum = kiln::block_reduce(sum, [](T a, T b) { return a + b; }, (T)0, smem);\n",
        "        const T inv = sum > 0 ? (T)1 / sum : (T)0;\n",
        "        for (kiln::index_t j = threadIdx.x; j < KEYS; j += blockDim.x) x[j] *= inv;\n",
        "    }\n}\n");
    return {"kiln_attention_softmax", code, ctx.where(ins)};
}

namespace {

void lower_gemm_attention(lowering_context& ctx, const instruction& ins) {
    const shape &q = ins.inputs()[0]->get_shape(), &k = ins.inputs()[1]->get_shape();
    const std::size_t B = q.lens()[0], H = q.lens()[1], S = q.lens()[2], Skv = k.lens()[2];
    std::size_t most = buffer_bytes(ins);
    for (const auto& other : ctx.main())
        if (other.get_operator().get_if<ops::attention>() && reason(other).empty()) most = std::max(most, buffer_bytes(other));
    std::byte* slot = ctx.shared_scratch("attention scores", most, "attention's scores");
    const shape scores(q.type(), {B, H, S, Skv});
    body_operand p{slot, scores};
    slot += round_up(scores.bytes());
    std::vector<body_operand> in;
    for (std::size_t i = 0; i < 3; ++i) {
        const instruction& x = *ins.inputs()[i];
        in.push_back(standard(ctx, ins, {ctx.address(x), x.get_shape()}, slot));
        slot += round_up(x.get_shape().as_standard().bytes());
    }
    // kᵀ as a view of the standard k: cuBLASLt reads it transposed.
    const auto& kl = in[1].s.lens();
    const auto& ks = in[1].s.strides();
    body_operand kt{in[1].ptr, shape(q.type(), {kl[0], kl[1], kl[3], kl[2]}, {ks[0], ks[1], ks[3], ks[2]})};
    const operation dot = make_op("dot");
    lower_contraction(ctx, ins, dot, {in[0], kt}, p);
    std::vector<void*> ptrs{p.ptr};
    if (ins.inputs().size() > 3) ptrs.push_back(ctx.address(*ins.inputs()[3]));
    ctx.add_kernel(ins, attention_softmax_kernel(ctx, ins), {static_cast<unsigned>(std::min<std::size_t>(B * H * S, 1u << 20)), 128},
                   std::move(ptrs));
    const body_operand y{ctx.address(ins), ins.get_shape()};
    if (y.s.standard()) {
        lower_contraction(ctx, ins, dot, {p, in[2]}, y);
        return;
    }
    const body_operand tmp{slot, y.s.as_standard()};
    lower_contraction(ctx, ins, dot, {p, in[2]}, tmp);
    copy_operand(ctx, ins, tmp, y);
}

const gpu_lowering_registrar gemm_attention_lowering{{
    "attention (GEMMs around a softmax kernel)", gemm_attention_takes,
    [](lowering_context& ctx, const instruction& ins) { lower_gemm_attention(ctx, ins); }, true}};

}  // namespace

std::string gemm_attention_declines(const instruction& ins) { return reason(ins); }

bool gemm_attention_takes(const instruction& ins) {
    return ins.get_operator().get_if<ops::attention>() != nullptr && reason(ins).empty();
}

}  // namespace kiln::gpu
