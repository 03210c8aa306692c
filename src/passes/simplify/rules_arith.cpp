// Arithmetic rules: identities, constant reassociation, negation, pow and exact division.
// Identities only fire when x already has the result's lens (a constant that broadcasts x to a
// larger shape declines). x + 0 -> x may turn a -0.0 sum of +0.0 into -0.0: the values are equal.
// Reassociating float constants rounds c1 * c2 once instead of twice: within float rounding
// (unless x * c1 overflowed, which the folded form may not). Integers wrap, so their
// reassociations are exact. Every rule declines on dynamic shapes.
#include <cmath>

#include "passes/simplify/simplify_rules.hpp"

namespace kiln {
namespace {

using match::any;
using match::constant;
using match::op;
using match::scalar;

bool float_result(instruction_ref ins) { return is_float(ins->get_shape().type()); }

// A rule replacing the root by x (bound as "x").
rule to_x(std::string name, match::pattern p) {
    return {std::move(name), std::move(p),
            [](rewriter& r, const bindings& b) { return replace_where_shape_allows(r, b["x"]); }};
}

// x * 0 -> 0 for integers: a literal zero of the result's shape (what propagate_constant would
// make of any broadcast zero).
bool replace_by_zero(rewriter& r, const bindings&) {
    r.replace(r.add_literal(literal(argument(r.root()->get_shape().as_standard()))));
    return true;
}

// Whether every element of literal c is a finite power of two whose reciprocal its type holds
// exactly, so that x / c and x * (1 / c) round the same real number.
bool exact_reciprocal(instruction_ref c) {
    if (!is_float(c->get_shape().type()) || c->get_shape().elements() == 0) return false;
    std::vector<double> recips;
    for (double v : literal_values(*c)) {
        int e = 0;
        if (!std::isfinite(v) || v == 0 || std::fabs(std::frexp(v, &e)) != 0.5) return false;
        recips.push_back(1 / v);
    }
    return to_doubles(literal(c->get_shape(), recips).get_argument()) == recips;
}

// The rule, declining on dynamic shapes (whose broadcasts are only known at run time).
rule static_only(rule r) {
    r.pattern = r.pattern.where([](instruction_ref ins) { return !ins->get_shape().dynamic(); });
    return r;
}

bool same_lens_as_root(rewriter& r, instruction_ref x) { return x->get_shape().lens() == r.root()->get_shape().lens(); }

std::vector<rule> identity_rules() {
    return {
        // x + 0 -> x
        to_x("add_zero", op("add", any("x"), scalar(0))),
        // x - 0 -> x
        to_x("sub_zero", op("sub", any("x"), scalar(0))),
        // x * 1 -> x
        to_x("mul_one", op("mul", any("x"), scalar(1))),
        // x / 1 -> x
        to_x("div_one", op("div", any("x"), scalar(1))),
        // pow(x, 1) -> x
        to_x("pow_one", op("pow", any("x"), scalar(1))),
        // neg(neg(x)) -> x
        to_x("neg_neg", op("neg", op("neg", any("x")))),
        // identity(x) -> x
        to_x("identity", op("identity", any("x"))),
        // x * 0 -> 0, integers only (for floats NaN * 0 and inf * 0 are NaN)
        {"mul_zero_int", op("mul", any("x"), scalar(0)).where([](instruction_ref i) { return !float_result(i); }),
         replace_by_zero},
    };
}

std::vector<rule> power_rules() {
    return {
        // pow(x, 2) -> x * x
        {"pow_two", op("pow", any("x"), scalar(2)),
         [](rewriter& r, const bindings& b) {
             if (!same_lens_as_root(r, b["x"])) return false;
             r.replace(r.add("mul", {b["x"], b["x"]}));
             return true;
         }},
        // pow(x, 0.5) -> sqrt(x), floats; they differ only at x = -inf (pow: +inf, sqrt: NaN)
        {"pow_half", op("pow", any("x"), scalar(0.5)).where(float_result),
         [](rewriter& r, const bindings& b) {
             if (!same_lens_as_root(r, b["x"])) return false;
             r.replace(r.add("sqrt", {b["x"]}));
             return true;
         }},
        // x / c -> x * (1 / c), c a power of two whose reciprocal is exact (no fast-math)
        {"div_pow2", op("div", any("x"), constant("c")),
         [](rewriter& r, const bindings& b) {
             if (!exact_reciprocal(b["c"])) return false;
             auto one = r.add_scalar(b["c"]->get_shape().type(), 1);
             r.replace(r.add("mul", {b["x"], r.add("div", {one, b["c"]})}));
             return true;
         }},
    };
}

std::vector<rule> negation_rules() {
    return {
        // x - neg(y) -> x + y
        {"sub_neg", op("sub", any("x"), op("neg", any("y"))),
         [](rewriter& r, const bindings& b) {
             r.replace(r.add("add", {b["x"], b["y"]}));
             return true;
         }},
        // x + neg(y) -> x - y
        {"add_neg", op("add", any("x"), op("neg", any("y"))),
         [](rewriter& r, const bindings& b) {
             r.replace(r.add("sub", {b["x"], b["y"]}));
             return true;
         }},
    };
}

// (x op c1) op c2 -> x op (c1 op c2) for op = add or mul.
rule reassociate(const std::string& name) {
    return {name + "_const_reassoc", op(name, op(name, any("x"), constant("c1")).used_once(), constant("c2")),
            [name](rewriter& r, const bindings& b) {
                r.replace(r.add(name, {b["x"], r.add(name, {b["c1"], b["c2"]})}));
                return true;
            }};
}

// Whether a scale on x folds away: x takes it into its weights, or x is itself x' * c.
bool scale_folds(instruction_ref x) {
    if (takes_scale(x)) return true;
    if (x->name() != "mul") return false;
    return x->inputs()[0]->is_literal() || x->inputs()[1]->is_literal();
}

}  // namespace

std::vector<rule> arith_rules() {
    std::vector<rule> rules;
    for (auto& group : {identity_rules(), power_rules(), negation_rules()})
        for (const auto& r : group) rules.push_back(static_only(r));
    auto folds = fold_rules();
    rules.insert(rules.end(), folds.begin(), folds.end());
    return rules;
}

std::vector<rule> fold_rules() {
    std::vector<rule> rules{
        // (x * c1) * c2 -> x * (c1 * c2)
        reassociate("mul"),
        // (x + c1) + c2 -> x + (c1 + c2)
        reassociate("add"),
        // (x + c1) * c2 -> x * c2 + c1 * c2, where the scale on x folds away
        {"distribute_scale", op("mul", op("add", any("x"), constant("c1")).used_once(), constant("c2")),
         [](rewriter& r, const bindings& b) {
             if (!scale_folds(b["x"])) return false;
             auto scaled = r.add("mul", {b["x"], b["c2"]});
             r.replace(r.add("add", {scaled, r.add("mul", {b["c1"], b["c2"]})}));
             return true;
         }},
    };
    for (auto& r : rules) r = static_only(std::move(r));
    return rules;
}

}  // namespace kiln
