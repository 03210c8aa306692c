#include "passes/view_rewire.hpp"

#include <algorithm>

namespace kiln {
namespace {

std::vector<shape> shapes_of(const std::vector<instruction_ref>& in) {
    std::vector<shape> r;
    for (auto i : in) r.push_back(i->get_shape());
    return r;
}

// u's input shapes with `v` read as `s`.
std::vector<shape> shapes_with(instruction_ref u, instruction_ref v, const shape& s) {
    std::vector<shape> r;
    for (auto i : u->inputs()) r.push_back(i == v ? s : i->get_shape());
    return r;
}

}  // namespace

bool users_take_layout(instruction_ref v, const shape& s) {
    for (auto u : v->outputs()) {
        if (u->is_return() || !u->module_inputs().empty()) return false;
        const operation& op = u->get_operator();
        const auto now = shapes_of(u->inputs()), then = shapes_with(u, v, s);
        if (op.output_alias(now) >= 0) {
            if (op.output_alias(then) < 0 || !users_take_layout(u, op.compute_shape(then, {}))) return false;
        } else if (op.compute_shape(then, {}) != u->get_shape()) {
            return false;
        }
    }
    return true;
}

void move_users(module& m, instruction_ref old, instruction_ref rep) {
    const std::vector<instruction_ref> users = old->outputs();
    for (auto u : users) {
        if (u->is_return() || !u->module_inputs().empty()) continue;
        std::vector<instruction_ref> in = u->inputs();
        std::replace(in.begin(), in.end(), old, rep);
        const auto shapes = shapes_of(in);
        const operation& op = u->get_operator();
        if (op.output_alias(shapes) >= 0) {
            auto view = m.insert_instruction(u, op, in);
            if (view->get_shape() == u->get_shape())
                m.replace_uses(u, view);
            else
                move_users(m, u, view);
        } else if (op.compute_shape(shapes, {}) == u->get_shape()) {
            m.replace_instruction(u, op, in);
        }
    }
}

}  // namespace kiln
