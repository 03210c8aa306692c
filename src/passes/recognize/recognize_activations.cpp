// GELU, SiLU and hard swish as exporters write them out. A product is read as its set of factors
// (the leaves of a tree of muls), so every ordering and grouping of the factors matches:
//   x * 0.5 * (1 + erf(x / sqrt(2)))                                  -> gelu
//   x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))         -> gelu[approximate=tanh]
//   x * 0.5 * (1 + tanh(sqrt(2 / pi) * x * (1 + 0.044715 * x^2)))     -> gelu[approximate=tanh]
//   x * sigmoid(x), x * sigmoid(beta * x)                              -> silu[beta]
//   x * hard_sigmoid[1/6, 1/2](x), x * clip(x + 3, 0, 6) / 6           -> hard_swish
// x / sqrt(2) may be x * 0.70710678, x^n may be pow(x, n) or x * ... * x; constants must be within
// a relative 1e-4 of the exact values.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "passes/recognize/recognize_rules.hpp"

namespace kiln {
namespace {

using namespace recognize;

// Removes from `fs` the first factor for which pred holds; false when none does.
template <class Pred>
bool take(std::vector<instruction_ref>& fs, Pred pred) {
    auto it = std::find_if(fs.begin(), fs.end(), pred);
    if (it == fs.end()) return false;
    fs.erase(it);
    return true;
}

// True when `ins` is c * x (any grouping) with c a scalar literal; sets c.
bool scaled_x(instruction_ref ins, instruction_ref x, double& c, std::vector<instruction_ref>& inner) {
    if (ins->name() != "mul" || ins->outputs().size() != 1) return false;
    std::vector<instruction_ref> muls{ins};
    auto fs = product_factors(ins, muls, 2);
    if (fs.size() != 2 || !take(fs, [&](auto f) { return f == x; })) return false;
    auto s = scalar_value(fs.front());
    if (!s) return false;
    c = *s;
    inner.insert(inner.end(), muls.begin(), muls.end());
    return true;
}

// 1 + f(arg) (in either order) with f the unary op `fn`, used only here; returns arg.
std::optional<instruction_ref> one_plus(instruction_ref ins, std::string_view fn, std::vector<instruction_ref>& inner) {
    if (ins->name() != "add" || ins->outputs().size() != 1) return std::nullopt;
    for (int i = 0; i < 2; ++i) {
        auto f = ins->inputs()[i], one = ins->inputs()[1 - i];
        if (f->name() == fn && f->outputs().size() == 1 && near_scalar(one, 1.0)) {
            inner.insert(inner.end(), {ins, f});
            return f->inputs().front();
        }
    }
    return std::nullopt;
}

// x / sqrt(2) or x * (1 / sqrt(2)).
bool erf_argument(instruction_ref arg, instruction_ref x, std::vector<instruction_ref>& inner) {
    if (arg->outputs().size() != 1) return false;
    if (arg->name() == "div" && arg->inputs()[0] == x && near_scalar(arg->inputs()[1], std::numbers::sqrt2)) {
        inner.push_back(arg);
        return true;
    }
    double c = 0;
    return scaled_x(arg, x, c, inner) && std::abs(c - 1 / std::numbers::sqrt2) <= 1e-4 / std::numbers::sqrt2;
}

// x^n as the factors {pow(x, n)} (the pow is appended to inner) or n copies of x.
bool is_power(const std::vector<instruction_ref>& fs, instruction_ref x, int n, std::vector<instruction_ref>& inner) {
    if (fs.size() == 1 && fs[0]->name() == "pow" && fs[0]->inputs()[0] == x && near_scalar(fs[0]->inputs()[1], n)) {
        inner.push_back(fs[0]);
        return true;
    }
    return fs.size() == static_cast<std::size_t>(n) &&
           std::all_of(fs.begin(), fs.end(), [&](auto f) { return f == x; });
}

// lead + 0.044715 * x^n (in either order), with `lead` checking the first term.
template <class Lead>
bool polynomial(instruction_ref sum, instruction_ref x, int n, Lead lead, std::vector<instruction_ref>& inner) {
    if (sum->name() != "add" || sum->outputs().size() != 1) return false;
    for (int i = 0; i < 2; ++i) {
        auto term = sum->inputs()[1 - i];
        if (!lead(sum->inputs()[i]) || term->name() != "mul" || term->outputs().size() != 1) continue;
        std::vector<instruction_ref> muls{term};
        auto cs = product_factors(term, muls, static_cast<std::size_t>(n) + 1);
        if (!take(cs, [](auto f) { return near_scalar(f, 0.044715); }) || !is_power(cs, x, n, muls)) continue;
        inner.insert(inner.end(), muls.begin(), muls.end());
        inner.push_back(sum);
        return true;
    }
    return false;
}

// sqrt(2 / pi) * (x + 0.044715 * x^3) or sqrt(2 / pi) * x * (1 + 0.044715 * x^2), grouped in any
// way the products allow.
bool tanh_argument(instruction_ref arg, instruction_ref x, std::vector<instruction_ref>& inner) {
    if (arg->name() != "mul" || arg->outputs().size() != 1) return false;
    std::vector<instruction_ref> found{arg};
    auto fs = product_factors(arg, found, 3);
    if (!take(fs, [](auto f) { return near_scalar(f, std::sqrt(2 / std::numbers::pi)); })) return false;
    bool ok = fs.size() == 1 ? polynomial(
                                   fs[0], x, 3, [&](auto a) { return a == x; }, found)
                             : fs.size() == 2 && take(fs, [&](auto f) { return f == x; }) &&
                                   polynomial(
                                       fs[0], x, 2, [](auto a) { return near_scalar(a, 1.0); }, found);
    if (ok) inner.insert(inner.end(), found.begin(), found.end());
    return ok;
}

// x * 0.5 * (1 + erf(x / sqrt(2))) -> gelu;  x * 0.5 * (1 + tanh(...)) -> gelu[approximate=tanh]
rule gelu() {
    return {"gelu", match::op("mul"), [](rewriter& r, const bindings&) {
                std::vector<instruction_ref> inner;
                auto fs = product_factors(r.root(), inner, 3);
                if (fs.size() != 3 || !take(fs, [](auto f) { return near_scalar(f, 0.5); })) return false;
                for (int i = 0; i < 2; ++i) {
                    auto x = fs[i], other = fs[1 - i];
                    auto inner_i = inner;
                    std::string mode;
                    if (auto arg = one_plus(other, "erf", inner_i); arg && erf_argument(*arg, x, inner_i))
                        mode = "none";
                    else if (auto t = one_plus(other, "tanh", inner_i); t && tanh_argument(*t, x, inner_i))
                        mode = "tanh";
                    else
                        continue;
                    if (!same_dims(x->get_shape(), r.root()->get_shape()) || !used_only_within(inner_i, r.root()))
                        return false;
                    r.replace(r.add("gelu", {x}, {{"approximate", mode}}));
                    return true;
                }
                return false;
            }};
}

// x * sigmoid(x) -> silu;  x * sigmoid(beta * x) -> silu[beta]
rule silu() {
    return {"silu", match::op("mul", match::any("x"), match::op("sigmoid", match::any("a")).bind("sig").used_once()),
            [](rewriter& r, const bindings& b) {
                auto x = b["x"], a = b["a"];
                std::vector<instruction_ref> inner{b["sig"]};
                double beta = 1;
                if (a != x && !scaled_x(a, x, beta, inner)) return false;
                if (!same_dims(x->get_shape(), r.root()->get_shape()) || !used_only_within(inner, r.root()))
                    return false;
                r.replace(r.add("silu", {x}, {{"beta", static_cast<float>(beta)}}));
                return true;
            }};
}

// Removes from `fs` hard_sigmoid[1/6, 1/2](x), or clip(x + 3, 0, 6) and (when `sixth`) a factor
// 1/6; false when they are not there.
bool take_hard_gate(std::vector<instruction_ref>& fs, instruction_ref x, bool sixth,
                    std::vector<instruction_ref>& inner) {
    auto gate = [&](instruction_ref g) {
        if (g->name() != "hard_sigmoid" || g->outputs().size() != 1 || g->inputs()[0] != x) return false;
        value a = g->get_operator().attributes();
        return std::abs(a.at("alpha").as_float() - 1.0 / 6) <= 1e-6 && a.at("beta").as_float() == 0.5;
    };
    auto relu6 = [&](instruction_ref g) {
        if (g->name() != "clip" || g->outputs().size() != 1 || !near_scalar(g->inputs()[1], 0) ||
            !near_scalar(g->inputs()[2], 6))
            return false;
        auto sum = g->inputs()[0];
        return sum->name() == "add" && sum->outputs().size() == 1 &&
               ((sum->inputs()[0] == x && near_scalar(sum->inputs()[1], 3)) ||
                (sum->inputs()[1] == x && near_scalar(sum->inputs()[0], 3)));
    };
    auto it = std::find_if(fs.begin(), fs.end(), gate);
    if (it != fs.end()) {
        inner.push_back(*it);
        fs.erase(it);
        return true;
    }
    it = std::find_if(fs.begin(), fs.end(), relu6);
    if (it == fs.end()) return false;
    inner.insert(inner.end(), {*it, (*it)->inputs()[0]});
    fs.erase(it);
    return !sixth || take(fs, [](auto f) { return near_scalar(f, 1.0 / 6); });
}

// x * hard_sigmoid[alpha=1/6, beta=1/2](x) -> hard_swish;  x * clip(x + 3, 0, 6) * (1/6) -> hard_swish
rule hard_swish() {
    return {"hard_swish", match::op("mul"), [](rewriter& r, const bindings&) {
                std::vector<instruction_ref> inner;
                auto fs = product_factors(r.root(), inner, 3);
                for (auto x : std::vector<instruction_ref>(fs)) {
                    auto rest = fs;
                    auto inner_x = inner;
                    if (!take(rest, [&](auto f) { return f == x; }) || !take_hard_gate(rest, x, true, inner_x) ||
                        !rest.empty())
                        continue;
                    if (!same_dims(x->get_shape(), r.root()->get_shape()) || !used_only_within(inner_x, r.root()))
                        return false;
                    r.replace(r.add("hard_swish", {x}));
                    return true;
                }
                return false;
            }};
}

// x * clip(x + 3, 0, 6) / 6 -> hard_swish
rule hard_swish_div() {
    return {"hard_swish_div", match::op("div", match::op("mul").bind("p").used_once(), match::any("six")),
            [](rewriter& r, const bindings& b) {
                auto p = b["p"];
                std::vector<instruction_ref> inner{p};
                if (!near_scalar(b["six"], 6)) return false;
                for (int i = 0; i < 2; ++i) {
                    auto x = p->inputs()[i];
                    std::vector<instruction_ref> fs{p->inputs()[1 - i]};
                    auto inner_x = inner;
                    if (!take_hard_gate(fs, x, false, inner_x) || !fs.empty()) continue;
                    if (!same_dims(x->get_shape(), r.root()->get_shape()) || !used_only_within(inner_x, r.root()))
                        return false;
                    r.replace(r.add("hard_swish", {x}));
                    return true;
                }
                return false;
            }};
}

}  // namespace

std::vector<rule> activation_rules() { return {gelu(), silu(), hard_swish(), hard_swish_div()}; }

}  // namespace kiln
