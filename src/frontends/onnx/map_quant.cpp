// ONNX quantization: QuantizeLinear and DequantizeLinear onto kiln's quantizelinear and
// dequantizelinear; DynamicQuantizeLinear as its ONNX function body; QLinearConv and
// QLinearMatMul as dequantize -> convolution/dot -> quantize in float64, which holds the
// dequantized values exactly, so the result is the spec's real-number formula rounded once
// (targets fuse the pattern into integer kernels).
#include "core/error.hpp"
#include "frontends/onnx/nn_common.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

value type_attr(dtype t) { return value(std::string(dtype_name(t))); }

instruction_ref convert(context& ctx, instruction_ref v, dtype t) {
    if (v->get_shape().type() == t) return v;
    return ctx.add("convert", value{{"target_type", type_attr(t)}}, {v});
}

// Opset 10 scales are per tensor; `axis` came with opset 13.
void check_opset10_scale(const node_info& n, instruction_ref scale) {
    if (n.opset() < 13 && scale->get_shape().elements() != 1)
        fail("input 1 (scale) has ", scale->get_shape().elements(), " values; per-axis scales need opset 13");
}

// The output type: output_dtype (opset 21), else the zero point's type, else uint8.
dtype quantized_type(const node_info& n, context& ctx, const inputs_t& in) {
    std::int64_t code = n.attr_int("output_dtype", 0);
    if (!present(ctx, in, 2)) return code ? onnx_dtype(static_cast<int>(code)) : dtype::uint8;
    dtype zp = in[2]->get_shape().type();
    if (code && onnx_dtype(static_cast<int>(code)) != zp)
        fail("attribute output_dtype (", dtype_name(onnx_dtype(static_cast<int>(code))), ") differs from input 2 (",
             "y_zero_point)'s type ", dtype_name(zp));
    return zp;
}

// The division happens in the scale's type unless `precision` (opset 23) names another: then x
// and the scale are both converted to it first.
inputs_t map_quantize(const node_info& n, context& ctx, const inputs_t& in) {
    check_opset10_scale(n, in.at(1));
    instruction_ref x = in[0], scale = in[1];
    if (std::int64_t p = n.attr_int("precision", 0)) {
        dtype t = onnx_dtype(static_cast<int>(p));
        x = convert(ctx, x, t);
        scale = convert(ctx, scale, t);
    }
    inputs_t args{x, scale};
    if (present(ctx, in, 2)) args.push_back(in[2]);
    return {ctx.add("quantizelinear",
                    value{{"axis", n.attr_int("axis", 1)},
                          {"block_size", n.attr_int("block_size", 0)},
                          {"target_type", type_attr(quantized_type(n, ctx, in))},
                          {"saturate", n.attr_int("saturate", 1) != 0}},
                    args)};
}
KILN_ONNX_OP("", "QuantizeLinear", 10, map_quantize)

// The output (and product) type is the scale's unless output_dtype (opset 23) names another: the
// scale is converted to it first.
inputs_t map_dequantize(const node_info& n, context& ctx, const inputs_t& in) {
    check_opset10_scale(n, in.at(1));
    instruction_ref scale = in[1];
    if (std::int64_t t = n.attr_int("output_dtype", 0)) scale = convert(ctx, scale, onnx_dtype(static_cast<int>(t)));
    inputs_t args{in[0], scale};
    if (present(ctx, in, 2)) args.push_back(in[2]);
    return {ctx.add("dequantizelinear",
                    value{{"axis", n.attr_int("axis", 1)}, {"block_size", n.attr_int("block_size", 0)}}, args)};
}
KILN_ONNX_OP("", "DequantizeLinear", 10, map_dequantize)

instruction_ref float_scalar(context& ctx, double v) {
    return ctx.add_literal(literal(shape(dtype::float32), std::vector<double>{v}));
}

// ONNX's function body: the range of x widened to hold 0 maps onto [0, 255]. An all-zero x gives
// scale 0 and zero point 0 (0 / 0 casts to 0), as the body does.
inputs_t map_dynamic_quantize(const node_info&, context& ctx, const inputs_t& in) {
    instruction_ref x = in.at(0);
    if (x->get_shape().type() != dtype::float32)
        fail("input 0 is ", dtype_name(x->get_shape().type()), "; expected float_type");
    value all{{"axes", value(value_array{})}, {"keepdims", false}};
    auto zero = float_scalar(ctx, 0), qmax = float_scalar(ctx, 255);
    auto lo = ctx.add("min", {ctx.add("reduce_min", all, {x}), zero});
    auto hi = ctx.add("max", {ctx.add("reduce_max", all, {x}), zero});
    auto scale = ctx.add("div", {ctx.add("sub", {hi, lo}), qmax});
    auto zp_fp = ctx.add("sub", {zero, ctx.add("div", {lo, scale})});
    auto zp = convert(ctx, ctx.add("round", {ctx.add("clip", {zp_fp, zero, qmax})}), dtype::uint8);
    auto y = ctx.add("quantizelinear", value{{"target_type", type_attr(dtype::uint8)}}, {x, scale, zp});
    return {y, scale, zp};
}
KILN_ONNX_OP("", "DynamicQuantizeLinear", 11, map_dynamic_quantize)

