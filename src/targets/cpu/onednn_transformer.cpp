// oneDNN kernels for transformer ops: attention as two matmuls around a softmax (scale and the
// additive mask as post-ops of the first), layer norm and softmax as their primitives. All in
// float; primitives and scratch buffers made when the executable is built.
#include <dnnl.hpp>

#include <cmath>
#include <limits>

#include "ops/attention.hpp"
#include "ops/normalization.hpp"
#include "ops/softmax.hpp"
#include "targets/cpu/kernels.hpp"
#include "targets/cpu/onednn_util.hpp"

namespace kiln {
namespace {

using dnnl::memory;

// softmax(scale * q kᵀ + mask) v for q [B, H, Sq, D], k [B, H, Skv, D], v [B, H, Skv, Dv]. A query
// row whose scores are all -inf gives zeros, as the reference (oneDNN's softmax gives NaN).
class attention_kernel {
public:
    attention_kernel(const ops::attention& op, const instruction& ins, cpu_context& ctx) : ctx_(ctx) {
        const shape& q = ins.inputs()[0]->get_shape();
        const shape& k = ins.inputs()[1]->get_shape();
        const shape& v = ins.inputs()[2]->get_shape();
        auto& eng = ctx.dnnl->engine;
        auto f32 = memory::data_type::f32;
        rows_ = q.lens()[0] * q.lens()[1] * q.lens()[2];
        keys_ = k.lens()[2];
        memory::dims sd{static_cast<memory::dim>(q.lens()[0]), static_cast<memory::dim>(q.lens()[1]),
                        static_cast<memory::dim>(q.lens()[2]), static_cast<memory::dim>(keys_)};
        memory::desc scores(sd, f32, memory::format_tag::abcd);
        float scale = op.scale != 0 ? op.scale : 1 / std::sqrt(static_cast<float>(q.lens()[3]));
        dnnl::post_ops po;
        po.append_eltwise(dnnl::algorithm::eltwise_linear, scale, 0);
        if (ins.inputs().size() == 4) {
            mask_ = plain_desc(ins.inputs()[3]->get_shape(), 4);
            po.append_binary(dnnl::algorithm::binary_add, mask_);
        }
        dnnl::primitive_attr attr;
        attr.set_post_ops(po);
        q_ = memory(plain_desc(q), eng, nullptr);
        kt_ = memory(plain_desc(transposed(k)), eng, nullptr);
        v_ = memory(plain_desc(v), eng, nullptr);
        y_ = memory(plain_desc(ins.get_shape()), eng, nullptr);
        s_ = memory(scores, eng);
        p_ = memory(scores, eng);
        dnnl::matmul::primitive_desc qk(eng, q_.get_desc(), kt_.get_desc(), scores, attr);
        dnnl::softmax_forward::primitive_desc sm(eng, dnnl::prop_kind::forward_inference,
                                                 dnnl::algorithm::softmax_accurate, scores, scores, 3);
        dnnl::matmul::primitive_desc pv(eng, scores, v_.get_desc(), y_.get_desc());
        qk_ = dnnl::matmul(qk), softmax_ = dnnl::softmax_forward(sm), pv_ = dnnl::matmul(pv);
        if (ins.inputs().size() == 4) m_ = memory(mask_, eng, nullptr);
    }
    void run(std::span<const argument> args, const argument& out) {
        auto& s = ctx_.dnnl->stream;
        q_.set_data_handle(args[0].data()), kt_.set_data_handle(args[1].data()), v_.set_data_handle(args[2].data());
        y_.set_data_handle(out.data());
        std::unordered_map<int, memory> a{{DNNL_ARG_SRC, q_}, {DNNL_ARG_WEIGHTS, kt_}, {DNNL_ARG_DST, s_}};
        if (args.size() == 4) {
            m_.set_data_handle(args[3].data());
            a[DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1] = m_;
        }
        qk_.execute(s, a);
        softmax_.execute(s, {{DNNL_ARG_SRC, s_}, {DNNL_ARG_DST, p_}});
        zero_empty_rows();
        pv_.execute(s, {{DNNL_ARG_SRC, p_}, {DNNL_ARG_WEIGHTS, v_}, {DNNL_ARG_DST, y_}});
        s.wait();
    }

private:
    void zero_empty_rows() {
        auto* sc = static_cast<float*>(s_.get_data_handle());
        auto* p = static_cast<float*>(p_.get_data_handle());
        for (std::size_t r = 0; r < rows_; ++r) {
            float* row = p + r * keys_;
            if (!std::isnan(row[0])) continue;
            const float* in = sc + r * keys_;
            bool empty = true;
            for (std::size_t j = 0; j < keys_ && empty; ++j) empty = in[j] == -std::numeric_limits<float>::infinity();
            if (empty) std::fill(row, row + keys_, 0.0f);
        }
    }
    cpu_context& ctx_;
    std::size_t rows_ = 0, keys_ = 0;
    memory::desc mask_;
    memory q_, kt_, v_, y_, s_, p_, m_;
    dnnl::primitive qk_, softmax_, pv_;
};

host_kernel attention(const ops::attention& op, const instruction& ins, cpu_context& ctx) {
    const auto& in = ins.inputs();
    if (op.is_causal || op.softcap != 0 || in[0]->get_shape().lens()[1] != in[1]->get_shape().lens()[1]) return {};
    if (in.size() == 4 && in[3]->get_shape().type() != ins.get_shape().type()) return {};   // bool masks
    if (ins.get_shape().type() != dtype::float32) return {};
    auto k = std::make_shared<attention_kernel>(op, ins, ctx);
    return [k](std::span<const argument> args, const argument& out) { k->run(args, out); };
}

// One primitive over plain inputs and output; `args` maps DNNL_ARG_* to the kernel's argument.
host_kernel single(dnnl::primitive p, const dnnl::primitive_desc_base& pd, std::vector<std::pair<int, memory::desc>> ins,
                   memory::desc out, cpu_context& ctx) {
    struct state {
        dnnl::primitive p;
        std::vector<memory> in;
        memory out;
        std::unordered_map<int, memory> args;
    };
    auto st = std::make_shared<state>();
    st->p = std::move(p);
    auto& eng = ctx.dnnl->engine;
    for (auto& [arg, d] : ins) st->in.emplace_back(d, eng, nullptr), st->args[arg] = st->in.back();
    st->out = memory(out, eng, nullptr);
    st->args[DNNL_ARG_DST] = st->out;
    if (pd.scratchpad_desc().get_size() > 0) st->args[DNNL_ARG_SCRATCHPAD] = memory(pd.scratchpad_desc(), eng);
    return [st, &ctx](std::span<const argument> args, const argument& out) {
        for (std::size_t i = 0; i < st->in.size(); ++i) st->in[i].set_data_handle(args[i].data());
        st->out.set_data_handle(out.data());
        st->p.execute(ctx.dnnl->stream, st->args);
        ctx.dnnl->stream.wait();
    };
}

// Layer norm over dims axis..end as oneDNN's over the last dim of [rows, C]: x standard, scale and
// bias C contiguous floats.
host_kernel layernorm(const ops::layernorm& op, const instruction& ins, cpu_context& ctx) {
    const shape& x = ins.inputs()[0]->get_shape();
    if (x.type() != dtype::float32 || !x.standard() || ins.inputs().size() != 3) return {};
    std::size_t axis = op.axis < 0 ? x.ndim() + op.axis : op.axis;
    std::size_t c = 1;
    for (std::size_t d = axis; d < x.ndim(); ++d) c *= x.lens()[d];
    for (std::size_t i = 1; i < 3; ++i) {
        const shape& s = ins.inputs()[i]->get_shape();
        if (s.elements() != c || !s.standard() || s.type() != dtype::float32) return {};
    }
    auto f32 = memory::data_type::f32;
    memory::desc xd({static_cast<memory::dim>(x.elements() / c), static_cast<memory::dim>(c)}, f32, memory::format_tag::ab);
    memory::desc cd({static_cast<memory::dim>(c)}, f32, memory::format_tag::a);
    dnnl::layer_normalization_forward::primitive_desc pd(
        ctx.dnnl->engine, dnnl::prop_kind::forward_inference, xd, xd, op.epsilon,
        dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift);
    return single(dnnl::layer_normalization_forward(pd), pd,
                  {{DNNL_ARG_SRC, xd}, {DNNL_ARG_SCALE, cd}, {DNNL_ARG_SHIFT, cd}}, xd, ctx);
}

host_kernel softmax(std::int64_t axis, dnnl::algorithm alg, const instruction& ins, cpu_context& ctx) {
    const shape& x = ins.inputs()[0]->get_shape();
    if (x.type() != dtype::float32 || x.ndim() == 0) return {};
    int a = static_cast<int>(axis < 0 ? axis + static_cast<std::int64_t>(x.ndim()) : axis);
    memory::desc xd = plain_desc(x), yd = plain_desc(ins.get_shape());
    dnnl::softmax_forward::primitive_desc pd(ctx.dnnl->engine, dnnl::prop_kind::forward_inference, alg, xd, yd, a);
    return single(dnnl::softmax_forward(pd), pd, {{DNNL_ARG_SRC, xd}}, yd, ctx);
}

}  // namespace

host_kernel make_onednn_transformer_kernel(const instruction& ins, cpu_context& ctx) {
    const operation& op = ins.get_operator();
    if (const auto* a = op.get_if<ops::attention>()) return attention(*a, ins, ctx);
    if (const auto* l = op.get_if<ops::layernorm>()) return layernorm(*l, ins, ctx);
    if (const auto* s = op.get_if<ops::softmax>()) return softmax(s->axis, dnnl::algorithm::softmax_accurate, ins, ctx);
    if (const auto* s = op.get_if<ops::logsoftmax>()) return softmax(s->axis, dnnl::algorithm::softmax_log, ins, ctx);
    return {};
}

}  // namespace kiln
