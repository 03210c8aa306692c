// ONNX math ops: Shrink composed from elementwise ops (kiln has no op of its own for it), Swish
// onto kiln's silu, SwiGLU as silu times the value input, and Det onto kiln's det.
#include "core/error.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

instruction_ref scalar(context& ctx, dtype t, double v) {
    return ctx.add_literal(literal(shape(t), std::vector<double>{v}));
}

instruction_ref convert(context& ctx, instruction_ref x, dtype t) {
    if (x->get_shape().type() == t) return x;
    return ctx.add("convert", value{{"target_type", std::string(dtype_name(t))}}, {x});
}

// y = x + bias where x < -lambd, x - bias where x > lambd, else 0. Integer inputs compute in
// double and truncate back, as ONNX's reference does (lambd and bias are floats).
inputs_t shrink(const node_info& n, context& ctx, const inputs_t& in) {
    dtype t = in.at(0)->get_shape().type();
    dtype c = is_float(t) ? t : dtype::float64;
    auto x = convert(ctx, in[0], c);
    double lambd = n.attr_float("lambd", 0.5f), bias = n.attr_float("bias", 0.0f);
    auto b = scalar(ctx, c, bias);
    auto low = ctx.add("less", {x, scalar(ctx, c, -lambd)});
    auto high = ctx.add("greater", {x, scalar(ctx, c, lambd)});
    auto inner = ctx.add("where", {high, ctx.add("sub", {x, b}), scalar(ctx, c, 0)});
    return {convert(ctx, ctx.add("where", {low, ctx.add("add", {x, b}), inner}), t)};
}
KILN_ONNX_OP("", "Shrink", 9, shrink)

// y = x * sigmoid(alpha * x).
inputs_t swish(const node_info& n, context& ctx, const inputs_t& in) {
    return {ctx.add("silu", value{{"beta", n.attr_float("alpha", 1.0f)}}, {in.at(0)})};
}
KILN_ONNX_OP("", "Swish", 24, swish)

// Y = Swish_alpha(A) * B; A and B have the same shape (no broadcasting, as the spec says).
inputs_t swiglu(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(2, 2);
    if (in.at(0)->get_shape().lens() != in.at(1)->get_shape().lens())
        fail("inputs A ", to_string(in[0]->get_shape()), " and B ", to_string(in[1]->get_shape()),
             " must have the same shape (SwiGLU does not broadcast)");
    auto gate = ctx.add("silu", value{{"beta", n.attr_float("alpha", 1.0f)}}, {in[0]});
    return {ctx.add("mul", {gate, in[1]})};
}
KILN_ONNX_OP("", "SwiGLU", 28, swiglu)

inputs_t det(const node_info&, context& ctx, const inputs_t& in) { return {ctx.add("det", {in.at(0)})}; }
KILN_ONNX_OP("", "Det", 11, det)

}  // namespace
}  // namespace kiln::onnx_fe
