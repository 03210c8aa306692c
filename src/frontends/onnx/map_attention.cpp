// ONNX Attention (opsets 23-25) onto kiln's attention op, which takes [B, H, S, D] tensors, a
// mask and a causal limit. This file does the rest: 3-D inputs split into heads, the KV cache
// (past_key/past_value concatenated before K and V, returned as present_key/present_value), a
// mask shorter than the keys padded, and what kiln's op lacks composed into an additive bias:
// per-batch lengths (nonpad_kv_seqlen, with its per-batch causal offset) and sliding windows
// (opset 25). The optional qk_matmul_output is composed from dot, softcap, bias and softmax.
// softmax_precision needs nothing: kiln's op computes in double and rounds once.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"
#include "frontends/onnx/nn_common.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;
constexpr double neg_inf = -std::numeric_limits<double>::infinity();

instruction_ref scalar(context& ctx, dtype t, double v) {
    return ctx.add_literal(literal(shape(t), std::vector<double>{v}));
}

instruction_ref int64s(context& ctx, std::vector<std::size_t> lens, std::vector<std::int64_t> values) {
    return ctx.add_literal(literal(shape(dtype::int64, std::move(lens)), values));
}

const std::vector<std::size_t>& static_lens(instruction_ref x, const char* what) {
    if (x->get_shape().dynamic()) fail(what, " has dynamic dims (", to_string(x->get_shape()), "); give its shape");
    return x->get_shape().lens();
}

// [B, S, H * D] -> [B, H, S, D].
instruction_ref split_heads(context& ctx, instruction_ref x, std::int64_t heads, const char* what) {
    const auto& lens = static_lens(x, what);
    if (heads <= 0 || lens[2] % static_cast<std::size_t>(heads) != 0)
        fail(what, " hidden size ", lens[2], " is not a multiple of its ", heads, " heads");
    auto r = ctx.add("reshape", value{{"dims", to_value(std::vector<std::int64_t>{0, 0, heads, -1})}}, {x});
    return ctx.add("transpose", value{{"permutation", to_value(std::vector<std::int64_t>{0, 2, 1, 3})}}, {r});
}

// [B, H, S, D] -> [B, S, H * D].
instruction_ref merge_heads(context& ctx, instruction_ref x) {
    auto t = ctx.add("transpose", value{{"permutation", to_value(std::vector<std::int64_t>{0, 2, 1, 3})}}, {x});
    return ctx.add("reshape", value{{"dims", to_value(std::vector<std::int64_t>{0, 0, -1})}}, {t});
}

// What the node's inputs become: 4-D q, k, v (k and v with the past prepended) and the masks.
struct attention_plan {
    instruction_ref q, k, v;
    instruction_ref mask;    // absent, or padded to the total number of keys
    instruction_ref nonpad;  // absent, or [B] int64 valid key counts
    std::size_t past = 0;    // cached keys before K (the causal offset)
    std::size_t queries = 0, keys = 0;
    dtype type = dtype::float32;
};

// A mask shorter than the keys is padded with -inf (false for bool masks): those keys are masked.
instruction_ref pad_mask(context& ctx, instruction_ref mask, std::size_t keys) {
    const auto& lens = static_lens(mask, "input 3 (attn_mask)");
    if (lens.empty()) return mask;
    if (lens.back() > keys) fail("input 3 (attn_mask) has ", lens.back(), " keys; expected at most ", keys);
    if (lens.back() == keys) return mask;
    std::vector<std::int64_t> pads(2 * lens.size(), 0);
    pads.back() = static_cast<std::int64_t>(keys - lens.back());
    bool is_bool = mask->get_shape().type() == dtype::bool_;
    return ctx.add("pad", value{{"pads", to_value(pads)}, {"value", is_bool ? 0.0 : neg_inf}}, {mask});
}

