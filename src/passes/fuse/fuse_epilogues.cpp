#include "passes/fuse/fuse_epilogues.hpp"

#include <algorithm>
#include <unordered_set>

#include "passes/fuse/fusion_region.hpp"

namespace kiln {

namespace {

bool is_contraction(const instruction& ins) {
    return ins.get_operator().traits().contraction && !ins.get_shape().dynamic() && ins.get_shape().standard() &&
           !is_packed(ins.get_shape().type());
}

// A view of the product that keeps each element once (GPT-2's Conv1D computes [batch * seq, N]
// and reshapes it to [batch, seq, N] before its residual add): the epilogue reads the product
// through it, so the add joins the GEMM's epilogue.
bool reorders_product(const instruction& ins) {
    std::vector<shape> in;
    for (auto i : ins.inputs()) in.push_back(i->get_shape());
    int alias = ins.get_operator().output_alias(in);
    return alias >= 0 && !is_broadcast_view(ins) && !ins.get_shape().dynamic() && !ins.get_shape().is_tuple() &&
           ins.get_shape().elements() == in[static_cast<std::size_t>(alias)].elements();
}

// Fusible pointwise ops (and reordering views) reachable from `anchor` through them, latest first.
std::vector<instruction_ref> downstream(const region_grower& grower, instruction_ref anchor,
                                       const std::function<bool(const instruction&)>& accepts) {
    std::unordered_set<const instruction*> reached{&*anchor};
    std::vector<instruction_ref> r, stack{anchor};
    while (!stack.empty()) {
        auto ins = stack.back();
        stack.pop_back();
        for (auto user : ins->outputs())
            if ((is_fusible_pointwise(*user) || reorders_product(*user)) && (!accepts || accepts(*user)) &&
                reached.insert(&*user).second) {
                r.push_back(user);
                stack.push_back(user);
            }
    }
    std::sort(r.begin(), r.end(), [&](auto a, auto b) { return grower.before(b, a); });
    return r;
}

// The largest region made of the anchor and ops downstream of it, or none.
std::vector<instruction_ref> epilogue_region(const region_grower& grower, instruction_ref anchor,
                                             const std::function<bool(const instruction&)>& accepts) {
    auto after = downstream(grower, anchor, accepts);
    std::unordered_set<const instruction*> allowed{&*anchor};
    for (auto ins : after) allowed.insert(&*ins);
    auto can_join = [&](instruction_ref in) { return allowed.contains(&*in); };
    // A result also used by something that cannot join never joins: no root need be tried.
    const auto& users = anchor->outputs();
    if (!std::all_of(users.begin(), users.end(), can_join)) return {};
    for (auto root : after) {
        if (!is_fusible_pointwise(*root)) continue;   // a region computes something after the product
        auto members = grower.grow(root, can_join);
        if (members.front() == anchor) return members;   // in program order, the anchor comes first
    }
    return {};
}

}  // namespace

void fuse_epilogues::apply(program& p, module& m) const {
    m.remove_dead_code();   // see fusion_region.hpp
    region_grower grower(m);
    module_namer names(p, "fused_epilogue");
    const operation op = make_op("fused_epilogue");
    std::vector<instruction_ref> anchors;
    for (auto ins = m.begin(); ins != m.end(); ++ins)
        if (is_contraction(*ins)) anchors.push_back(ins);
    for (auto anchor : anchors) {
        auto members = epilogue_region(grower, anchor, accepts);
        if (members.empty()) continue;
        grower.forget(members);
        fuse_region(p, m, members, op, names);
    }
}

}  // namespace kiln
