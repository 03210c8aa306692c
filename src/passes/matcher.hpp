// The pattern matcher: small composable patterns over instruction trees, and rules that rewrite
// what they match. A rule reads like its algebra:
//
//   // (x * c1) * c2 -> x * (c1 * c2)
//   rule{"mul_const_reassoc",
//        match::op("mul", match::op("mul", match::any("x"), match::constant("c1")).used_once(),
//                  match::constant("c2")),
//        [](rewriter& r, const bindings& b) {
//            r.replace(r.add("mul", {b["x"], r.add("mul", {b["c1"], b["c2"]})}));
//            return true;
//        }};
//
// Commutative ops (by trait) match their two inputs in either order. apply_rules runs a worklist:
// every instruction is tried once, and after a rewrite only the new instructions and the users of
// the replaced one are tried again, never the whole module.
#pragma once
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/module.hpp"

namespace kiln {

// Names bound by a match ("x", "c1"); operator[] throws naming an unbound name.
class bindings {
public:
    instruction_ref operator[](std::string_view name) const;
    bool has(std::string_view name) const { return map_.find(name) != map_.end(); }
    // Binds `name`; a name already bound to another instruction makes the match fail.
    bool bind(const std::string& name, instruction_ref ins);

private:
    std::map<std::string, instruction_ref, std::less<>> map_;
};

namespace match {

class pattern {
public:
    using fn = std::function<bool(instruction_ref, bindings&)>;
    explicit pattern(fn f) : f_(std::move(f)) {}
    // True when `ins` matches; bindings are only changed on success.
    bool operator()(instruction_ref ins, bindings& b) const;

    pattern bind(std::string name) const;                  // also bind the matched instruction
    pattern used_once() const;                             // ... that has exactly one user
    pattern where(std::function<bool(instruction_ref)> pred) const;   // ... and satisfies pred

private:
    fn f_;
};

pattern any();                          // anything
pattern any(std::string name);          // anything, bound to name
// An op of this name whose inputs match `args` in order (in either order when commutative and
// two args). No args: any inputs. Throws when no op of this name is registered.
pattern op(std::string name, std::vector<pattern> args = {});
template <class... Ps>
pattern op(std::string name, pattern a, Ps... rest) { return op(std::move(name), std::vector<pattern>{a, rest...}); }
// Any op with these traits.
pattern pointwise(std::string name = {});
pattern constant(std::string name = {});                 // a literal
pattern scalar(double v, std::string name = {});         // a literal whose every element equals v
pattern any_of(std::vector<pattern> alternatives);

}  // namespace match

// Inserts new instructions before the matched root and replaces it. An op added on literals only
// is evaluated at once and added as a literal.
class rewriter {
public:
    rewriter(module& m, instruction_ref root) : m_(m), root_(root) {}
    module& mod() { return m_; }
    instruction_ref root() const { return root_; }

    instruction_ref add(std::string_view op, std::vector<instruction_ref> inputs, const value& attrs = value());
    instruction_ref add(const operation& op, std::vector<instruction_ref> inputs);
    instruction_ref add_literal(literal lit);
    // A literal scalar of `t` broadcast by binary ops, holding v.
    instruction_ref add_scalar(dtype t, double v);
    // Replaces every use of the root (shapes must match; a mismatch is a rule bug and throws).
    void replace(instruction_ref with);

    const std::vector<instruction_ref>& added() const { return added_; }

private:
    module& m_;
    instruction_ref root_;
    std::vector<instruction_ref> added_;
};

struct rule {
    std::string name;
    match::pattern pattern;
    // Returns false to decline (a condition the pattern cannot express did not hold).
    std::function<bool(rewriter&, const bindings&)> apply;
};

// Rewrites `m` with `rules` until none applies; returns the number of rewrites. Dead code is
// removed first and after every rewrite, so patterns only ever see live users.
std::size_t apply_rules(module& m, std::span<const rule> rules);

// Every element of a literal as a double (for rule conditions on constant values).
std::vector<double> literal_values(const instruction& ins);

}  // namespace kiln