// dequantizelinear in float64 of in[v] with scale in[s] and zero point in[s + 1], the scale
// mapped onto v by `attrs` (axis, block_size).
instruction_ref dequantize_f64(context& ctx, const inputs_t& in, std::size_t v, std::size_t s, value attrs) {
    inputs_t args{in.at(v), convert(ctx, in.at(s), dtype::float64)};
    if (present(ctx, in, s + 1)) args.push_back(in[s + 1]);
    return ctx.add("dequantizelinear", std::move(attrs), args);
}

// quantizelinear of the float64 y with the per-tensor scale in[s] and zero point in[s + 1]; without
// a zero point the output takes `fallback`'s type.
instruction_ref quantize_output(context& ctx, instruction_ref y, const inputs_t& in, std::size_t s, dtype fallback) {
    if (in.at(s)->get_shape().elements() != 1)
        fail("input ", s, " (y_scale) has ", in[s]->get_shape().elements(), " values; expected one (per tensor)");
    inputs_t args{y, convert(ctx, in[s], dtype::float64)};
    if (present(ctx, in, s + 1)) args.push_back(in[s + 1]);
    dtype t = present(ctx, in, s + 1) ? in[s + 1]->get_shape().type() : fallback;
    return ctx.add("quantizelinear", value{{"target_type", type_attr(t)}}, args);
}

// Inputs x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, B]. w's scale is per tensor or per
// output channel (dim 0); B is int32 with scale x_scale * w_scale and zero point 0.
inputs_t map_qlinear_conv(const node_info& n, context& ctx, const inputs_t& in) {
    const shape& xs = in.at(0)->get_shape();
    const shape& ws = in.at(3)->get_shape();
    if (xs.ndim() < 3) fail("input 0 has ", xs.ndim(), " dims; expected [N, C, spatial...] (at least 3)");
    if (ws.ndim() != xs.ndim() || ws.dynamic())
        fail("input 3 (w) has ", ws.ndim(), " dims; expected ", xs.ndim(), " static dims like input 0");
    window_attrs w = read_window(n, xs.ndim() - 2, {ws.lens().begin() + 2, ws.lens().end()});
    apply_auto_pad(w, xs);
    auto x = dequantize_f64(ctx, in, 0, 1, value());
    auto k = dequantize_f64(ctx, in, 3, 4, value{{"axis", 0}});
    auto y = ctx.add("convolution",
                     value{{"padding", to_value(w.pads)},
                           {"stride", to_value(w.strides)},
                           {"dilation", to_value(w.dilations)},
                           {"group", n.attr_int("group", 1)}},
                     {x, k});
    if (present(ctx, in, 8)) {
        auto bias_scale = ctx.add("mul", {convert(ctx, in[1], dtype::float64), convert(ctx, in[4], dtype::float64)});
        auto b = ctx.add("dequantizelinear", value{{"axis", 0}}, {in[8], bias_scale});
        std::vector<std::int64_t> axes;  // [M] -> [M, 1, ...] against [N, M, spatial...]
        for (std::size_t d = 1; d + 1 < xs.ndim(); ++d) axes.push_back(static_cast<std::int64_t>(d));
        y = ctx.add("add", {y, ctx.add("unsqueeze", value{{"axes", to_value(axes)}}, {b})});
    }
    return {quantize_output(ctx, y, in, 6, xs.type())};
}
KILN_ONNX_OP("", "QLinearConv", 10, map_qlinear_conv)

// How a QLinearMatMul scale lies on its operand v: one value per tensor; a 1-D scale per row of a
// (dim -2) or per column of b (dim -1); an N-D scale is v's shape with the K dim (-1 for a, -2
// for b) reduced to 1, which is blocked quantization with one block along K.
value matmul_scale_attrs(instruction_ref v, instruction_ref scale, bool is_a) {
    const shape& s = scale->get_shape();
    std::size_t r = v->get_shape().ndim();
    if (s.elements() == 1 || r < 2) return value();
    std::int64_t axis = static_cast<std::int64_t>(r) - (is_a ? 2 : 1);
    if (s.ndim() <= 1) return value{{"axis", axis}};
    std::int64_t k_axis = static_cast<std::int64_t>(r) - (is_a ? 1 : 2);
    auto k = static_cast<std::int64_t>(v->get_shape().lens().at(k_axis));
    return value{{"axis", k_axis}, {"block_size", k}};
}

// Inputs a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp.
inputs_t map_qlinear_matmul(const node_info&, context& ctx, const inputs_t& in) {
    auto a = dequantize_f64(ctx, in, 0, 1, matmul_scale_attrs(in.at(0), in.at(1), true));
    auto b = dequantize_f64(ctx, in, 3, 4, matmul_scale_attrs(in.at(3), in.at(4), false));
    return {quantize_output(ctx, ctx.add("dot", {a, b}), in, 6, in[0]->get_shape().type())};
}
KILN_ONNX_OP("", "QLinearMatMul", 10, map_qlinear_matmul)

}  // namespace
}  // namespace kiln::onnx_fe
