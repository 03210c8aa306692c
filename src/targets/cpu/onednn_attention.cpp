// Attention on oneDNN, for float16 and bfloat16 (float32 runs the fused kernel of
// attention_kernel.cpp; the float kernel here is what float16 tiles run on converted tiles):
// softmax(softcap(scale q kᵀ) + bias) v as two matmuls around a softmax, the
// scale, softcap and every additive bias (a float mask, a bool mask as 0 / -inf, the causal limit)
// applied as post-ops of the first matmul while it writes the scores, so the scores are written
// once and read once by the softmax. Grouped-query attention (Hq = G * Hkv) runs as 5-dim matmuls
// {B, Hkv, G, S, D} whose k and v broadcast over G: no copy of k or v per query head.
//
// float16 and bfloat16: where oneDNN's ISA has the type's arithmetic (AVX512-BF16, AVX512-FP16),
// the matmuls read it and accumulate in float, the scores and the softmax are float, and the
// probabilities are rounded to the type for the second matmul. Elsewhere the kernel runs the float
// kernel per tile (one batch entry and key/value head: the query heads of its group), each tile's
// q, k, v and mask converted into float buffers the size of the tile (in cache; F16C, see
// type_convert.hpp) and its output converted back; no whole-tensor copy.
#include <dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ops/attention.hpp"
#include "targets/cpu/kernels.hpp"
#include "targets/cpu/onednn_util.hpp"
#include "targets/cpu/type_convert.hpp"

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

// The shapes an attention kernel is made for (the instruction's, or one tile's).
struct attention_shapes {
    shape q, k, v, y;
    std::optional<shape> mask;
};