attention_plan plan_attention(const node_info& n, context& ctx, const inputs_t& in) {
    attention_plan p{in.at(0), in.at(1), in.at(2), ctx.none(), ctx.none()};
    std::size_t rank = static_lens(p.q, "input 0 (Q)").size();
    if (rank != 3 && rank != 4) fail("input 0 (Q) has ", rank, " dims; expected 3 or 4");
    if (static_lens(p.k, "input 1 (K)").size() != rank || static_lens(p.v, "input 2 (V)").size() != rank)
        fail("Q, K and V have ", rank, ", ", p.k->get_shape().ndim(), " and ", p.v->get_shape().ndim(),
             " dims; expected the same");
    if (rank == 3) {
        if (!n.has_attr("q_num_heads") || !n.has_attr("kv_num_heads"))
            fail("3-D inputs need the q_num_heads and kv_num_heads attributes");
        p.q = split_heads(ctx, p.q, n.attr_int("q_num_heads", 0), "input 0 (Q)");
        p.k = split_heads(ctx, p.k, n.attr_int("kv_num_heads", 0), "input 1 (K)");
        p.v = split_heads(ctx, p.v, n.attr_int("kv_num_heads", 0), "input 2 (V)");
    }
    if (present(ctx, in, 4) != present(ctx, in, 5)) fail("past_key and past_value must be given together");
    if (present(ctx, in, 4)) {
        p.past = static_lens(in[4], "input 4 (past_key)").at(2);
        p.k = ctx.add("concat", value{{"axis", 2}}, {in[4], p.k});
        p.v = ctx.add("concat", value{{"axis", 2}}, {in[5], p.v});
    }
    if (present(ctx, in, 6)) {
        if (present(ctx, in, 4)) fail("nonpad_kv_seqlen cannot be combined with past_key and past_value");
        p.nonpad = in[6];
        if (p.nonpad->get_shape().type() != dtype::int64)
            p.nonpad = ctx.add("convert", value{{"target_type", std::string(dtype_name(dtype::int64))}}, {p.nonpad});
    }
    p.type = p.q->get_shape().type();
    p.queries = p.q->get_shape().lens()[2];
    p.keys = p.k->get_shape().lens().at(2);
    if (present(ctx, in, 3)) p.mask = pad_mask(ctx, in[3], p.keys);
    return p;
}

// The causal / window limits: key j is allowed for query i while lo <= j - i - offset <= hi,
// where -1 leaves a side open. Causal is hi = 0; left_window_size is lo = -left.
struct key_window {
    std::int64_t left = -1, right = -1;
    bool any() const { return left >= 0 || right >= 0; }
};

key_window read_window(const node_info& n) {
    key_window w{n.attr_int("left_window_size", -1), n.attr_int("right_window_size", -1)};
    if (w.left < -1 || w.right < -1)
        fail("left_window_size=", w.left, ", right_window_size=", w.right, "; expected -1 (unbounded) or a size");
    if (n.attr_int("is_causal", 0) != 0) w.right = 0;  // causal: j <= i + offset, inside any right window
    return w;
}

// Whether each key is allowed by the window: [Sq, T] when the offset is the cache length,
// [B, 1, Sq, T] for per-batch offsets nonpad_kv_seqlen - Sq.
instruction_ref window_allowed(context& ctx, const attention_plan& p, key_window w) {
    std::vector<std::int64_t> diff;  // j - i
    for (std::size_t i = 0; i < p.queries; ++i)
        for (std::size_t j = 0; j < p.keys; ++j)
            diff.push_back(static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i));
    auto rel = int64s(ctx, {p.queries, p.keys}, diff);
    instruction_ref offset = int64s(ctx, {}, {static_cast<std::int64_t>(p.past)});
    if (!ctx.is_none(p.nonpad)) {
        auto queries = int64s(ctx, {}, {static_cast<std::int64_t>(p.queries)});
        offset = ctx.add("reshape", value{{"dims", to_value(std::vector<std::int64_t>{-1, 1, 1, 1})}},
                         {ctx.add("sub", {p.nonpad, queries})});
    }
    rel = ctx.add("sub", {rel, offset});  // j - (i + offset)
    instruction_ref allowed = ctx.none();
    auto both = [&](instruction_ref c) { return ctx.is_none(allowed) ? c : ctx.add("logical_and", {allowed, c}); };
    if (w.right >= 0) allowed = both(ctx.add("less_or_equal", {rel, int64s(ctx, {}, {w.right})}));
    if (w.left >= 0) allowed = both(ctx.add("greater_or_equal", {rel, int64s(ctx, {}, {-w.left})}));
    return allowed;
}

