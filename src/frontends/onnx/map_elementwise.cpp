// ONNX elementwise ops: unary math, binary arithmetic and comparisons (numpy broadcasting is
// native in kiln's ops), variadic Sum/Mean/Max/Min, Where, Clip, Cast (Cast and Equal on strings
// map to the string ops).
#include <cctype>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

// A mapping that applies one kiln op to all the node's inputs.
op_mapping direct(std::string op) {
    return [op](const node_info&, context& ctx, const inputs_t& in) -> inputs_t { return {ctx.add(op, in)}; };
}

KILN_ONNX_OP("", "Abs", 1, direct("abs"))
KILN_ONNX_OP("", "Neg", 1, direct("neg"))
KILN_ONNX_OP("", "Ceil", 1, direct("ceil"))
KILN_ONNX_OP("", "Floor", 1, direct("floor"))
KILN_ONNX_OP("", "Round", 11, direct("round"))
KILN_ONNX_OP("", "Sqrt", 1, direct("sqrt"))
KILN_ONNX_OP("", "Reciprocal", 1, direct("recip"))
KILN_ONNX_OP("", "Exp", 1, direct("exp"))
KILN_ONNX_OP("", "Log", 1, direct("log"))
KILN_ONNX_OP("", "Sin", 7, direct("sin"))
KILN_ONNX_OP("", "Cos", 7, direct("cos"))
KILN_ONNX_OP("", "Tan", 7, direct("tan"))
KILN_ONNX_OP("", "Asin", 7, direct("asin"))
KILN_ONNX_OP("", "Acos", 7, direct("acos"))
KILN_ONNX_OP("", "Atan", 7, direct("atan"))
KILN_ONNX_OP("", "Sinh", 9, direct("sinh"))
KILN_ONNX_OP("", "Cosh", 9, direct("cosh"))
KILN_ONNX_OP("", "Tanh", 1, direct("tanh"))
KILN_ONNX_OP("", "Asinh", 9, direct("asinh"))
KILN_ONNX_OP("", "Acosh", 9, direct("acosh"))
KILN_ONNX_OP("", "Atanh", 9, direct("atanh"))
KILN_ONNX_OP("", "Erf", 9, direct("erf"))
KILN_ONNX_OP("", "Sigmoid", 1, direct("sigmoid"))
KILN_ONNX_OP("", "Softsign", 1, direct("softsign"))
KILN_ONNX_OP("", "Softplus", 1, direct("softplus"))
KILN_ONNX_OP("", "Mish", 18, direct("mish"))
KILN_ONNX_OP("", "HardSwish", 14, direct("hard_swish"))
KILN_ONNX_OP("", "Sign", 9, direct("sign"))
KILN_ONNX_OP("", "Relu", 1, direct("relu"))
KILN_ONNX_OP("", "IsNaN", 9, direct("isnan"))
KILN_ONNX_OP("", "Not", 1, direct("logical_not"))
KILN_ONNX_OP("", "BitwiseNot", 18, direct("bitwise_not"))

KILN_ONNX_OP("", "Add", 1, direct("add"))
KILN_ONNX_OP("", "Sub", 1, direct("sub"))
KILN_ONNX_OP("", "Mul", 1, direct("mul"))
KILN_ONNX_OP("", "Div", 1, direct("div"))
inputs_t equal_op(const node_info&, context& ctx, const inputs_t& in) {
    bool strings = !in.empty() && in[0]->get_shape().type() == dtype::string;
    return {ctx.add(strings ? "string_equal" : "equal", in)};
}
KILN_ONNX_OP("", "Equal", 1, equal_op)
KILN_ONNX_OP("", "Greater", 1, direct("greater"))
KILN_ONNX_OP("", "Less", 1, direct("less"))
KILN_ONNX_OP("", "GreaterOrEqual", 12, direct("greater_or_equal"))
KILN_ONNX_OP("", "LessOrEqual", 12, direct("less_or_equal"))
KILN_ONNX_OP("", "And", 1, direct("logical_and"))
KILN_ONNX_OP("", "Or", 1, direct("logical_or"))
KILN_ONNX_OP("", "Xor", 1, direct("logical_xor"))
KILN_ONNX_OP("", "BitwiseAnd", 18, direct("bitwise_and"))
KILN_ONNX_OP("", "BitwiseOr", 18, direct("bitwise_or"))
KILN_ONNX_OP("", "BitwiseXor", 18, direct("bitwise_xor"))
KILN_ONNX_OP("", "PRelu", 1, direct("prelu"))
KILN_ONNX_OP("", "Where", 9, direct("where"))

// One attribute copied from the ONNX node with ONNX's default.
op_mapping with_float(std::string op, std::string attr, float def) {
    return [=](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
        return {ctx.add(op, value{{attr, n.attr_float(attr, def)}}, in)};
    };
}
KILN_ONNX_OP("", "LeakyRelu", 1, with_float("leaky_relu", "alpha", 0.01f))
KILN_ONNX_OP("", "Elu", 1, with_float("elu", "alpha", 1.0f))
KILN_ONNX_OP("", "Celu", 12, with_float("celu", "alpha", 1.0f))
KILN_ONNX_OP("", "ThresholdedRelu", 10, with_float("thresholded_relu", "alpha", 1.0f))

