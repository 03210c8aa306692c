#include "targets/gpu/body_kernel.hpp"

#include <algorithm>
#include <cstdio>

#include "core/error.hpp"
#include "core/eval.hpp"
#include "ops/binary.hpp"
#include "ops/convert.hpp"

namespace kiln::gpu {
namespace {

std::string value_type(dtype t) { return compute_type(t); }

// ONNX Cast of a loaded value `x` to convert's target type, as ops/convert.cpp computes it: the
// fp8 targets round with `saturate`, fp8e8m0 by its round_mode, the packed integers round to
// nearest even and keep their low bits, fp4e2m1 saturates; the rest is the store's rounding.
std::string convert_value(const ops::convert& c, const std::string& x) {
    const std::string d = cat("(double)(", x, ")"), sat = c.saturate ? "true" : "false";
    switch (c.target_type) {
        case dtype::fp8e4m3fn: case dtype::fp8e5m2: case dtype::fp8e4m3fnuz: case dtype::fp8e5m2fnuz:
            return cat("kiln::round_to<", device_type(c.target_type), ">(", d, ", ", sat, ")");
        case dtype::fp8e8m0: {
            int mode = c.round_mode == "up" ? 0 : c.round_mode == "down" ? 1 : c.round_mode == "nearest" ? 2 : -1;
            if (mode < 0) fail("gpu: convert round_mode='", c.round_mode, "'; expected 'up', 'down' or 'nearest'");
            return cat("kiln::round_to_e8m0((float)(", x, "), ", sat, ", ", mode, ")");
        }
        case dtype::int4: case dtype::int2:
            return cat("kiln::wrap_to_bits(", d, ", ", dtype_bits(c.target_type), ", true)");
        case dtype::uint4: case dtype::uint2:
            return cat("(kiln::u64)kiln::wrap_to_bits(", d, ", ", dtype_bits(c.target_type), ", false)");
        case dtype::fp4e2m1: return cat("kiln::e2m1_format::decode(kiln::e2m1_format::encode(", d, ", true))");
        default: return stored_value(c.target_type, x);
    }
}

}  // namespace

std::string double_literal(double v) {
    if (v != v) return "(0.0/0.0)";
    if (v == 1.0 / 0.0) return "(1.0/0.0)";
    if (v == -1.0 / 0.0) return "(-1.0/0.0)";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

std::string scalar_literal(const argument& a) {
    dtype t = a.get_shape().type();
    return cat("(", value_type(t), ")(", is_float(t) ? double_literal(to_doubles(a)[0]) : std::to_string(to_int64s(a)[0]) + "ll", ")");
}

bool divisor_checks::needed(const instruction& b) {
    const operation& op = b.get_operator();
    dtype t = b.get_shape().type();
    if (!is_integral(t)) return false;
    return op.get_if<ops::div>() || op.get_if<ops::mod>() || (op.get_if<ops::pow>() && is_signed(t));   // unsigned: no negative power
}

void divisor_checks::check(const instruction& b, std::vector<std::string>& args) {
    if (b.get_operator().get_if<ops::pow>()) {
        powers_ = true;
        args.at(0) = cat("kiln::checked_power_base(", args.at(0), ", ", args.at(1), ", err, ", position_, ")");
        return;
    }
    std::string message = cat(b.name(), b.get_operator().get_if<ops::div>() ? ": integer division by zero"
                                                                           : ": integer modulus by zero");
    auto it = std::find(messages_.begin(), messages_.end(), message);
    std::size_t k = static_cast<std::size_t>(it - messages_.begin());
    if (it == messages_.end()) messages_.push_back(message);
    args.at(1) = cat("kiln::checked_divisor(", args.at(1), ", err, ", k, "ll, ", position_, ")");
}

void* divisor_checks::slot(lowering_context& ctx, const instruction& ins) const {
    return ctx.error_slot(ins, [messages = messages_](const error_slot& s) {
        if (s.code == static_cast<std::uint32_t>(error_code::zero_to_negative_power))
            return cat("pow: 0 raised to the negative power ", s.value);   // ref's words (ops/binary.cpp)
        return messages.at(static_cast<std::size_t>(s.value));
    });
}

std::string pointwise_value(const instruction& b, std::vector<std::string> args, const std::string& where,
                            divisor_checks& checks) {
    dtype ty = b.get_shape().type();
    if (const auto* c = b.get_operator().get_if<ops::convert>()) return convert_value(*c, args.at(0));
    if (divisor_checks::needed(b)) checks.check(b, args);
    auto e = b.get_operator().scalar_expr(args);
    if (!e) fail("gpu: pointwise op without a scalar expression: ", where);
    // Integer helpers compute in 64 bits; the result wraps to the element type.
    bool round = ty == dtype::float16 || ty == dtype::bfloat16 || (is_integral(ty) && dtype_bits(ty) < 64);
    return round ? stored_value(ty, *e) : *e;
}

std::string stored_value(dtype t, const std::string& expr) {
    return cat("kiln::load(kiln::storer<", device_type(t), ">::from(", expr, "))");
}

shape broadcast_to(const shape& s, const std::vector<std::size_t>& lens) {
    std::vector<std::size_t> strides(lens.size(), 0);
    std::size_t off = lens.size() - s.lens().size();
    for (std::size_t d = 0; d < s.lens().size(); ++d)
        strides[off + d] = s.lens()[d] == 1 && lens[off + d] != 1 ? 0 : s.strides()[d];
    return shape(s.type(), lens, strides);
}

body_operand view_operand(const instruction& b, const body_operand& src) {
    std::vector<shape> in_shapes;
    for (auto i : b.inputs()) in_shapes.push_back(i->get_shape());
    int alias = b.get_operator().output_alias(in_shapes);
    // The view computed over a stand-in pointer gives its strides and offset.
    static std::byte sentinel[1];
    std::vector<argument> args;
    for (std::size_t i = 0; i < b.inputs().size(); ++i)
        args.emplace_back(static_cast<int>(i) == alias ? src.s : in_shapes[i], sentinel, nullptr);
    argument v = b.get_operator().compute(b.get_shape(), args, b.module_inputs());
    return {src.ptr + (v.data() - sentinel), v.get_shape()};
}

std::unordered_map<const instruction*, body_operand> body_params(lowering_context& ctx, const instruction& ins,
                                                                 const module& body) {
    std::unordered_map<const instruction*, body_operand> r;
    auto names = body.parameter_names();
    for (std::size_t i = 0; i < names.size() && i < ins.inputs().size(); ++i) {
        const instruction& in = *ins.inputs()[i];
        r[&*body.get_parameter(names[i])] = {ctx.address(in), ctx.layout(in)};
    }
    return r;
}

void add_body_kernel(lowering_context& ctx, const instruction& ins, const module& body,
                     std::unordered_map<const instruction*, body_operand> known, std::byte* out, const shape& out_shape) {
    elementwise_spec spec;
    spec.output = out_shape;
    std::vector<void*> pointers{out};
    std::unordered_map<const instruction*, std::string> var;
    std::string code;
    auto operand = [&](const instruction* b, const body_operand& o) {
        std::size_t k = spec.inputs.size();
        spec.inputs.push_back(broadcast_to(o.s, out_shape.lens()));
        pointers.push_back(o.ptr);
        var[b] = cat("x", k);
    };
    // A value's variable; operands are loaded on first use.
    auto var_of = [&](const instruction* b) -> const std::string& {
        if (!var.count(b)) operand(b, known.at(b));
        return var.at(b);
    };
    std::size_t n = 0;
    const instruction* result = nullptr;
    divisor_checks checks("i");
    for (const auto& b : body) {
        std::string where = cat(ctx.where(ins), ", body ", describe(body, b));
        if (known.count(&b)) continue;   // loaded where first used
        if (b.is_param()) fail("gpu: body parameter without an input: ", where);
        if (b.is_return()) {
            result = &*b.inputs().at(0);
            continue;
        }
        if (b.is_literal()) {
            const argument& a = b.get_literal().get_argument();
            if (a.get_shape().elements() == 1) {
                var[&b] = scalar_literal(a);
            } else {
                operand(&b, {ctx.upload(a, where), a.get_shape()});
            }
            continue;
        }
        op_traits t = b.get_operator().traits();
        std::vector<shape> in_shapes;
        for (auto i : b.inputs()) in_shapes.push_back(i->get_shape());
        int alias = b.get_operator().output_alias(in_shapes);
        if (alias >= 0) {
            // A view of something the kernel loads: the same memory read through the view's strides.
            auto src = known.find(&*b.inputs()[alias]);
            if (src == known.end()) fail("gpu: a view of a computed value inside a fused region: ", where);
            known[&b] = view_operand(b, src->second);
            continue;
        }
        if (!t.pointwise) fail("gpu: not a pointwise op inside a pointwise region: ", where);
        std::vector<std::string> args;
        for (auto i : b.inputs()) args.push_back(var_of(&*i));
        std::string expr = pointwise_value(b, args, where, checks);
        std::string v = cat("v", n++);
        code += cat("const ", value_type(b.get_shape().type()), " ", v, " = ", expr, ";\n        ");
        var[&b] = v;
    }
    if (!result) fail("gpu: fused region without a result: ", ctx.where(ins));
    code += cat("const auto y = ", var_of(result), ";");
    spec.body = code;
    spec.any_order = !checks.any();   // a check's message names the element by its row-major index
    if (checks.any()) {
        spec.error_slot = true;
        pointers.push_back(checks.slot(ctx, ins));
    }
    auto src = make_elementwise_kernel(spec, ctx.where(ins));
    ctx.add_kernel(ins, std::move(src), elementwise_launch(spec), std::move(pointers));
}

}  // namespace kiln::gpu
