#include "passes/simplify/fold_batch_norm.hpp"

#include <cmath>

#include "ops/gemm.hpp"
#include "ops/normalization.hpp"
#include "passes/simplify/simplify_rules.hpp"

namespace kiln {
namespace {

using match::any;
using match::constant;
using match::op;

// Whether a per-channel scale (dim 1) on x folds into x's weights. A dot scales its last dim.
bool channel_scale_folds(instruction_ref x) {
    return x->outputs().size() == 1 && takes_scale(x) &&
           (!x->get_operator().get_if<ops::dot>() || x->get_shape().ndim() == 2);
}

// Whether y * f folds into y's weights: y takes a channel scale, or is such an op plus a constant.
bool folds(instruction_ref y) {
    if (y->outputs().size() != 1 || y->get_shape().dynamic() || y->get_shape().ndim() < 2) return false;
    if (channel_scale_folds(y)) return true;
    if (y->name() != "add") return false;
    auto a = y->inputs()[0], b = y->inputs()[1];
    return (b->is_literal() && channel_scale_folds(a)) || (a->is_literal() && channel_scale_folds(b));
}

// A literal of type t holding one value per channel, shaped to broadcast along dim 1 of `rank` dims.
instruction_ref per_channel(rewriter& r, dtype t, const std::vector<double>& v, std::size_t rank) {
    std::vector<std::size_t> lens(rank - 1, 1);
    lens[0] = v.size();
    return r.add_literal(literal(shape(t, lens), v));
}

// bn(y, s, b, m, v) -> y * f + (b - m * f), f = s / sqrt(v + epsilon), where y takes the scale
rule bn_to_scale_shift() {
    return {"bn_to_scale_shift",
            op("batch_norm_inference", any("y"), constant("s"), constant("b"), constant("m"), constant("v")),
            [](rewriter& r, const bindings& bs) {
                auto y = bs["y"];
                if (!folds(y)) return false;
                double eps = r.root()->get_operator().get<ops::batch_norm_inference>().epsilon;
                auto s = literal_values(*bs["s"]), b = literal_values(*bs["b"]);
                auto m = literal_values(*bs["m"]), v = literal_values(*bs["v"]);
                std::vector<double> f(s.size()), shift(s.size());
                for (std::size_t c = 0; c < s.size(); ++c) {
                    f[c] = s[c] / std::sqrt(v[c] + eps);
                    shift[c] = b[c] - m[c] * f[c];
                }
                dtype t = y->get_shape().type();
                std::size_t rank = y->get_shape().ndim();
                auto scaled = r.add("mul", {y, per_channel(r, t, f, rank)});
                r.replace(r.add("add", {scaled, per_channel(r, t, shift, rank)}));
                return true;
            }};
}

}  // namespace

void fold_batch_norm::apply(module& m) const {
    static const std::vector<rule> rules = [] {
        std::vector<rule> all{bn_to_scale_shift()};
        for (auto& family : {fold_rules(), conv_gemm_rules()}) all.insert(all.end(), family.begin(), family.end());
        return all;
    }();
    apply_rules(m, rules);
}

}  // namespace kiln
