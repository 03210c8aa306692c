// recognize_patterns: runs the rule families of recognize_rules.hpp one after another, softmax
// first so that attention sees the softmax ops it made.
// Assumes constants are already literals and repeated subgraphs merged (propagate_constant and CSE
// run before it): the rules compare constants by value and expect one instruction per
// intermediate.
#include "passes/recognize/recognize_patterns.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "passes/recognize/recognize_rules.hpp"

namespace kiln {

void recognize_patterns::apply(module& m) const {
    for (auto family : {softmax_rules, normalization_rules, activation_rules, attention_rules}) {
        apply_rules(m, family());
    }
}

namespace recognize {

std::optional<double> scalar_value(instruction_ref ins) {
    if (!ins->is_literal() || ins->get_shape().elements() == 0) return std::nullopt;
    auto v = literal_values(*ins);
    if (std::any_of(v.begin(), v.end(), [&](double x) { return x != v.front(); })) return std::nullopt;
    return v.front();
}

bool same_dims(const shape& a, const shape& b) {
    return !a.dynamic() && !b.dynamic() && a.type() == b.type() && a.lens() == b.lens();
}

bool near_scalar(instruction_ref ins, double v) {
    auto s = scalar_value(ins);
    return s && std::abs(*s - v) <= 1e-4 * std::abs(v);
}

bool used_only_within(std::span<const instruction_ref> inner, instruction_ref root) {
    std::set<const instruction*> allowed{&*root};
    for (auto i : inner) allowed.insert(&*i);
    for (auto i : inner)
        for (auto u : i->outputs())
            if (!allowed.count(&*u)) return false;
    return true;
}

std::vector<instruction_ref> bound(const bindings& b, std::initializer_list<const char*> names) {
    std::vector<instruction_ref> out;
    for (const char* n : names)
        if (b.has(n)) out.push_back(b[n]);
    return out;
}

namespace {
// Stops once there are more than `limit` leaves, so long chains of muls cost little.
void collect_factors(instruction_ref ins, bool is_root, std::size_t limit, std::vector<instruction_ref>& leaves,
                     std::vector<instruction_ref>& inner) {
    if (leaves.size() > limit) return;
    if (ins->name() == "mul" && (is_root || ins->outputs().size() == 1)) {
        if (!is_root) inner.push_back(ins);
        for (auto in : ins->inputs()) collect_factors(in, false, limit, leaves, inner);
        return;
    }
    leaves.push_back(ins);
}
}  // namespace

std::vector<instruction_ref> product_factors(instruction_ref root, std::vector<instruction_ref>& inner,
                                             std::size_t limit) {
    std::vector<instruction_ref> leaves, muls;
    collect_factors(root, true, limit, leaves, muls);
    if (leaves.size() > limit) return {};
    inner.insert(inner.end(), muls.begin(), muls.end());
    return leaves;
}

std::optional<std::vector<std::int64_t>> kept_reduce_axes(instruction_ref reduce) {
    value attrs = reduce->get_operator().attributes();
    if (!attrs.at("keepdims").as_bool()) return std::nullopt;
    auto rank = static_cast<std::int64_t>(reduce->inputs().front()->get_shape().ndim());
    std::vector<std::int64_t> axes;
    for (const auto& a : attrs.at("axes").as_array()) axes.push_back(a.as_int() < 0 ? a.as_int() + rank : a.as_int());
    if (axes.empty()) {
        if (attrs.at("noop_with_empty_axes").as_bool()) return std::nullopt;
        for (std::int64_t i = 0; i < rank; ++i) axes.push_back(i);
    }
    std::sort(axes.begin(), axes.end());
    return axes;
}

}  // namespace recognize
}  // namespace kiln
