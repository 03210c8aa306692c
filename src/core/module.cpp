#include "core/module.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/builtin.hpp"
#include "core/error.hpp"

namespace kiln {

instruction::instruction(operation op, shape result, std::vector<instruction_ref> inputs, std::vector<module*> mods)
    : op_(std::move(op)), result_(std::move(result)), inputs_(std::move(inputs)), mods_(std::move(mods)) {}

bool instruction::is_param() const { return op_.name() == "@param"; }
bool instruction::is_literal() const { return op_.name() == "@literal"; }
bool instruction::is_return() const { return op_.name() == "@return"; }

namespace {
std::vector<shape> input_shapes(const std::vector<instruction_ref>& inputs) {
    std::vector<shape> s;
    s.reserve(inputs.size());
    for (auto i : inputs) s.push_back(i->get_shape());
    return s;
}

std::vector<instruction_ref>& users_of(instruction_ref input) {
    return const_cast<std::vector<instruction_ref>&>(input->outputs());
}

// Whether inputs[i] is the first use of that input (x * x uses x once as far as users go).
bool first_use(const std::vector<instruction_ref>& inputs, std::size_t i) {
    return std::find(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(i), inputs[i]) ==
           inputs.begin() + static_cast<std::ptrdiff_t>(i);
}

// Adds `user` to the users of each of its inputs, which do not list it yet. Searching a user
// list before each addition made a value with n users cost n^2 (a shared constant in a large
// model, and every program clone the pass manager takes).
void add_to_inputs(instruction_ref user) {
    const auto& inputs = user->inputs();
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (first_use(inputs, i)) users_of(inputs[i]).push_back(user);
}

void remove_user(instruction_ref input, instruction_ref user) {
    auto& outs = users_of(input);
    outs.erase(std::remove(outs.begin(), outs.end(), user), outs.end());
}
}  // namespace

instruction_ref module::insert(instruction_ref pos, instruction ins) {
    auto it = instructions_.insert(pos, std::move(ins));
    add_to_inputs(it);
    return it;
}

instruction_ref module::add_parameter(const std::string& name, const shape& s) {
    if (get_parameter(name) != end()) fail("module ", name_, ": parameter '", name, "' declared twice");
    // Parameters go before the first non-parameter so that they are visible everywhere.
    auto pos = std::find_if(begin(), end(), [](const instruction& i) { return !i.is_param(); });
    return insert(pos, instruction(make_param_op(name, s), s, {}, {}));
}

instruction_ref module::add_literal(literal lit) { return insert_literal(end(), std::move(lit)); }

instruction_ref module::insert_literal(instruction_ref pos, literal lit) {
    shape s = lit.get_shape();
    auto it = insert(pos, instruction(make_literal_op(), s, {}, {}));
    it->literal_ = std::move(lit);
    return it;
}

instruction_ref module::add_instruction(const operation& op, std::vector<instruction_ref> inputs,
                                        std::vector<module*> mods) {
    return insert_instruction(end(), op, std::move(inputs), std::move(mods));
}

instruction_ref module::add_return(std::vector<instruction_ref> inputs) {
    if (get_return() != end()) fail("module ", name_, ": has a @return already");
    return add_instruction(make_return_op(), std::move(inputs));
}

instruction_ref module::insert_instruction(instruction_ref pos, const operation& op,
                                           std::vector<instruction_ref> inputs, std::vector<module*> mods) {
    auto shapes = input_shapes(inputs);
    shape s = op.compute_shape(shapes, mods);
    return insert(pos, instruction(op, std::move(s), std::move(inputs), std::move(mods)));
}

void module::replace_uses(instruction_ref ins, instruction_ref rep) {
    if (ins == rep) return;
    if (ins->get_shape() != rep->get_shape())
        fail("module ", name_, ": cannot replace ", to_string(ins->get_operator()), " (",
             to_string(ins->get_shape()), ") with ", to_string(rep->get_operator()), " (",
             to_string(rep->get_shape()), ")");
    // Every user but `rep` itself moves to rep, in one pass over ins's users (n users, not n^2).
    std::vector<instruction_ref> stays;
    for (auto user : ins->outputs()) {
        if (user == rep) {
            stays.push_back(user);
            continue;
        }
        bool uses_rep = std::find(user->inputs_.begin(), user->inputs_.end(), rep) != user->inputs_.end();
        std::replace(user->inputs_.begin(), user->inputs_.end(), ins, rep);
        if (!uses_rep) users_of(rep).push_back(user);
    }
    ins->outputs_ = std::move(stays);
}

void module::replace_instruction(instruction_ref ins, const operation& op, std::vector<instruction_ref> inputs,
                                 std::vector<module*> mods) {
    auto shapes = input_shapes(inputs);
    shape s = op.compute_shape(shapes, mods);
    if (s != ins->get_shape())
        fail("module ", name_, ": replacing ", to_string(ins->get_operator()), " with ", to_string(op),
             " changes its shape from ", to_string(ins->get_shape()), " to ", to_string(s));
    for (auto in : ins->inputs_) remove_user(in, ins);
    ins->op_ = op;
    ins->inputs_ = std::move(inputs);
    ins->mods_ = std::move(mods);
    add_to_inputs(ins);
}

void module::remove_instruction(instruction_ref ins) {
    if (!ins->outputs().empty())
        fail("module ", name_, ": cannot remove ", to_string(ins->get_operator()), ": it still has ",
             ins->outputs().size(), " users");
    for (auto in : ins->inputs_) remove_user(in, ins);
    instructions_.erase(ins);
}

void module::move_instruction(instruction_ref ins, instruction_ref pos) {
    instructions_.splice(pos, instructions_, ins);
}

std::size_t module::remove_dead_code() {
    std::size_t removed = 0;
    // Walk backwards so a chain of dead instructions goes in one sweep.
    for (auto it = instructions_.end(); it != instructions_.begin();) {
        --it;
        const auto& ins = *it;
        if (!ins.outputs().empty() || ins.is_param() || ins.get_operator().traits().side_effects) continue;
        auto dead = it;
        ++it;
        remove_instruction(dead);
        ++removed;
    }
    return removed;
}

bool module::has(instruction_ref ins) const {
    return std::any_of(instructions_.begin(), instructions_.end(), [&](const instruction& i) { return &i == &*ins; });
}

std::vector<instruction_ref> module::parameters() const {
    std::vector<instruction_ref> ps;
    auto& self = const_cast<std::list<instruction>&>(instructions_);
    for (auto it = self.begin(); it != self.end(); ++it)
        if (it->is_param()) ps.push_back(it);
    return ps;
}

std::string module::parameter_name(const instruction& ins) const {
    return ins.get_operator().attributes().at("name").as_string();
}

std::vector<std::string> module::parameter_names() const {
    std::vector<std::string> names;
    for (auto p : parameters()) names.push_back(p->get_operator().attributes().at("name").as_string());
    return names;
}

instruction_ref module::get_parameter(std::string_view name) const {
    auto& self = const_cast<std::list<instruction>&>(instructions_);
    for (auto it = self.begin(); it != self.end(); ++it)
        if (it->is_param() && it->get_operator().attributes().at("name").as_string() == name) return it;
    return self.end();
}

instruction_ref module::get_return() const {
    auto& self = const_cast<std::list<instruction>&>(instructions_);
    if (!self.empty() && self.back().is_return()) return std::prev(self.end());
    return self.end();
}

std::vector<shape> module::output_shapes() const {
    auto r = get_return();
    if (r != instructions_.end()) return input_shapes(r->inputs());
    if (instructions_.empty()) return {};
    return {instructions_.back().get_shape()};
}

void module::validate() const {
    std::unordered_set<const instruction*> seen;
    // The users of a value with many, sorted on first need, so that checking each of its uses is a
    // binary search: scanning made a shared constant with n users cost n^2.
    std::unordered_map<const instruction*, std::vector<const instruction*>> sorted_users;
    auto lists_user = [&](const instruction& in, const instruction* user) {
        const auto& outs = in.outputs();
        if (outs.size() <= 16) return std::any_of(outs.begin(), outs.end(), [&](instruction_ref u) { return &*u == user; });
        auto [it, added] = sorted_users.try_emplace(&in);
        if (added) {
            for (auto u : outs) it->second.push_back(&*u);
            std::sort(it->second.begin(), it->second.end(), std::less<const instruction*>());
        }
        return std::binary_search(it->second.begin(), it->second.end(), user, std::less<const instruction*>());
    };
    std::size_t index = 0;
    for (const auto& ins : instructions_) {
        auto where = [&] { return cat("module ", name_, ": instruction ", index, " (", to_string(ins.get_operator()), ")"); };
        for (auto in : ins.inputs()) {
            if (!seen.count(&*in)) fail(where(), ": uses an input that is not defined before it in this module");
            if (!lists_user(*in, &ins)) fail(where(), ": its input does not list it as a user");
        }
        for (auto user : ins.outputs()) {
            const auto& uin = user->inputs();
            if (std::none_of(uin.begin(), uin.end(), [&](instruction_ref i) { return &*i == &ins; }))
                fail(where(), ": lists a user that does not use it");
        }
        if (ins.is_return() && &ins != &instructions_.back()) fail(where(), ": @return is not last");
        if (!ins.get_operator().traits().builtin) {
            shape s = ins.get_operator().compute_shape(input_shapes(ins.inputs()), ins.module_inputs());
            if (s != ins.get_shape())
                fail(where(), ": recorded shape ", to_string(ins.get_shape()), " but its op computes ", to_string(s));
        }
        seen.insert(&ins);
        ++index;
    }
}

program::program() {
    modules_.push_back(std::make_unique<module>("main"));
    by_name_["main"] = modules_.back().get();
}

module& program::create_module(const std::string& name) {
    auto [it, added] = by_name_.try_emplace(name, nullptr);
    if (!added) fail("program: module '", name, "' exists already");
    modules_.push_back(std::make_unique<module>(name));
    it->second = modules_.back().get();
    return *modules_.back();
}

void program::remove_modules_after(std::size_t count) {
    if (count == 0 || count > modules_.size()) fail("program: cannot keep ", count, " of ", modules_.size(), " modules");
    std::set<const module*> removed;
    for (std::size_t i = count; i < modules_.size(); ++i) removed.insert(modules_[i].get());
    for (std::size_t i = 0; i < count; ++i)
        for (const auto& ins : *modules_[i])
            for (const module* sub : ins.module_inputs())
                if (removed.count(sub)) fail("program: module '", modules_[i]->name(), "' calls '", sub->name(), "'");
    for (std::size_t i = count; i < modules_.size(); ++i) by_name_.erase(modules_[i]->name());
    modules_.resize(count);
}

module* program::find_module(std::string_view name) const {
    auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? nullptr : it->second;
}

std::vector<module*> program::modules() const {
    std::vector<module*> ms;
    for (const auto& m : modules_) ms.push_back(m.get());
    return ms;
}

std::vector<module*> program::modules_in_dependency_order() const {
    std::vector<module*> order;
    std::set<const module*> done, active;
    auto visit = [&](auto& self, module* m) -> void {
        if (done.count(m)) return;
        if (!active.insert(m).second) fail("program: module '", m->name(), "' calls itself");
        for (const auto& ins : *m)
            for (auto* sub : ins.module_inputs()) self(self, sub);
        active.erase(m);
        done.insert(m);
        order.push_back(m);
    };
    for (const auto& m : modules_) visit(visit, m.get());
    return order;
}

void program::validate() const {
    std::unordered_set<const module*> ms;
    for (const auto& m : modules_) ms.insert(m.get());
    for (auto* m : modules_in_dependency_order()) {
        m->validate();
        for (const auto& ins : *m)
            for (auto* sub : ins.module_inputs())
                if (!ms.contains(sub))
                    fail("module ", m->name(), ": ", to_string(ins.get_operator()), " calls a module outside the program");
    }
}

void module::copy_from(const module& o, const std::unordered_map<const module*, module*>& mods) {
    std::unordered_map<const instruction*, instruction_ref> map;
    for (const auto& ins : o) {
        std::vector<instruction_ref> inputs;
        inputs.reserve(ins.inputs().size());
        for (auto in : ins.inputs()) inputs.push_back(map.at(&*in));
        std::vector<module*> subs;
        for (auto* sub : ins.mods_) subs.push_back(mods.at(sub));
        instruction c(ins.op_, ins.result_, std::move(inputs), std::move(subs));
        c.literal_ = ins.literal_;
        c.source_name_ = ins.source_name_;
        map[&ins] = insert(end(), std::move(c));
    }
}

program program::clone() const {
    program c;
    std::unordered_map<const module*, module*> mods{{modules_.front().get(), &c.main()}};
    for (std::size_t i = 1; i < modules_.size(); ++i) mods[modules_[i].get()] = &c.create_module(modules_[i]->name());
    for (const auto& m : modules_) mods.at(m.get())->copy_from(*m, mods);
    return c;
}

bool program::operator==(const program& o) const { return to_string(*this) == to_string(o); }

}  // namespace kiln