// Everything that masks scores as one additive bias in the scores' type, broadcastable to
// [B, Hq, Sq, T]: attn_mask, the causal/window limits and the padding of nonpad_kv_seqlen.
// Absent when nothing masks.
instruction_ref full_bias(context& ctx, const attention_plan& p, key_window w) {
    instruction_ref allowed = ctx.none(), added = ctx.none();
    auto both = [&](instruction_ref c) { allowed = ctx.is_none(allowed) ? c : ctx.add("logical_and", {allowed, c}); };
    if (!ctx.is_none(p.mask)) {
        if (p.mask->get_shape().type() == dtype::bool_)
            both(p.mask);
        else
            added = p.mask;
    }
    if (w.any()) both(window_allowed(ctx, p, w));
    if (!ctx.is_none(p.nonpad)) {
        std::vector<std::int64_t> key_index(p.keys);
        for (std::size_t j = 0; j < p.keys; ++j) key_index[j] = static_cast<std::int64_t>(j);
        auto lengths =
            ctx.add("reshape", value{{"dims", to_value(std::vector<std::int64_t>{-1, 1, 1, 1})}}, {p.nonpad});
        both(ctx.add("less", {int64s(ctx, {p.keys}, key_index), lengths}));
    }
    if (ctx.is_none(allowed)) return added;
    auto bias = ctx.add("where", {allowed, scalar(ctx, p.type, 0), scalar(ctx, p.type, neg_inf)});
    return ctx.is_none(added) ? bias : ctx.add("add", {added, bias});
}

float softcap_of(const node_info& n) {
    float cap = n.attr_float("softcap", 0);
    if (cap < 0) fail("softcap=", cap, "; expected 0 (none) or a positive cap");
    return cap;
}

// The scale given, or 1 / sqrt(head_size). kiln's op reads scale 0 as that default, so a given 0
// (every score 0) cannot be passed on.
double scale_of(const node_info& n, const attention_plan& p) {
    if (!n.has_attr("scale")) return 1 / std::sqrt(static_cast<double>(p.q->get_shape().lens()[3]));
    float scale = n.attr_float("scale", 0);
    if (scale == 0) fail("scale=0 (every score 0) is not supported; expected a nonzero scale");
    return scale;
}

// Y [B, Hq, Sq, Dv]: kiln's attention with its own mask and causal limit when they suffice;
// per-batch lengths and windows go in through the composed bias.
instruction_ref attend(const node_info& n, context& ctx, const attention_plan& p, key_window w) {
    value attrs{{"scale", scale_of(n, p)}, {"softcap", softcap_of(n)}};
    inputs_t args{p.q, p.k, p.v};
    bool causal_only = w.left < 0 && w.right <= 0;
    if (ctx.is_none(p.nonpad) && causal_only) {
        attrs.set("is_causal", w.right == 0);
        attrs.set("causal_offset", static_cast<std::int64_t>(p.past));
        if (!ctx.is_none(p.mask)) args.push_back(p.mask);
    } else {
        args.push_back(full_bias(ctx, p, w));
    }
    return ctx.add("attention", attrs, args);
}

