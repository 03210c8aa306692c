// label_encoder over numbers (integer or float keys and values; over strings it is a host step,
// host_steps.cpp): one elementwise kernel whose body compares each element with the keys in
// order, as literals, and takes the first match's value or the default, as ref's lookup does
// (ops/label_encoder.cpp: the first of equal keys wins; float keys match by value, NaN matching
// NaN and -0 matching 0).
#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/value.hpp"
#include "ops/label_encoder.hpp"
#include "targets/gpu/lowering.hpp"

namespace kiln::gpu {
namespace {

// A double as CUDA source that reads back to the same value (NaN and infinities by their bits).
std::string double_literal(double v) {
    if (!std::isfinite(v))
        return cat("__longlong_as_double(", static_cast<long long>(std::bit_cast<std::uint64_t>(v)), "ll)");
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

std::string int_literal(std::int64_t v) {
    if (v == INT64_MIN) return "(-9223372036854775807ll - 1)";
    return cat("(", v, "ll)");
}

// The value (or default) of `type` as a literal; float32 values rounded to float as ref stores them.
std::string value_literal(const value& v, dtype type) {
    if (type == dtype::float32) return double_literal(static_cast<float>(v.as_float()));
    if (type == dtype::float64) return double_literal(v.as_float());
    return int_literal(v.as_int());
}

// Whether x0 equals key `k` of `type` (the keys' type, which is x's).
std::string key_match(const value& k, dtype type) {
    if (type == dtype::float32 || type == dtype::float64) {
        double d = type == dtype::float32 ? static_cast<double>(static_cast<float>(k.as_float())) : k.as_float();
        if (std::isnan(d)) return "x0 != x0";
        return cat("x0 == ", double_literal(d));
    }
    return cat("x0 == ", int_literal(k.as_int()));
}

void lower_label_encoder(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::label_encoder>();
    const auto& keys = op.keys.as_array();
    const auto& values = op.values.as_array();
    elementwise_spec spec;
    spec.inputs = {ins.inputs()[0]->get_shape()};
    spec.output = ins.get_shape();
    spec.body = cat(compute_type(op.value_type), " y = ", value_literal(op.default_value, op.value_type), ";\n");
    for (std::size_t i = 0; i < keys.size(); ++i)
        spec.body += cat(i ? "else " : "", "if (", key_match(keys[i], op.key_type), ") y = ", value_literal(values[i], op.value_type),
                         ";\n");
    ctx.add_kernel(ins, make_elementwise_kernel(spec, ctx.where(ins)), elementwise_launch(spec.output.elements()),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0])});
}

const gpu_lowering_registrar label_encoder_lowering{{
    "label_encoder over numbers (one generated elementwise kernel, the keys as literals)",
    [](const instruction& ins) {
        const auto* op = ins.get_operator().get_if<ops::label_encoder>();
        return op && op->key_type != dtype::string && op->value_type != dtype::string &&
               ins.get_shape().standard();
    },
    lower_label_encoder,
}};

}  // namespace
}  // namespace kiln::gpu