class attention_kernel {
public:
    attention_kernel(const ops::attention& op, const attention_shapes& sh, cpu_context& ctx) : ctx_(ctx) {
        const shape& q = sh.q;
        const shape& k = sh.k;
        auto& eng = ctx.dnnl->engine;
        auto f32 = memory::data_type::f32;
        auto dim = [](std::size_t x) { return static_cast<memory::dim>(x); };
        memory::dim group = dim(q.lens()[1] / k.lens()[1]);
        rows_ = q.lens()[0] * q.lens()[1] * q.lens()[2];
        keys_ = k.lens()[2];
        memory::desc scores = split_heads(
            memory::desc({dim(q.lens()[0]), dim(q.lens()[1]), dim(q.lens()[2]), dim(keys_)}, f32, memory::format_tag::abcd),
            group);
        // The probabilities in q's type: oneDNN's matmuls take src and weights of one type.
        memory::desc probs(scores.get_dims(), *dnnl_type(q.type()), scores.get_strides());
        p_bytes_ = dtype_bits(q.type()) / 8;
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
        if (sh.mask) {
            const shape& ms = *sh.mask;
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
        dnnl::primitive_attr attr = user_scratchpad();
        attr.set_post_ops(po);
        q_ = memory(split_heads(plain_desc(q), group), eng, nullptr);
        kt_ = memory(split_heads(plain_desc(transposed(k)), group, true), eng, nullptr);
        v_ = memory(split_heads(plain_desc(sh.v), group, true), eng, nullptr);
        y_ = memory(split_heads(plain_desc(sh.y), group), eng, nullptr);
        s_ = memory(scores, eng);
        p_ = memory(probs, eng);
        dnnl::matmul::primitive_desc qk(eng, q_.get_desc(), kt_.get_desc(), scores, attr);
        dnnl::softmax_forward::primitive_desc sm(eng, dnnl::prop_kind::forward_inference,
                                                 dnnl::algorithm::softmax_accurate, scores, probs, last,
                                                 user_scratchpad());
        dnnl::matmul::primitive_desc pv(eng, probs, v_.get_desc(), y_.get_desc(), user_scratchpad());
        qk_ = dnnl::matmul(qk), softmax_ = dnnl::softmax_forward(sm), pv_ = dnnl::matmul(pv);
        // One scratchpad for the three, run one after another: the largest.
        std::size_t pad = std::max({qk.scratchpad_desc().get_size(), sm.scratchpad_desc().get_size(),
                                    pv.scratchpad_desc().get_size()});
        if (pad > 0)
            scratch_ = ctx_.dnnl->scratchpad_memory(
                memory::desc({static_cast<memory::dim>(pad)}, memory::data_type::u8, memory::format_tag::a));
    }
    // mask: null where the kernel has none.
    void run(const void* q, const void* k, const void* v, const void* mask, void* y) {
        auto& s = ctx_.dnnl->stream;
        q_.set_data_handle(const_cast<void*>(q)), kt_.set_data_handle(const_cast<void*>(k));
        v_.set_data_handle(const_cast<void*>(v)), y_.set_data_handle(y);
        std::unordered_map<int, memory> a{{DNNL_ARG_SRC, q_}, {DNNL_ARG_WEIGHTS, kt_}, {DNNL_ARG_DST, s_}};
        if (mask) {
            if (bool_mask_) convert_bool_mask(static_cast<const bool*>(mask));
            else m_.set_data_handle(const_cast<void*>(mask));
            a[DNNL_ARG_ATTR_MULTIPLE_POST_OP(mask_post_op_) | DNNL_ARG_SRC_1] = m_;
        }
        if (causal_) a[DNNL_ARG_ATTR_MULTIPLE_POST_OP(causal_post_op_) | DNNL_ARG_SRC_1] = causal_;
        std::unordered_map<int, memory> sm{{DNNL_ARG_SRC, s_}, {DNNL_ARG_DST, p_}},
            pv{{DNNL_ARG_SRC, p_}, {DNNL_ARG_WEIGHTS, v_}, {DNNL_ARG_DST, y_}};
        if (scratch_) {
            ctx_.dnnl->bind_scratchpad(scratch_);
            a[DNNL_ARG_SCRATCHPAD] = sm[DNNL_ARG_SCRATCHPAD] = pv[DNNL_ARG_SCRATCHPAD] = scratch_;
        }
        qk_.execute(s, a);
        softmax_.execute(s, sm);
        s.wait();
        zero_empty_rows();
        pv_.execute(s, pv);
        s.wait();
    }

private:
    // true -> 0, false -> -inf, in the standard layout of the mask's own dims (it broadcasts as
    // the post-op's operand).
    void convert_bool_mask(const bool* b) {
        auto* f = static_cast<float*>(m_.get_data_handle());
        std::size_t n = bool_mask_->elements();
        if (bool_mask_->standard()) {
            for (std::size_t i = 0; i < n; ++i) f[i] = b[i] ? 0.0f : neg_inf;
        } else {
            for (std::size_t i = 0; i < n; ++i) f[i] = b[bool_mask_->index(i)] ? 0.0f : neg_inf;
        }
    }
    // A query row whose scores are all -inf gives zeros, as the reference (oneDNN's softmax gives
    // NaN). The scores are float whatever the type; zero bits are 0 in every float type.
    void zero_empty_rows() {
        const auto* sc = static_cast<const float*>(s_.get_data_handle());
        auto* p = static_cast<std::byte*>(p_.get_data_handle());
        for (std::size_t r = 0; r < rows_; ++r) {
            const float* in = sc + r * keys_;
            if (in[0] != neg_inf) continue;
            bool empty = true;
            for (std::size_t j = 1; j < keys_ && empty; ++j) empty = in[j] == neg_inf;
            if (empty) std::fill(p + r * keys_ * p_bytes_, p + (r + 1) * keys_ * p_bytes_, std::byte{0});
        }
    }
    cpu_context& ctx_;
    std::size_t rows_ = 0, keys_ = 0, p_bytes_ = 4;
    std::optional<shape> bool_mask_;
    int mask_post_op_ = 0, causal_post_op_ = 0;
    memory q_, kt_, v_, y_, s_, p_, m_, causal_;
    memory scratch_;   // the three primitives' scratchpad (user_scratchpad)
    dnnl::primitive qk_, softmax_, pv_;
};

// float16 or bfloat16 attention on a CPU without the type's arithmetic: the float kernel over tiles
// of one batch entry b and a run of key/value heads (with the G query heads of each one's group),
// each operand's tile converted into a float buffer of the tile's size by a reorder from its
// strided layout, the output tile converted back. A tile takes as many key/value heads (a divisor
// of their count) as keep its float buffers, the scores and probabilities included, within 1 MiB
// (in L2): each tile costs a handful of reorders and primitives, each a parallel region, and one
// head a tile made the BERT-like encoder's fp16 attention 16 such regions per layer, 1.9 ms at 2
// threads on a busy machine against 0.12 ms at 1. A mask broadcast over batch or heads is read
// at the same offset in every tile.
class tiled_attention {
public:
    tiled_attention(const ops::attention& op, const attention_shapes& sh, cpu_context& ctx) : ctx_(ctx) {
        batch_ = sh.q.lens()[0];
        kv_heads_ = sh.k.lens()[1];
        group_ = sh.q.lens()[1] / kv_heads_;
        per_tile_ = heads_per_tile(sh);
        std::size_t q_heads = group_ * per_tile_;
        attention_shapes tile;
        tile.q = add(sh.q, q_heads, 0);
        tile.k = add(sh.k, per_tile_, 1);
        tile.v = add(sh.v, per_tile_, 2);
        tile.y = add(sh.y, q_heads, -1);
        if (sh.mask) {
            // Right-aligned to 4 dims {B or 1, Hq or 1, Sq, Skv}: a tile takes its batch entry and
            // its group's query heads where the mask has them.
            std::vector<std::size_t> lens(4, 1), strides(4, 1);
            std::size_t lead = 4 - sh.mask->ndim();
            for (std::size_t d = 0; d < sh.mask->ndim(); ++d)
                lens[lead + d] = sh.mask->lens()[d], strides[lead + d] = sh.mask->strides()[d];
            for (std::size_t d = lead; d-- > 0;) strides[d] = strides[d + 1] * lens[d + 1];
            shape m4(sh.mask->type(), lens, strides);
            // A bool mask is read in place (the float kernel converts it); a float one is converted.
            bool_mask_ = sh.mask->type() == dtype::bool_;
            tile.mask = add(m4, lens[1] == 1 ? 1 : q_heads, 3);
        }
        inner_ = std::make_unique<attention_kernel>(op, tile, ctx);
    }
    void run(std::span<const argument> args, const argument& out) {
        auto& s = ctx_.dnnl->stream;
        for (std::size_t b = 0; b < batch_; ++b)
            for (std::size_t h = 0; h < kv_heads_ / per_tile_; ++h) {   // h: the tile's index
                for (auto& t : tiles_) {
                    if (t.arg < 0) continue;
                    t.user.set_data_handle(args[t.arg].data() + offset(t, b, h));
                    t.to->execute(s, t.user, t.tile);
                }
                const void* mask = nullptr;
                if (bool_mask_) mask = args[3].data() + offset(tiles_[3], b, h);
                else if (args.size() == 4) mask = tiles_[3].tile.get_data_handle();
                inner_->run(tiles_[0].tile.get_data_handle(), tiles_[1].tile.get_data_handle(),
                            tiles_[2].tile.get_data_handle(), mask, tiles_[4].tile.get_data_handle());
                auto& y = tiles_[4];
                y.user.set_data_handle(out.data() + offset(y, b, h));
                y.to->execute(s, y.tile, y.user);
            }
        s.wait();
    }

private:
    // One operand's tile: the user's layout at the tile's offset, and its float copy.
    struct tile {
        int arg = -1;                  // -1: unused (no mask, or a bool mask read in place)
        std::size_t batch_stride = 0, head_stride = 0, bytes = 0;
        memory user, tile;
        std::optional<tensor_copy> to;   // user -> tile (the output: tile -> user)
    };
    // The most key/value heads (a divisor of their count, at least 1) whose tile's float buffers
    // fit in 1 MiB: q, k, v, the output, a per-head mask and the scores and probabilities.
    std::size_t heads_per_tile(const attention_shapes& sh) const {
        std::size_t sq = sh.q.lens()[2], skv = sh.k.lens()[2], d = sh.q.lens()[3], dv = sh.v.lens()[3];
        std::size_t per_head = group_ * sq * (d + dv + 2 * skv) + skv * (d + dv);
        if (sh.mask && sh.mask->ndim() >= 3 && sh.mask->lens()[sh.mask->ndim() - 3] != 1) per_head += group_ * sq * skv;
        std::size_t best = 1;
        for (std::size_t n = 1; n <= kv_heads_; ++n)
            if (kv_heads_ % n == 0 && n * per_head * sizeof(float) <= (std::size_t{1} << 20)) best = n;
        return best;
    }
    // A tile of `s`: batch 1 and `heads` heads, its strides.
    static shape tile_shape(const shape& s, std::size_t heads) {
        auto lens = s.lens();
        lens[0] = 1, lens[1] = heads;
        return shape(s.type(), lens, s.strides());
    }
    // Adds the tile of operand `arg` (-1: the output) as tiles_[slot]; returns the shape the float
    // kernel reads: the float tile's, or for a bool mask the user's tile itself.
    shape add(const shape& s, std::size_t heads, int arg) {
        std::size_t slot = arg < 0 ? 4 : static_cast<std::size_t>(arg);
        tile& t = tiles_[slot];
        shape user = tile_shape(s, heads);
        t.bytes = dtype_bits(s.type()) / 8;
        t.batch_stride = s.lens()[0] == 1 ? 0 : s.strides()[0];
        t.head_stride = s.lens()[1] == 1 ? 0 : s.strides()[1] * heads;
        if (s.type() == dtype::bool_) return user;
        shape f(dtype::float32, user.lens());
        auto& eng = ctx_.dnnl->engine;
        t.arg = arg;
        t.user = memory(plain_desc(user), eng, nullptr);
        t.tile = memory(plain_desc(f), eng);
        if (arg < 0) t.to.emplace(t.tile, t.user);
        else t.to.emplace(t.user, t.tile);
        return f;
    }
    std::size_t offset(const tile& t, std::size_t b, std::size_t h) const {
        return (b * t.batch_stride + h * t.head_stride) * t.bytes;
    }
    cpu_context& ctx_;
    std::size_t batch_ = 0, kv_heads_ = 0, group_ = 1, per_tile_ = 1;
    bool bool_mask_ = false;
    std::vector<tile> tiles_ = std::vector<tile>(5);   // q, k, v, mask, output
    std::unique_ptr<attention_kernel> inner_;
};

}  // namespace

host_kernel onednn_attention_kernel(const ops::attention& op, const instruction& ins, cpu_context& ctx) {
    attention_shapes sh{ins.inputs()[0]->get_shape(), ins.inputs()[1]->get_shape(), ins.inputs()[2]->get_shape(),
                        ins.get_shape(), std::nullopt};
    if (ins.inputs().size() == 4) sh.mask = ins.inputs()[3]->get_shape();
    dtype t = sh.q.type();
    if (sh.k.type() != t || sh.v.type() != t || sh.q.ndim() != 4) return {};
    bool low = t == dtype::float16 || t == dtype::bfloat16;
    if (t != dtype::float32 && !low) return {};   // float64: the reference
    if (!low || native_precision(t == dtype::float16 ? compute_precision::fp16 : compute_precision::bf16)) {
        auto k = std::make_shared<attention_kernel>(op, sh, ctx);
        return [k](std::span<const argument> a, const argument& out) {
            k->run(a[0].data(), a[1].data(), a[2].data(), a.size() == 4 ? a[3].data() : nullptr, out.data());
        };
    }
    auto k = std::make_shared<tiled_attention>(op, sh, ctx);
    return [k](std::span<const argument> a, const argument& out) { k->run(a, out); };
}

}  // namespace kiln