// K with each kv head repeated for its group of query heads: [B, Hkv, T, D] -> [B, Hq, T, D].
instruction_ref repeat_kv_heads(context& ctx, instruction_ref k, std::size_t q_heads) {
    std::vector<std::int64_t> lens;
    for (auto l : k->get_shape().lens()) lens.push_back(static_cast<std::int64_t>(l));
    auto heads = static_cast<std::int64_t>(q_heads);
    if (lens[1] == heads) return k;
    if (lens[1] == 0 || heads % lens[1] != 0)
        fail("Q has ", heads, " heads, not a multiple of K's ", lens[1], " heads");
    // [B, Hkv, 1, T, D] broadcast to [B, Hkv, Hq / Hkv, T, D], then merged into Hq heads.
    auto k5 = ctx.add("unsqueeze", value{{"axes", to_value(std::vector<std::int64_t>{2})}}, {k});
    std::vector<std::int64_t> wide{lens[0], lens[1], heads / lens[1], lens[2], lens[3]};
    auto b = ctx.add("multibroadcast", value{{"out_lens", to_value(wide)}}, {k5});
    std::vector<std::int64_t> merged{lens[0], heads, lens[2], lens[3]};
    return ctx.add("reshape", value{{"dims", to_value(merged)}}, {b});
}

// qk_matmul_output [B, Hq, Sq, T] by qk_matmul_output_mode: 0 the scaled product, 1 after
// softcap, 2 plus the bias, 3 after softmax (rows without any key are zero, as in Y).
instruction_ref qk_output(const node_info& n, context& ctx, const attention_plan& p, key_window w) {
    std::int64_t mode = n.attr_int("qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3) fail("qk_matmul_output_mode=", mode, "; expected 0, 1, 2 or 3");
    auto k = repeat_kv_heads(ctx, p.k, p.q->get_shape().lens()[1]);
    auto kt = ctx.add("transpose", value{{"permutation", to_value(std::vector<std::int64_t>{0, 1, 3, 2})}}, {k});
    auto s = ctx.add("mul", {ctx.add("dot", {p.q, kt}), scalar(ctx, p.type, scale_of(n, p))});
    if (mode == 0) return s;
    if (float cap = softcap_of(n); cap > 0) {
        auto c = scalar(ctx, p.type, cap);
        s = ctx.add("mul", {ctx.add("tanh", {ctx.add("div", {s, c})}), c});
    }
    if (mode == 1) return s;
    auto bias = full_bias(ctx, p, w);
    if (!ctx.is_none(bias)) s = ctx.add("add", {s, bias});
    if (mode == 2) return s;
    auto probs = ctx.add("softmax", value{{"axis", -1}}, {s});
    if (ctx.is_none(bias)) return probs;
    auto top =
        ctx.add("reduce_max", value{{"axes", to_value(std::vector<std::int64_t>{-1})}, {"keepdims", true}}, {bias});
    auto empty = ctx.add("isinf", value{{"detect_positive", false}, {"detect_negative", true}}, {top});
    return ctx.add("where", {empty, scalar(ctx, p.type, 0), probs});
}

bool wants_output(const node_info& n, int i) { return n.proto().output_size() > i && !n.proto().output(i).empty(); }

inputs_t map_attention(const node_info& n, context& ctx, const inputs_t& in) {
    attention_plan p = plan_attention(n, ctx, in);
    key_window w = read_window(n);
    bool three_d = in[0]->get_shape().ndim() == 3;
    auto y = attend(n, ctx, p, w);
    inputs_t outs{three_d ? merge_heads(ctx, y) : y, ctx.none(), ctx.none(), ctx.none()};
    if (wants_output(n, 1)) outs[1] = p.k;
    if (wants_output(n, 2)) outs[2] = p.v;
    if (wants_output(n, 3)) outs[3] = qk_output(n, ctx, p, w);
    return outs;
}
KILN_ONNX_OP("", "Attention", 23, map_attention)

}  // namespace
}  // namespace kiln::onnx_fe