KILN_ONNX_OP("", "Selu", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("selu", value{{"alpha", n.attr_float("alpha", 1.67326319217681884765625f)},
                                  {"gamma", n.attr_float("gamma", 1.05070102214813232421875f)}}, in)};
})
KILN_ONNX_OP("", "HardSigmoid", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("hard_sigmoid", value{{"alpha", n.attr_float("alpha", 0.2f)}, {"beta", n.attr_float("beta", 0.5f)}}, in)};
})
KILN_ONNX_OP("", "Gelu", 20, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("gelu", value{{"approximate", n.attr_string("approximate", "none")}}, in)};
})
KILN_ONNX_OP("", "IsInf", 10, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("isinf", value{{"detect_positive", n.attr_int("detect_positive", 1) != 0},
                                   {"detect_negative", n.attr_int("detect_negative", 1) != 0}}, in)};
})
KILN_ONNX_OP("", "BitShift", 11, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    std::string d = n.attr_string("direction", "");
    for (char& c : d) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));   // ONNX: "LEFT"/"RIGHT"
    return {ctx.add("bitshift", value{{"direction", d}}, in)};
})
KILN_ONNX_OP("", "Mod", 10, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("mod", value{{"fmod", n.attr_int("fmod", 0) != 0}}, in)};
})

// ONNX Pow allows an exponent of another type; kiln's pow takes one type.
KILN_ONNX_OP("", "Pow", 1, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    instruction_ref e = in.at(1);
    dtype t = in.at(0)->get_shape().type();
    if (e->get_shape().type() != t) e = ctx.add("convert", value{{"target_type", std::string(dtype_name(t))}}, {e});
    return {ctx.add("pow", {in[0], e})};
})

// Variadic ops fold left into binary ops.
op_mapping variadic(std::string op, bool mean) {
    return [=](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
        if (in.empty()) fail("needs at least one input");
        instruction_ref acc = in[0];
        for (std::size_t i = 1; i < in.size(); ++i) acc = ctx.add(op, {acc, in[i]});
        if (mean && in.size() > 1) {
            shape s(acc->get_shape().type());
            std::vector<double> n{static_cast<double>(in.size())};
            acc = ctx.add("div", {acc, ctx.add_literal(literal(s, n))});
        }
        return {acc};
    };
}
KILN_ONNX_OP("", "Sum", 1, variadic("add", false))
KILN_ONNX_OP("", "Mean", 1, variadic("add", true))
KILN_ONNX_OP("", "Max", 1, variadic("max", false))
KILN_ONNX_OP("", "Min", 1, variadic("min", false))

// A scalar literal of type t holding v.
instruction_ref scalar(context& ctx, dtype t, double v) {
    std::vector<double> d{v};
    return ctx.add_literal(literal(shape(t), d));
}

// Clip: before opset 11 min/max are attributes; from 11 optional inputs. An absent bound is
// the type's lowest/highest value.
KILN_ONNX_OP("", "Clip", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    dtype t = in.at(0)->get_shape().type();
    auto lo = scalar(ctx, t, n.attr_float("min", std::numeric_limits<float>::lowest()));
    auto hi = scalar(ctx, t, n.attr_float("max", std::numeric_limits<float>::max()));
    return {ctx.add("clip", {in[0], lo, hi})};
})
KILN_ONNX_OP("", "Clip", 11, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    dtype t = in.at(0)->get_shape().type();
    bool is_f = is_float(t);
    auto bound = [&](std::size_t i, bool low) {
        if (i < in.size() && !ctx.is_none(in[i])) return in[i];
        if (!is_f) {
            // Integer bounds: the type's own range, exactly.
            auto all = to_int64s(from_doubles(shape(t), std::vector<double>{low ? -1e300 : 1e300}));
            return ctx.add_literal(literal(shape(t), std::vector<std::int64_t>{all[0]}));
        }
        return scalar(ctx, t, low ? -INFINITY : INFINITY);
    };
    return {ctx.add("clip", {in[0], bound(1, true), bound(2, false)})};
})

// round_mode (opset 24) only matters for the fp8e8m0 target.
value cast_attrs(const node_info& n, dtype to) {
    value a{{"target_type", std::string(dtype_name(to))}, {"saturate", n.attr_int("saturate", 1) != 0}};
    if (n.has_attr("round_mode")) a.set("round_mode", n.attr_string("round_mode", "up"));
    return a;
}

// Casts to and from strings are string_convert (its rules are in ops/strings.cpp).
instruction_ref cast_to(const node_info& n, context& ctx, instruction_ref x, dtype to) {
    dtype from = x->get_shape().type();
    if (from == dtype::string && to == dtype::string) return x;
    if (from == dtype::string || to == dtype::string)
        return ctx.add("string_convert", value{{"target_type", std::string(dtype_name(to))}}, {x});
    return ctx.add("convert", cast_attrs(n, to), {x});
}

KILN_ONNX_OP("", "Cast", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {cast_to(n, ctx, in.at(0), onnx_dtype(static_cast<int>(n.attr_int("to", 0))))};
})
KILN_ONNX_OP("", "CastLike", 15, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {cast_to(n, ctx, in.at(0), in.at(1)->get_shape().type())};
})

}  // namespace
}  // namespace kiln::onnx_fe
