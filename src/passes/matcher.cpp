#include "passes/matcher.hpp"

#include <deque>
#include <optional>
#include <algorithm>
#include <unordered_map>

#include "core/error.hpp"
#include "core/eval.hpp"

namespace kiln {

instruction_ref bindings::operator[](std::string_view name) const {
    auto it = map_.find(name);
    if (it == map_.end()) fail("pattern binds no instruction named '", name, "'");
    return it->second;
}

bool bindings::bind(const std::string& name, instruction_ref ins) {
    auto [it, inserted] = map_.emplace(name, ins);
    return inserted || it->second == ins;
}

namespace match {

bool pattern::operator()(instruction_ref ins, bindings& b) const {
    bindings trial = b;
    if (!f_(ins, trial)) return false;
    b = std::move(trial);
    return true;
}

pattern pattern::bind(std::string name) const {
    return pattern([self = *this, name = std::move(name)](instruction_ref ins, bindings& b) {
        return self(ins, b) && b.bind(name, ins);
    });
}

pattern pattern::used_once() const {
    return pattern([self = *this](instruction_ref ins, bindings& b) { return ins->outputs().size() == 1 && self(ins, b); });
}

pattern pattern::where(std::function<bool(instruction_ref)> pred) const {
    return pattern([self = *this, pred = std::move(pred)](instruction_ref ins, bindings& b) {
        return pred(ins) && self(ins, b);
    });
}

pattern any() {
    return pattern([](instruction_ref, bindings&) { return true; });
}

pattern any(std::string name) { return any().bind(std::move(name)); }

namespace {
// All args match their inputs; `b` is only changed on success.
bool match_args(const std::vector<pattern>& args, const std::vector<instruction_ref>& inputs, bindings& b) {
    if (args.size() != inputs.size()) return false;
    bindings trial = b;
    for (std::size_t i = 0; i < args.size(); ++i)
        if (!args[i](inputs[i], trial)) return false;
    b = std::move(trial);
    return true;
}
}  // namespace

pattern op(std::string name, std::vector<pattern> args) {
    // A misspelt or removed op would otherwise make the rule silently never match.
    if (!has_op(name)) fail("pattern names op '", name, "', which is not registered");
    return pattern([name = std::move(name), args = std::move(args)](instruction_ref ins, bindings& b) {
        if (ins->name() != name) return false;
        if (args.empty()) return true;
        if (match_args(args, ins->inputs(), b)) return true;
        if (args.size() != 2 || !ins->get_operator().traits().commutative) return false;
        std::vector<instruction_ref> swapped{ins->inputs()[1], ins->inputs()[0]};
        return match_args(args, swapped, b);
    });
}

pattern pointwise(std::string name) {
    pattern p([](instruction_ref ins, bindings&) { return ins->get_operator().traits().pointwise; });
    return name.empty() ? p : p.bind(std::move(name));
}

pattern constant(std::string name) {
    pattern p([](instruction_ref ins, bindings&) { return ins->is_literal(); });
    return name.empty() ? p : p.bind(std::move(name));
}

pattern scalar(double v, std::string name) {
    pattern p([v](instruction_ref ins, bindings&) {
        if (!ins->is_literal() || ins->get_shape().elements() == 0) return false;
        for (double x : literal_values(*ins))
            if (x != v) return false;
        return true;
    });
    return name.empty() ? p : p.bind(std::move(name));
}

pattern any_of(std::vector<pattern> alternatives) {
    return pattern([alts = std::move(alternatives)](instruction_ref ins, bindings& b) {
        for (const auto& a : alts)
            if (a(ins, b)) return true;
        return false;
    });
}

}  // namespace match

namespace {
// An op on literals only becomes a literal at once, so that rules which combine constants chain
// (((x * 2) * 3) * 4 folds in one pass) without waiting for propagate_constant.
std::optional<literal> fold(const operation& op, const std::vector<instruction_ref>& inputs) {
    if (inputs.empty() || op.traits().side_effects || op.traits().data_dependent) return std::nullopt;
    std::vector<argument> args;
    std::vector<shape> shapes;
    for (auto in : inputs) {
        if (!in->is_literal()) return std::nullopt;
        args.push_back(in->get_literal().get_argument());
        shapes.push_back(in->get_shape());
    }
    if (op.output_alias(shapes) >= 0 || !op.compute_shape(shapes).standard()) return std::nullopt;
    return literal(compute_op(op, args));
}
}  // namespace

instruction_ref rewriter::add(std::string_view op, std::vector<instruction_ref> inputs, const value& attrs) {
    return add(make_op(op, attrs), std::move(inputs));
}

instruction_ref rewriter::add(const operation& op, std::vector<instruction_ref> inputs) {
    if (auto folded = fold(op, inputs)) return add_literal(std::move(*folded));
    auto ins = m_.insert_instruction(root_, op, std::move(inputs));
    ins->set_source_name(root_->source_name());
    added_.push_back(ins);
    return ins;
}

instruction_ref rewriter::add_literal(literal lit) {
    auto ins = m_.insert_literal(root_, std::move(lit));
    added_.push_back(ins);
    return ins;
}

instruction_ref rewriter::add_scalar(dtype t, double v) {
    return add_literal(literal(shape(t), std::span<const double>(&v, 1)));
}

void rewriter::replace(instruction_ref with) {
    if (with->get_shape() != root_->get_shape())
        fail("rewrite of ", to_string(root_->get_operator()), " gives ", to_string(with->get_shape()), ", expected ",
             to_string(root_->get_shape()));
    m_.replace_uses(root_, with);
}

namespace {
// The rewrite queue. Instructions a rewrite leaves dead are removed at once, so that patterns
// (used_once above all) see only live users; the queue keys by address and forgets removed ones.
class worklist {
public:
    void push(instruction_ref ins) {
        if (queued_.emplace(&*ins, ins).second) order_.push_back(&*ins);
    }
    bool pop(instruction_ref& ins) {
        while (!order_.empty()) {
            const instruction* p = order_.front();
            order_.pop_front();
            auto it = queued_.find(p);
            if (it == queued_.end()) continue;
            ins = it->second;
            queued_.erase(it);
            return true;
        }
        return false;
    }
    // Removes `ins` if nothing uses it, then its inputs that became unused.
    void remove_dead(module& m, instruction_ref ins) {
        std::vector<instruction_ref> stack{ins};
        while (!stack.empty()) {
            auto i = stack.back();
            stack.pop_back();
            if (!i->outputs().empty() || i->is_param() || i->is_return() || i->get_operator().traits().side_effects)
                continue;
            std::vector<instruction_ref> inputs = i->inputs();
            queued_.erase(&*i);
            m.remove_instruction(i);
            for (auto in : inputs)
                if (std::find(stack.begin(), stack.end(), in) == stack.end()) stack.push_back(in);
        }
    }

private:
    std::deque<const instruction*> order_;
    std::unordered_map<const instruction*, instruction_ref> queued_;
};
}  // namespace

std::size_t apply_rules(module& m, std::span<const rule> rules) {
    // Patterns count users, so none may be dead: dead code goes first, and after each rewrite
    // whatever it left dead (worklist::remove_dead).
    m.remove_dead_code();
    worklist work;
    for (auto ins = m.begin(); ins != m.end(); ++ins) work.push(ins);
    std::size_t rewrites = 0;
    // Rules that undo each other would loop forever; this bound is far above what terminating
    // rule sets need, and turns a hang into an error naming the rule.
    const std::size_t limit = 16 * m.size() + 1000;
    instruction_ref ins;
    while (work.pop(ins)) {
        if (ins->outputs().empty() || ins->is_param() || ins->is_return()) continue;
        for (const auto& r : rules) {
            bindings b;
            if (!r.pattern(ins, b)) continue;
            rewriter rw(m, ins);
            if (!r.apply(rw, b)) continue;
            if (++rewrites > limit) fail("rewrite rules do not terminate (last applied: '", r.name, "')");
            for (auto a : rw.added()) work.push(a);
            for (auto a : rw.added())
                for (auto u : a->outputs()) work.push(u);
            work.remove_dead(m, ins);
            break;
        }
    }
    return rewrites;
}

std::vector<double> literal_values(const instruction& ins) {
    const argument& a = ins.get_literal().get_argument();
    auto d = compute_op(make_op("convert", value_object{{"target_type", value("double")}}), std::span(&a, 1));
    return {d.as<double>(), d.as<double>() + d.get_shape().elements()};
}

}  // namespace kiln
