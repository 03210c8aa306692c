// Layer norm and RMS norm as exporters write them out (opsets before LayerNormalization and
// RMSNormalization, or models that spell them by hand):
//   d = x - mean(x);  d / sqrt(mean(d^2) + eps)  [* scale]  [+ bias]     -> layernorm
//   x / sqrt(mean(x^2) + eps)  [* scale]                                 -> rms_norm
// d^2 may be pow(d, 2), d * d or sqdiff(x, mean(x)); "/ sqrt" may be "* rsqrt" or "* recip(sqrt)". The core becomes
// the op with scale 1, then separate rules take the scale and the bias into it, so every variant
// with or without them is covered. The means must reduce the same trailing axes (the ops
// normalize over axis..end), keeping dims.
#include "passes/recognize/recognize_rules.hpp"

namespace kiln {
namespace {

using namespace recognize;
using match::any;
using match::op;

match::pattern square(const match::pattern& p) {
    return match::any_of({op("pow", p, match::scalar(2.0)), op("mul", p, p)}).bind("sq");
}

// n / sqrt(var + eps), n * rsqrt(var + eps), n * recip(sqrt(var + eps)).
match::pattern divided_by_std(const match::pattern& n, const match::pattern& var) {
    auto veps = op("add", var, match::constant("eps")).bind("veps");
    return match::any_of({op("div", n, op("sqrt", veps).bind("den")), op("mul", n, op("rsqrt", veps).bind("den")),
                          op("mul", n, op("recip", op("sqrt", veps).bind("den2")).bind("den"))});
}

// The first normalized axis when `axes` are the trailing axes of a rank-`rank` tensor.
std::optional<std::int64_t> trailing_axis(const std::vector<std::int64_t>& axes, std::size_t rank) {
    auto first = static_cast<std::int64_t>(rank) - static_cast<std::int64_t>(axes.size());
    for (std::size_t i = 0; i < axes.size(); ++i)
        if (axes[i] != first + static_cast<std::int64_t>(i)) return std::nullopt;
    return first;
}

// Replaces the root by `op_name`(x, 1) over the means' axes, when the means agree and the
// intermediates are the pattern's own.
bool replace_core(rewriter& r, const bindings& b, const char* op_name, std::initializer_list<const char*> means,
                  std::initializer_list<const char*> inner) {
    auto x = b["x"];
    const shape& xs = x->get_shape();
    auto eps = scalar_value(b["eps"]);
    if (!same_dims(xs, r.root()->get_shape()) || !is_float(xs.type()) || !eps || *eps < 0) return false;
    std::optional<std::vector<std::int64_t>> axes;
    for (auto name : means) {
        auto a = kept_reduce_axes(b[name]);
        if (!a || (axes && *a != *axes)) return false;
        axes = a;
    }
    auto axis = trailing_axis(*axes, xs.ndim());
    if (!axis || !used_only_within(bound(b, inner), r.root())) return false;
    r.replace(
        r.add(op_name, {x, r.add_scalar(xs.type(), 1)}, {{"axis", *axis}, {"epsilon", static_cast<float>(*eps)}}));
    return true;
}

// d / sqrt(mean(d^2) + eps), d = x - mean(x) -> layernorm(x, 1)
rule layernorm_core() {
    auto mean = op("reduce_mean", any("x")).bind("mean");
    auto d = op("sub", any("x"), mean).bind("d");
    auto d2 = match::any_of({square(d), op("sqdiff", any("x"), mean).bind("sq")});
    return {
        "layernorm", divided_by_std(d, op("reduce_mean", d2).bind("var")), [](rewriter& r, const bindings& b) {
            return replace_core(r, b, "layernorm", {"mean", "var"}, {"mean", "d", "sq", "var", "veps", "den", "den2"});
        }};
}

// x / sqrt(mean(x^2) + eps) -> rms_norm(x, 1)
rule rms_norm_core() {
    return {"rms_norm", divided_by_std(any("x"), op("reduce_mean", square(any("x"))).bind("var")),
            [](rewriter& r, const bindings& b) {
                return replace_core(r, b, "rms_norm", {"var"}, {"sq", "var", "veps", "den", "den2"});
            }};
}

// A norm's shape is x's, so y (an extra scale or bias) must broadcast to it one way: the binary
// op's result has the norm's shape and type.
bool broadcasts_into(rewriter& r, const bindings& b) {
    return b["y"] != b["norm"] && same_dims(r.root()->get_shape(), b["norm"]->get_shape());
}

// norm(x, 1) * y -> norm(x, y), for layernorm without bias and rms_norm
rule scale_into(const char* norm) {
    return {std::string(norm) + "_scale",
            op("mul", op(norm, any("x"), match::scalar(1.0)).bind("norm").used_once(), any("y")),
            [](rewriter& r, const bindings& b) {
                if (!broadcasts_into(r, b)) return false;
                r.replace(r.add(b["norm"]->get_operator(), {b["x"], b["y"]}));
                return true;
            }};
}

// layernorm(x, s) + y -> layernorm(x, s, y)
rule layernorm_bias() {
    return {"layernorm_bias", op("add", op("layernorm", any("x"), any("s")).bind("norm").used_once(), any("y")),
            [](rewriter& r, const bindings& b) {
                if (!broadcasts_into(r, b)) return false;
                r.replace(r.add(b["norm"]->get_operator(), {b["x"], b["s"], b["y"]}));
                return true;
            }};
}

}  // namespace

std::vector<rule> normalization_rules() {
    return {layernorm_core(), rms_norm_core(), scale_into("layernorm"), scale_into("rms_norm"), layernorm_bias()};
}

}  // namespace kiln
