#include "passes/simplify/propagate_constant.hpp"

#include <unordered_map>

#include "core/eval.hpp"

namespace kiln {

namespace {

bool static_shape_query(const instruction& ins) {
    return ins.name() == "shape_of" && !ins.inputs().front()->get_shape().dynamic() &&
           !ins.inputs().front()->get_shape().is_tuple();
}

class folder {
public:
    explicit folder(module& m) : m_(m) {}

    bool is_constant(instruction_ref ins) {
        auto it = constant_.find(&*ins);
        if (it != constant_.end()) return it->second;
        bool c = decide(ins);
        constant_[&*ins] = c;
        return c;
    }

    // The value of a constant instruction, computed once.
    const argument& value_of(instruction_ref ins) {
        auto it = values_.find(&*ins);
        if (it != values_.end()) return it->second;
        argument v;
        if (ins->is_literal()) {
            v = ins->get_literal().get_argument();
        } else if (static_shape_query(*ins)) {
            // shape_of reads only its input's lens, so a one-byte stand-in with those lens will do.
            const auto& lens = ins->inputs().front()->get_shape().lens();
            argument stand_in(shape(dtype::int8, lens, std::vector<std::size_t>(lens.size(), 0)));
            v = compute_op(ins->get_operator(), std::span(&stand_in, 1));
        } else {
            std::vector<argument> args;
            for (auto in : ins->inputs()) args.push_back(value_of(in));
            v = compute_op(ins->get_operator(), args, ins->module_inputs());
        }
        return values_.emplace(&*ins, std::move(v)).first->second;
    }

private:
    bool decide(instruction_ref ins) {
        if (ins->is_literal()) return true;
        if (ins->is_param() || ins->is_return()) return false;
        auto traits = ins->get_operator().traits();
        if (traits.side_effects || ins->get_shape().dynamic() || !ins->get_shape().is_tensor()) return false;
        if (static_shape_query(*ins)) return true;
        if (ins->inputs().empty()) return false;
        for (auto in : ins->inputs())
            if (!is_constant(in)) return false;
        return true;
    }

    module& m_;
    std::unordered_map<const instruction*, bool> constant_;
    std::unordered_map<const instruction*, argument> values_;
};

bool is_view(const instruction& ins) {
    std::vector<shape> in;
    for (auto i : ins.inputs()) in.push_back(i->get_shape());
    return ins.get_operator().output_alias(in) >= 0;
}

// A constant that becomes a literal: computed (not a view) and laid out as a literal is.
bool foldable(folder& f, instruction_ref ins) {
    if (ins->is_literal() || !f.is_constant(ins)) return false;
    if (static_shape_query(*ins)) return true;
    return !is_view(*ins) && ins->get_shape().standard();
}

// A constant is replaced when something other than a folded constant uses it (or the module
// returns it); constants used only by folded constants disappear with them.
bool needed_as_literal(folder& f, instruction_ref ins) {
    for (auto u : ins->outputs())
        if (u->is_return() || !foldable(f, u)) return true;
    return false;
}

}  // namespace

void propagate_constant::apply(module& m) const {
    folder f(m);
    std::vector<instruction_ref> to_fold;
    for (auto ins = m.begin(); ins != m.end(); ++ins)
        if (foldable(f, ins) && needed_as_literal(f, ins)) to_fold.push_back(ins);
    for (auto ins : to_fold) {
        auto lit = m.insert_literal(ins, literal(f.value_of(ins)));
        m.replace_uses(ins, lit);
    }
}

}  // namespace kiln
