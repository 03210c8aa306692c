// Helpers shared by the simplification rule families (see simplify_rules.hpp).
#include "passes/simplify/simplify_rules.hpp"

#include <algorithm>

#include "ops/views.hpp"

namespace kiln {

namespace {
// Whether `user`, reading a value of shape `s` where it reads `from`, keeps its own shape. Ops
// with submodules pass inputs on to parameters of declared shapes: they are left alone.
bool keeps_shape(instruction_ref user, instruction_ref from, const shape& s) {
    if (user->is_return() || !user->module_inputs().empty()) return false;
    std::vector<shape> shapes;
    for (auto in : user->inputs()) shapes.push_back(in == from ? s : in->get_shape());
    return user->get_operator().compute_shape(shapes) == user->get_shape();
}
}  // namespace

bool users_take(instruction_ref root, const shape& s, uses which) {
    if (s == root->get_shape()) return true;
    const shape& b = root->get_shape();
    if (s.type() != b.type() || s.lens() != b.lens() || s.dynamic() || b.dynamic()) return false;
    bool some = false;
    for (auto user : root->outputs()) {
        if (keeps_shape(user, root, s))
            some = true;
        else if (which == uses::all)
            return false;
    }
    return some;
}

bool replace_where_shape_allows(rewriter& r, instruction_ref with, uses which) {
    auto root = r.root();
    if (with->get_shape() == root->get_shape()) {
        r.replace(with);
        return true;
    }
    if (!users_take(root, with->get_shape(), which)) return false;
    for (auto user : std::vector<instruction_ref>(root->outputs())) {
        if (!keeps_shape(user, root, with->get_shape())) continue;
        std::vector<instruction_ref> inputs = user->inputs();
        std::replace(inputs.begin(), inputs.end(), root, with);
        r.mod().replace_instruction(user, user->get_operator(), inputs);
    }
    return true;
}

match::pattern relabel_of(match::pattern input) {
    std::vector<match::pattern> alts;
    for (const char* n : {"reshape", "flatten", "squeeze", "unsqueeze"}) alts.push_back(match::op(n, input));
    return match::any_of(alts);
}

std::vector<std::int64_t> perm_of(instruction_ref t) {
    std::vector<std::int64_t> p = t->get_operator().get<ops::transpose>().permutation;
    if (p.empty())
        for (std::size_t i = t->get_shape().ndim(); i-- > 0;) p.push_back(static_cast<std::int64_t>(i));
    return p;
}

bool takes_scale(instruction_ref ins) {
    return ins->get_operator().traits().contraction && ins->inputs().size() >= 2 &&
           ins->inputs()[1]->is_literal();
}

std::vector<std::size_t> aligned_lens(const shape& c, std::size_t rank) {
    if (c.dynamic() || c.ndim() > rank) return {};
    std::vector<std::size_t> lens(rank - c.ndim(), 1);
    lens.insert(lens.end(), c.lens().begin(), c.lens().end());
    return lens;
}

bool per_axis(const instruction& c, std::size_t rank, std::size_t axis, std::size_t len) {
    if (!c.is_literal() || axis >= rank) return false;
    auto lens = aligned_lens(c.get_shape(), rank);
    if (lens.empty()) return false;
    for (std::size_t d = 0; d < rank; ++d)
        if (d != axis && lens[d] != 1) return false;
    return lens[axis] == len || lens[axis] == 1;
}

instruction_ref relaid(rewriter& r, instruction_ref c, std::vector<std::size_t> lens) {
    const argument& a = c->get_literal().get_argument();
    shape s(a.get_shape().type(), lens);
    if (a.get_shape().elements() != s.elements()) s = shape(s.type(), lens, std::vector<std::size_t>(lens.size(), 0));
    return r.add_literal(literal(a.view(s)));
}

}  // namespace kiln
