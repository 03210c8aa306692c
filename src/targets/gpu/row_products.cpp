#include "targets/gpu/row_products.hpp"

#include <algorithm>

#include "core/reflect.hpp"
#include "ops/gemm.hpp"
#include "ops/views.hpp"
#include "passes/view_rewire.hpp"

namespace kiln::gpu {
namespace {

// Whether the dims before the last of s walk its rows with one stride (one GEMM's M).
bool rows_fold(const shape& s) {
    std::size_t stride = 0;
    bool first = true;
    for (std::size_t d = s.ndim() - 1; d-- > 0;) {
        if (s.lens()[d] == 1) continue;
        if (!first && s.strides()[d] != stride) return false;
        stride = s.strides()[d] * s.lens()[d];
        first = false;
    }
    return true;
}

// An operand of at most `rank` dims that is the same for every row (a bias, a single value).
bool row_constant(const shape& o, std::size_t rank) {
    if (o.ndim() > rank) return false;
    for (std::size_t d = 0; d + 1 < o.ndim(); ++d)
        if (o.lens()[d] != 1 && o.strides()[d] != 0) return false;
    return true;
}

// The pointwise user of `v` (its only user) whose other operands are row constants, or end.
instruction_ref row_pointwise(module& m, instruction_ref v) {
    if (v->outputs().size() != 1) return m.end();
    auto u = v->outputs().front();
    if (!u->get_operator().traits().pointwise || !u->module_inputs().empty() || u->get_shape().lens() != v->get_shape().lens())
        return m.end();
    for (auto i : u->inputs())
        if (i != v && !row_constant(i->get_shape(), v->get_shape().ndim())) return m.end();
    return u;
}

void rewrite(module& m, instruction_ref d) {
    auto t = d->inputs()[0], w = d->inputs()[1];
    const auto* tr = t->get_operator().get_if<ops::transpose>();
    if (!tr || w->get_shape().ndim() != 2 || w->get_shape().dynamic()) return;
    const auto x = t->inputs().front();
    const shape &xs = x->get_shape(), &ts = t->get_shape();
    const std::size_t n = ts.ndim();
    auto p = tr->permutation;
    if (p.empty())
        for (std::size_t i = n; i-- > 0;) p.push_back(static_cast<std::int64_t>(i));
    if (n < 3 || xs.dynamic() || p.back() != static_cast<std::int64_t>(n - 1) || rows_fold(ts) || !rows_fold(xs)) return;
    // The chain the rows' order moves past: the product, then row-constant pointwise ops.
    std::vector<instruction_ref> chain{d};
    for (auto u = row_pointwise(m, d); u != m.end(); u = row_pointwise(m, u)) chain.push_back(u);
    // Shapes first: nothing is inserted unless every user of the chain's end takes the result.
    std::vector<shape> in{xs, w->get_shape()};
    shape s = d->get_operator().compute_shape(in, {});
    for (std::size_t i = 1; i < chain.size(); ++i) {
        std::vector<shape> ins;
        for (auto j : chain[i]->inputs()) ins.push_back(j == chain[i - 1] ? s : j->get_shape());
        s = chain[i]->get_operator().compute_shape(ins, {});
    }
    const operation back = make_op("transpose", value{{"permutation", to_value(p)}});
    const shape result = back.compute_shape(std::vector<shape>{s}, {});
    if (!users_take_layout(chain.back(), result)) return;
    const auto at = chain.back();
    auto y = m.insert_instruction(at, d->get_operator(), {x, w});
    for (std::size_t i = 1; i < chain.size(); ++i) {
        std::vector<instruction_ref> ins = chain[i]->inputs();
        std::replace(ins.begin(), ins.end(), chain[i - 1], y);
        y = m.insert_instruction(at, chain[i]->get_operator(), ins);
    }
    move_users(m, chain.back(), m.insert_instruction(at, back, {y}));
}

}  // namespace

void row_products::apply(module& m) const {
    std::vector<instruction_ref> dots;
    for (auto ins = m.begin(); ins != m.end(); ++ins)
        if (ins->get_operator().get_if<ops::dot>() && ins->inputs()[0]->name() == "transpose") dots.push_back(ins);
    for (auto d : dots) rewrite(m, d);
}

}  // namespace kiln::gpu
