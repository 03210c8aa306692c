// Softmax as exporters write it out, over one axis, with or without subtracting the maximum:
//   e = exp(x - reduce_max(x));  e / reduce_sum(e)    -> softmax
//   e = exp(x);                  e / reduce_sum(e)    -> softmax
// The softmax op always subtracts the maximum, so the second form no longer overflows to inf/inf
// (NaN) on large inputs; elsewhere the two agree.
#include "passes/recognize/recognize_rules.hpp"

namespace kiln {
namespace {

using namespace recognize;
using match::any;
using match::op;

// The single axis that every named reduction reduces (keeping dims), or nullopt.
std::optional<std::int64_t> common_axis(const bindings& b, std::initializer_list<const char*> reductions) {
    std::optional<std::vector<std::int64_t>> axes;
    for (auto name : reductions) {
        if (!b.has(name)) continue;
        auto a = kept_reduce_axes(b[name]);
        if (!a || a->size() != 1 || (axes && *a != *axes)) return std::nullopt;
        axes = a;
    }
    if (!axes) return std::nullopt;
    return axes->front();
}

bool replace_softmax(rewriter& r, const bindings& b) {
    auto x = b["x"];
    auto axis = common_axis(b, {"max", "sum"});
    if (!axis || !same_dims(x->get_shape(), r.root()->get_shape()) ||
        !used_only_within(bound(b, {"max", "shift", "e", "sum"}), r.root()))
        return false;
    r.replace(r.add("softmax", {x}, {{"axis", *axis}}));
    return true;
}

rule softmax_from(const char* name, const match::pattern& e) {
    return {name, op("div", e, op("reduce_sum", e).bind("sum")), replace_softmax};
}

}  // namespace

std::vector<rule> softmax_rules() {
    // exp(x - max(x)) / sum(exp(x - max(x))) -> softmax(x)
    auto shifted = op("exp", op("sub", any("x"), op("reduce_max", any("x")).bind("max")).bind("shift")).bind("e");
    // exp(x) / sum(exp(x)) -> softmax(x)
    auto plain = op("exp", any("x")).bind("e");
    return {softmax_from("softmax_shifted", shifted), softmax_from("softmax", plain)};
}

}  // namespace kiln
