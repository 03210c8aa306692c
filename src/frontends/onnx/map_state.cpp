// ONNX ops of stateful decoding: CausalConvWithState composed from concat, a depthwise
// convolution and a slice; TensorScatter (a KV cache update) onto kiln's tensor_scatter;
// LinearAttention onto kiln's linear_attention.
#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;
using ints = std::vector<std::int64_t>;

bool present(const node_info& n, const inputs_t& in, std::size_t i) { return i < in.size() && n.has_input(i); }

instruction_ref zeros(context& ctx, dtype t, const std::vector<std::size_t>& lens) {
    shape s(t, lens);
    return ctx.add_literal(literal(s, std::vector<double>(s.elements(), 0.0)));
}

// padded = [past_state (or zeros), input] along the length; output = depthwise conv of padded
// (+ bias, then SiLU when asked); present_state = the last k - 1 positions of padded.
inputs_t causal_conv_with_state(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(2, 4);
    const shape& xs = in.at(0)->get_shape();
    const shape& ws = in.at(1)->get_shape();
    if (xs.dynamic() || xs.ndim() != 3)
        fail("input is ", to_string(xs), "; expected a static (batch, channels, length)");
    if (ws.dynamic() || ws.ndim() != 3 || ws.lens()[0] != xs.lens()[1] || ws.lens()[1] != 1 || ws.lens()[2] == 0)
        fail("weight is ", to_string(ws), "; expected (", xs.lens()[1], ", 1, k) with k >= 1");
    std::string activation = n.attr_string("activation", "none");
    if (activation != "none" && activation != "silu" && activation != "swish")
        fail("activation='", activation, "'; expected 'none', 'silu' or 'swish'");
    std::size_t b = xs.lens()[0], c = xs.lens()[1], l = xs.lens()[2], k = ws.lens()[2];
    instruction_ref state = present(n, in, 3) ? in[3] : zeros(ctx, xs.type(), {b, c, k - 1});
    if (state->get_shape().lens() != std::vector<std::size_t>{b, c, k - 1})
        fail("past_state is ", to_string(state->get_shape()), "; expected {", b, ", ", c, ", ", k - 1, "}");
    auto padded = k == 1 ? in[0] : ctx.add("concat", value{{"axis", 2}}, {state, in[0]});
    auto y = ctx.add("convolution",
                     value{{"padding", to_value(ints{0, 0})},
                           {"stride", to_value(ints{1})},
                           {"dilation", to_value(ints{1})},
                           {"group", static_cast<std::int64_t>(c)}},
                     {padded, in[1]});
    if (present(n, in, 2)) y = ctx.add("add", {y, ctx.add("unsqueeze", value{{"axes", to_value(ints{1})}}, {in[2]})});
    if (activation != "none") y = ctx.add("silu", {y});
    auto total = static_cast<std::int64_t>(l + k - 1);
    auto present_state = ctx.add("slice",
                                 value{{"axes", to_value(ints{2})},
                                       {"starts", to_value(ints{total - static_cast<std::int64_t>(k - 1)})},
                                       {"ends", to_value(ints{total})}},
                                 {padded});
    return {y, present_state};
}
KILN_ONNX_OP("", "CausalConvWithState", 27, causal_conv_with_state)

inputs_t tensor_scatter(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(2, 3);
    value attrs{{"axis", n.attr_int("axis", -2)}, {"mode", n.attr_string("mode", "linear")}};
    inputs_t args{in.at(0), in.at(1)};
    if (present(n, in, 2)) args.push_back(in[2]);
    return {ctx.add("tensor_scatter", attrs, args)};
}
KILN_ONNX_OP("", "TensorScatter", 24, tensor_scatter)

// kiln's linear_attention takes the state always (zeros when the model gives none, in the
// query's type, as the spec's reference does) and the decay and beta its update rule reads.
inputs_t linear_attention(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(3, 6);
    std::string rule = n.attr_string("update_rule", "gated_delta");
    bool gated = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
    if (!gated && !delta && rule != "linear")
        fail("update_rule='", rule, "'; expected 'linear', 'gated', 'delta' or 'gated_delta'");
    if (gated != present(n, in, 4)) fail("update_rule='", rule, "' ", gated ? "needs" : "takes no", " input 4 (decay)");
    if (delta != present(n, in, 5)) fail("update_rule='", rule, "' ", delta ? "needs" : "takes no", " input 5 (beta)");
    if (!n.has_attr("q_num_heads") || !n.has_attr("kv_num_heads"))
        fail("the attributes q_num_heads and kv_num_heads are required");
    std::int64_t hq = n.attr_int("q_num_heads", 0), hkv = n.attr_int("kv_num_heads", 0);
    const shape& q = in.at(0)->get_shape();
    const shape& v = in.at(2)->get_shape();
    if (q.dynamic() || v.dynamic() || q.ndim() != 3 || v.ndim() != 3 || hq <= 0 || hkv <= 0)
        fail("query ", to_string(q), " and value ", to_string(v),
             " must be static (B, T, heads * dim) with positive q_num_heads and kv_num_heads");
    instruction_ref state =
        present(n, in, 3)
            ? in[3]
            : zeros(ctx, q.type(),
                    {q.lens()[0], std::size_t(hkv), q.lens()[2] / std::size_t(hq), v.lens()[2] / std::size_t(hkv)});
    inputs_t args{in[0], in.at(1), in[2], state};
    if (gated) args.push_back(in[4]);
    if (delta) args.push_back(in[5]);
    auto r = ctx.add(
        "linear_attention",
        value{
            {"q_num_heads", hq}, {"kv_num_heads", hkv}, {"scale", n.attr_float("scale", 0.0f)}, {"update_rule", rule}},
        args);
    return {ctx.add("get_tuple_elem", value{{"index", 0}}, {r}), ctx.add("get_tuple_elem", value{{"index", 1}}, {r})};
}
KILN_ONNX_OP("", "LinearAttention", 27, linear_attention)

}  // namespace
}  // namespace kiln::onnx_fe
