// Attention on oneDNN: softmax(softcap(scale q kᵀ) + bias) v as two matmuls around a softmax, the
// scale, softcap and every additive bias (a float mask, a bool mask as 0 / -inf, the causal limit)
// applied as post-ops of the first matmul while it writes the scores, so the scores are written
// once and read once by the softmax. Grouped-query attention (Hq = G * Hkv) runs as 5-dim matmuls
// {B, Hkv, G, S, D} whose k and v broadcast over G: no copy of k or v per query head.
#include <dnnl.hpp>

#include <cmath>
#include <limits>
#include <optional>

#include "ops/attention.hpp"
#include "targets/cpu/kernels.hpp"
#include "targets/cpu/onednn_util.hpp"

namespace kiln {
namespace {

constexpr float neg_inf = -std::numeric_limits<float>::infinity();

// A 4-dim plain descriptor {B, H, S, X} as {B, Hkv, G, S, X}: H = Hkv * G (query heads, head h in
// group h / G), H = Hkv (k and v: broadcast over G) or H = 1 (broadcast over every head).
// Unchanged when G = 1.
memory::desc split_heads(const memory::desc& d, memory::dim group, bool kv = false) {
    if (group == 1) return d;
    dims l = d.get_dims(), s = d.get_strides();
    if (kv || l[1] == 1) return memory::desc({l[0], l[1], 1, l[2], l[3]}, d.get_data_type(), dims{s[0], s[1], s[1], s[2], s[3]});
    return memory::desc({l[0], l[1] / group, group, l[2], l[3]}, d.get_data_type(),
                        dims{s[0], s[1] * group, s[1], s[2], s[3]});
}

class attention_kernel {
public:
    attention_kernel(const ops::attention& op, const instruction& ins, cpu_context& ctx) : ctx_(ctx) {
        const shape& q = ins.inputs()[0]->get_shape();
        const shape& k = ins.inputs()[1]->get_shape();
        auto& eng = ctx.dnnl->engine;
        auto f32 = memory::data_type::f32;
        auto dim = [](std::size_t x) { return static_cast<memory::dim>(x); };
        memory::dim group = dim(q.lens()[1] / k.lens()[1]);
        rows_ = q.lens()[0] * q.lens()[1] * q.lens()[2];
        keys_ = k.lens()[2];
        memory::desc scores = split_heads(
            memory::desc({dim(q.lens()[0]), dim(q.lens()[1]), dim(q.lens()[2]), dim(keys_)}, f32, memory::format_tag::abcd),
            group);
        int last = scores.get_ndims() - 1;
        float scale = op.scale != 0 ? op.scale : 1 / std::sqrt(static_cast<float>(q.lens()[3]));
        dnnl::post_ops po;
        if (op.softcap > 0) {   // softcap tanh(scale s / softcap)
            po.append_eltwise(dnnl::algorithm::eltwise_linear, scale / op.softcap, 0);
            po.append_eltwise(dnnl::algorithm::eltwise_tanh, 0, 0);
            po.append_eltwise(dnnl::algorithm::eltwise_linear, op.softcap, 0);
        } else {
            po.append_eltwise(dnnl::algorithm::eltwise_linear, scale, 0);
        }
        if (ins.inputs().size() == 4) {
            const shape& ms = ins.inputs()[3]->get_shape();
            // A bool mask is converted each run into a standard float mask (oneDNN has no bool).
            const bool is_bool = ms.type() == dtype::bool_;
            memory::desc md = plain_desc(is_bool ? shape(dtype::float32, ms.lens()) : ms, 4);
            if (is_bool) {
                bool_mask_ = ms;
                m_ = memory(md, eng);
            } else {
                m_ = memory(md, eng, nullptr);
            }
            mask_post_op_ = po.len();
            po.append_binary(dnnl::algorithm::binary_add, split_heads(md, group));
        }
        if (op.is_causal) {   // a constant {Sq, Skv} bias: -inf where key j > query i + offset
            memory::desc cd = split_heads(memory::desc({1, 1, dim(q.lens()[2]), dim(keys_)}, f32, memory::format_tag::abcd), group);
            causal_ = memory(cd, eng);
            auto* c = static_cast<float*>(causal_.get_data_handle());
            for (std::size_t i = 0; i < q.lens()[2]; ++i)
                for (std::size_t j = 0; j < keys_; ++j)
                    c[i * keys_ + j] = static_cast<std::int64_t>(j) > static_cast<std::int64_t>(i) + op.causal_offset ? neg_inf : 0.0f;
            causal_post_op_ = po.len();
            po.append_binary(dnnl::algorithm::binary_add, cd);
        }
        dnnl::primitive_attr attr;
        attr.set_post_ops(po);
        q_ = memory(split_heads(plain_desc(q), group), eng, nullptr);
        kt_ = memory(split_heads(plain_desc(transposed(k)), group, true), eng, nullptr);
        v_ = memory(split_heads(plain_desc(ins.inputs()[2]->get_shape()), group, true), eng, nullptr);
        y_ = memory(split_heads(plain_desc(ins.get_shape()), group), eng, nullptr);
        s_ = memory(scores, eng);
        p_ = memory(scores, eng);
        dnnl::matmul::primitive_desc qk(eng, q_.get_desc(), kt_.get_desc(), scores, attr);
        dnnl::softmax_forward::primitive_desc sm(eng, dnnl::prop_kind::forward_inference,
                                                 dnnl::algorithm::softmax_accurate, scores, scores, last);
        dnnl::matmul::primitive_desc pv(eng, scores, v_.get_desc(), y_.get_desc());
        qk_ = dnnl::matmul(qk), softmax_ = dnnl::softmax_forward(sm), pv_ = dnnl::matmul(pv);
    }
    void run(std::span<const argument> args, const argument& out) {
        auto& s = ctx_.dnnl->stream;
        q_.set_data_handle(args[0].data()), kt_.set_data_handle(args[1].data()), v_.set_data_handle(args[2].data());
        y_.set_data_handle(out.data());
        std::unordered_map<int, memory> a{{DNNL_ARG_SRC, q_}, {DNNL_ARG_WEIGHTS, kt_}, {DNNL_ARG_DST, s_}};
        if (args.size() == 4) {
            if (bool_mask_) convert_bool_mask(args[3]);
            else m_.set_data_handle(args[3].data());
            a[DNNL_ARG_ATTR_MULTIPLE_POST_OP(mask_post_op_) | DNNL_ARG_SRC_1] = m_;
        }
        if (causal_) a[DNNL_ARG_ATTR_MULTIPLE_POST_OP(causal_post_op_) | DNNL_ARG_SRC_1] = causal_;
        qk_.execute(s, a);
        softmax_.execute(s, {{DNNL_ARG_SRC, s_}, {DNNL_ARG_DST, p_}});
        zero_empty_rows();
        pv_.execute(s, {{DNNL_ARG_SRC, p_}, {DNNL_ARG_WEIGHTS, v_}, {DNNL_ARG_DST, y_}});
        s.wait();
    }

private:
    // true -> 0, false -> -inf, in the standard layout of the mask's own dims (it broadcasts as
    // the post-op's operand).
    void convert_bool_mask(const argument& mask) {
        const auto* b = reinterpret_cast<const bool*>(mask.data());
        auto* f = static_cast<float*>(m_.get_data_handle());
        std::size_t n = bool_mask_->elements();
        if (bool_mask_->standard()) {
            for (std::size_t i = 0; i < n; ++i) f[i] = b[i] ? 0.0f : neg_inf;
        } else {
            for (std::size_t i = 0; i < n; ++i) f[i] = b[bool_mask_->index(i)] ? 0.0f : neg_inf;
        }
    }
    // A query row whose scores are all -inf gives zeros, as the reference (oneDNN's softmax gives NaN).
    void zero_empty_rows() {
        auto* sc = static_cast<float*>(s_.get_data_handle());
        auto* p = static_cast<float*>(p_.get_data_handle());
        for (std::size_t r = 0; r < rows_; ++r) {
            float* row = p + r * keys_;
            if (!std::isnan(row[0])) continue;
            const float* in = sc + r * keys_;
            bool empty = true;
            for (std::size_t j = 0; j < keys_ && empty; ++j) empty = in[j] == neg_inf;
            if (empty) std::fill(row, row + keys_, 0.0f);
        }
    }
    cpu_context& ctx_;
    std::size_t rows_ = 0, keys_ = 0;
    std::optional<shape> bool_mask_;
    int mask_post_op_ = 0, causal_post_op_ = 0;
    memory q_, kt_, v_, y_, s_, p_, m_, causal_;
    dnnl::primitive qk_, softmax_, pv_;
};

}  // namespace

host_kernel onednn_attention_kernel(const ops::attention& op, const instruction& ins, cpu_context& ctx) {
    for (std::size_t i = 0; i < 3; ++i)
        if (ins.inputs()[i]->get_shape().type() != dtype::float32) return {};
    auto k = std::make_shared<attention_kernel>(op, ins, ctx);
    return [k](std::span<const argument> args, const argument& out) { k->run(args, out); };
}

}  // namespace kiln
