// ai.onnx.preview FlexAttention composed from kiln ops, as its function body does: K and V
// repeated for grouped-query heads, scores = (Q * sqrt(scale)) (K * sqrt(scale))^T, the
// score_mod graph applied in place, softmax over the key axis, the prob_mod graph, then the
// product with V. Scores, softmax and the product run in float32 (float64 for float64 inputs),
// the result converted back to Q's type.
#include <onnx/onnx_pb.h>

#include <cmath>

#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;
using ints = std::vector<std::int64_t>;

instruction_ref to_type(context& ctx, instruction_ref x, dtype t) {
    if (x->get_shape().type() == t) return x;
    return ctx.add("convert", value{{"target_type", std::string(dtype_name(t))}}, {x});
}

// (B, Hkv, S, E) -> (B, Hkv * rep, S, E): query head h reads KV head h / rep.
instruction_ref repeat_heads(context& ctx, instruction_ref x, std::int64_t rep) {
    if (rep == 1) return x;
    const auto& l = x->get_shape().lens();
    auto b = std::int64_t(l[0]), h = std::int64_t(l[1]), s = std::int64_t(l[2]), e = std::int64_t(l[3]);
    auto u = ctx.add("unsqueeze", value{{"axes", to_value(ints{2})}}, {x});
    auto wide = ctx.add("expand", value{{"dims", to_value(ints{b, h, rep, s, e})}}, {u});
    return ctx.add("reshape", value{{"dims", to_value(ints{b, h * rep, s, e})}}, {wide});
}

instruction_ref apply_mod(const node_info& n, context& ctx, const char* attr, instruction_ref x) {
    if (!n.has_attr(attr)) return x;
    auto outs = ctx.inline_graph(n.attr_graph(attr), {x});
    if (outs.size() != 1) fail(attr, " has ", outs.size(), " outputs; expected 1");
    if (outs[0]->get_shape().lens() != x->get_shape().lens() || outs[0]->get_shape().type() != x->get_shape().type())
        fail(attr, " returns ", to_string(outs[0]->get_shape()), "; expected ", to_string(x->get_shape()));
    return outs[0];
}

inputs_t flex_attention(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(3, 3);
    const shape &qs = in.at(0)->get_shape(), &ks = in.at(1)->get_shape(), &vs = in.at(2)->get_shape();
    for (const shape* s : {&qs, &ks, &vs})
        if (s->dynamic() || s->ndim() != 4) fail("Q, K and V must be static 4-D (batch, heads, sequence, head size)");
    std::size_t hq = qs.lens()[1], hkv = ks.lens()[1];
    if (hkv == 0 || hq % hkv != 0 || vs.lens()[1] != hkv)
        fail("Q has ", hq, " heads and K, V ", hkv, " and ", vs.lens()[1],
             "; expected a multiple of one KV head count");
    dtype t = qs.type(), compute = t == dtype::float64 ? dtype::float64 : dtype::float32;
    double scale = n.has_attr("scale") ? n.attr_float("scale", 0) : 1 / std::sqrt(double(qs.lens()[3]));
    auto root = ctx.add_literal(literal(shape(t), std::vector<double>{std::sqrt(scale)}));
    auto k = repeat_heads(ctx, in[1], std::int64_t(hq / hkv));
    auto v = repeat_heads(ctx, in[2], std::int64_t(hq / hkv));
    auto kt = ctx.add("transpose", value{{"permutation", to_value(ints{0, 1, 3, 2})}}, {ctx.add("mul", {k, root})});
    auto scores = to_type(ctx, ctx.add("dot", {ctx.add("mul", {in[0], root}), kt}), compute);
    scores = apply_mod(n, ctx, "score_mod", scores);
    auto probs = apply_mod(n, ctx, "prob_mod", ctx.add("softmax", value{{"axis", 3}}, {scores}));
    return {to_type(ctx, ctx.add("dot", {probs, to_type(ctx, v, compute)}), t)};
}
KILN_ONNX_OP("ai.onnx.preview", "FlexAttention", 1, flex_attention)

}  // namespace
}  // namespace kiln::onnx_fe
