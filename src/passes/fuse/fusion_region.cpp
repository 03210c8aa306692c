#include "passes/fuse/fusion_region.hpp"

#include <algorithm>
#include <queue>
#include <unordered_set>

#include "core/error.hpp"

namespace kiln {

bool is_broadcast_view(const instruction& ins) { return ins.get_operator().traits().broadcast_view; }

bool is_small_literal(const instruction& ins) {
    // A few elements fit in a kernel's constants; larger ones are read from memory like any input.
    return ins.is_literal() && ins.get_shape().elements() <= 16 && !is_packed(ins.get_shape().type());
}

namespace {
bool plain_tensor(const shape& s) { return !s.is_tuple() && !s.dynamic() && !is_packed(s.type()); }
}  // namespace

bool is_fusible_pointwise(const instruction& ins) {
    auto t = ins.get_operator().traits();
    if (!t.pointwise || t.side_effects || t.fusion || !plain_tensor(ins.get_shape()) || !ins.get_shape().standard())
        return false;
    return std::all_of(ins.inputs().begin(), ins.inputs().end(),
                       [](instruction_ref in) { return plain_tensor(in->get_shape()); });
}

bool worth_duplicating(const instruction& ins) {
    if (!is_fusible_pointwise(ins) || ins.outputs().size() < 2) return false;
    for (auto u : ins.outputs())
        if (!is_fusible_pointwise(*u)) return false;
    std::size_t read = 0;
    std::unordered_set<const instruction*> seen;
    for (auto in : ins.inputs()) {
        const instruction* src = &*in;
        while (is_broadcast_view(*src)) src = &*src->inputs().front();
        if (is_small_literal(*src) || !seen.insert(src).second) continue;
        read += src->get_shape().bytes();
    }
    return read <= ins.get_shape().bytes();
}

region_grower::region_grower(module& m) {
    std::size_t n = 0;
    for (auto& ins : m) position_[&ins] = n++;
}

std::vector<instruction_ref> region_grower::grow(instruction_ref root,
                                                 const std::function<bool(instruction_ref)>& can_join,
                                                 const std::function<bool(instruction_ref)>& can_copy,
                                                 std::vector<instruction_ref>* copies) const {
    auto pos = [&](instruction_ref i) { return position_.at(&*i); };
    auto earlier = [&](instruction_ref a, instruction_ref b) { return pos(a) < pos(b); };
    // The latest candidate first: its users, all later, have been judged.
    std::priority_queue<instruction_ref, std::vector<instruction_ref>, decltype(earlier)> queue(earlier);
    std::unordered_set<const instruction*> members{&*root}, queued;
    std::vector<instruction_ref> result{root};
    auto push_inputs = [&](instruction_ref ins) {
        for (auto in : ins->inputs())
            if (position_.contains(&*in) && !queued.contains(&*in)) {
                queued.insert(&*in);
                queue.push(in);
            }
    };
    push_inputs(root);
    while (!queue.empty()) {
        auto cand = queue.top();
        queue.pop();
        const auto& users = cand->outputs();
        if (!std::all_of(users.begin(), users.end(), [&](instruction_ref u) { return members.contains(&*u); })) {
            if (can_copy && copies && can_copy(cand)) copies->push_back(cand);
            continue;
        }
        if (!can_join(cand)) continue;
        members.insert(&*cand);
        result.push_back(cand);
        push_inputs(cand);
    }
    std::sort(result.begin(), result.end(), earlier);
    return result;
}

void region_grower::forget(const std::vector<instruction_ref>& members) {
    for (auto mem : members) position_.erase(&*mem);
}

std::string module_namer::next() {
    while (true) {
        std::string name = cat(prefix_, n_++);
        if (!p_.find_module(name)) return name;
    }
}

namespace {

// Copies a region into a fused body: non-members become parameters, except broadcast views
// (copied, reading their source), small literals and the region's copies (copied, reading their
// inputs).
class body_builder {
public:
    body_builder(module& body, const std::vector<instruction_ref>& members, const std::vector<instruction_ref>& copies)
        : body_(body) {
        for (auto mem : members) members_.insert(&*mem);
        for (auto c : copies) copies_.insert(&*c);
        for (auto mem : members)
            for (auto in : mem->inputs()) collect(in);
        for (std::size_t i = 0; i < inputs_.size(); ++i)
            mapped_[&*inputs_[i]] = body_.add_parameter(cat("x", i), inputs_[i]->get_shape());
        for (auto mem : members) copy(mem);
        body_.add_return({mapped_.at(&*members.back())});
    }
    const std::vector<instruction_ref>& inputs() const { return inputs_; }

private:
    bool copied(instruction_ref x) const { return is_broadcast_view(*x) || is_small_literal(*x) || copies_.contains(&*x); }

    void collect(instruction_ref x) {
        if (members_.contains(&*x)) return;
        if (is_broadcast_view(*x)) return collect(x->inputs().front());
        if (copies_.contains(&*x)) {
            for (auto in : x->inputs()) collect(in);
            return;
        }
        if (is_small_literal(*x)) return;
        if (std::find(inputs_.begin(), inputs_.end(), x) == inputs_.end()) inputs_.push_back(x);
    }

    instruction_ref value_of(instruction_ref x) {
        if (auto it = mapped_.find(&*x); it != mapped_.end()) return it->second;
        if (!copied(x)) fail("fusion: ", x->name(), " is neither a member nor an input of the region");
        if (x->is_literal()) return mapped_[&*x] = body_.add_literal(x->get_literal());
        std::vector<instruction_ref> args;
        for (auto in : x->inputs()) args.push_back(value_of(in));
        auto v = body_.add_instruction(x->get_operator(), args);
        if (copies_.contains(&*x)) v->set_source_name(x->source_name());
        return mapped_[&*x] = v;
    }

    void copy(instruction_ref mem) {
        std::vector<instruction_ref> args;
        for (auto in : mem->inputs()) args.push_back(value_of(in));
        auto c = body_.add_instruction(mem->get_operator(), args, mem->module_inputs());
        c->set_source_name(mem->source_name());
        mapped_[&*mem] = c;
    }

    module& body_;
    std::unordered_set<const instruction*> members_, copies_;
    std::vector<instruction_ref> inputs_;
    std::unordered_map<const instruction*, instruction_ref> mapped_;
};

}  // namespace

instruction_ref fuse_region(program& p, module& m, const std::vector<instruction_ref>& members,
                            const operation& op, module_namer& names, const std::vector<instruction_ref>& copies) {
    module& body = p.create_module(names.next());
    body_builder b(body, members, copies);
    instruction_ref root = members.back();
    auto fused = m.insert_instruction(root, op, b.inputs(), {&body});
    fused->set_source_name(root->source_name());
    m.replace_uses(root, fused);
    for (auto it = members.rbegin(); it != members.rend(); ++it) m.remove_instruction(*it);
    return fused;
}

}  // namespace kiln
