// Layout rules. kiln ops read any strides, so a copy into standard layout (contiguous) is only
// needed where a value's layout is observable: at @return (program outputs stay as laid out)
// and where a user's own shape would change (a view of the copy). Elsewhere users read the
// copy's input directly. Transposes move through pointwise ops when that lets a pair cancel;
// reshapes sink below pointwise ops towards a reshape that cancels them; explicit numpy
// broadcasts into pointwise ops go (the ops broadcast by themselves).
#include "core/eval.hpp"
#include "core/reflect.hpp"
#include "passes/simplify/simplify_rules.hpp"

namespace kiln {
namespace {

using match::any;
using match::op;

// contiguous(x) -> x where the reader's shape allows
rule contiguous_elide() {
    return {"contiguous_elide", op("contiguous", any("x")),
            [](rewriter& r, const bindings& b) { return replace_where_shape_allows(r, b["x"]); }};
}

// Whether q undoes p (q[p[i]] == i).
bool inverse(const std::vector<std::int64_t>& p, const std::vector<std::int64_t>& q) {
    if (p.size() != q.size()) return false;
    for (std::size_t i = 0; i < p.size(); ++i)
        if (q[static_cast<std::size_t>(p[i])] != static_cast<std::int64_t>(i)) return false;
    return true;
}

// The literal `c` (broadcast against `rank` dims) transposed by p into a new literal; a single
// value needs no transpose.
instruction_ref transposed_literal(rewriter& r, instruction_ref c, std::size_t rank,
                                   const std::vector<std::int64_t>& p) {
    if (c->get_shape().elements() == 1) return c;
    const argument& a = c->get_literal().get_argument();
    argument full = a.view(shape(a.get_shape().type(), aligned_lens(a.get_shape(), rank)));
    auto t = compute_op(make_op("transpose", value{{"permutation", to_value(p)}}), std::span(&full, 1));
    return r.add_literal(literal(t));
}

// transpose_p(f(transpose_q(x), c, ...)) -> f(x, transpose_p(c), ...), f pointwise, q undoing p,
// the other inputs literals
rule transpose_through_pointwise() {
    return {"transpose_through_pointwise", op("transpose", match::pointwise("f").used_once()),
            [](rewriter& r, const bindings& b) {
                auto f = b["f"];
                auto p = perm_of(r.root());
                std::size_t rank = p.size(), moved = 0;
                for (auto in : f->inputs()) {
                    if (in->name() == "transpose" && inverse(perm_of(in), p))
                        ++moved;
                    else if (!in->is_literal() || aligned_lens(in->get_shape(), rank).empty())
                        return false;
                }
                shape result(f->get_shape().type(), r.root()->get_shape().lens());
                if (moved == 0 || !users_take(r.root(), result, uses::all)) return false;
                std::vector<instruction_ref> inputs;
                for (auto in : f->inputs())
                    inputs.push_back(in->is_literal() ? transposed_literal(r, in, rank, p) : in->inputs().front());
                return replace_where_shape_allows(r, r.add(f->get_operator(), inputs), uses::all);
            }};
}

// f(reshape(x), s) -> reshape(f(x, s)), f pointwise, s single values: reshapes sink towards
// their users, where a reshape back cancels them (reshape stands for any relabelling op)
rule sink_reshape() {
    return {"sink_reshape", match::pointwise(), [](rewriter& r, const bindings&) {
                const shape& out = r.root()->get_shape();
                if (out.dynamic()) return false;
                std::vector<instruction_ref> inputs;
                const std::vector<std::size_t>* source = nullptr;
                bindings unused;
                for (auto in : r.root()->inputs()) {
                    if (relabel_of(any())(in, unused) && in->get_shape().lens() == out.lens() &&
                        !in->inputs().front()->get_shape().dynamic() &&
                        (source == nullptr || *source == in->inputs().front()->get_shape().lens())) {
                        source = &in->inputs().front()->get_shape().lens();
                        inputs.push_back(in->inputs().front());
                    } else if (in->is_literal() && in->get_shape().elements() == 1 && in->get_shape().ndim() <= 1) {
                        inputs.push_back(in);
                    } else {
                        return false;
                    }
                }
                if (source == nullptr) return false;
                auto f = r.add(r.root()->get_operator(), inputs);
                auto back = r.add("reshape", {f}, value{{"dims", to_value(out.lens())}, {"allowzero", true}});
                return replace_where_shape_allows(r, back, uses::all);
            }};
}

// f(multibroadcast(x), y) -> f(x, y), f pointwise, when f's result keeps its shape
rule broadcast_into_pointwise() {
    return {"broadcast_into_pointwise", match::pointwise(), [](rewriter& r, const bindings&) {
                auto root = r.root();
                if (root->inputs().size() < 2) return false;
                std::vector<instruction_ref> inputs = root->inputs();
                bool changed = false;
                for (std::size_t i = 0; i < inputs.size(); ++i) {
                    if (inputs[i]->name() != "multibroadcast" && inputs[i]->name() != "expand") continue;
                    auto trial = inputs;
                    trial[i] = inputs[i]->inputs().front();
                    std::vector<shape> shapes;
                    for (auto t : trial) shapes.push_back(t->get_shape());
                    if (root->get_operator().compute_shape(shapes) != root->get_shape()) continue;
                    inputs = trial;
                    changed = true;
                }
                if (!changed) return false;
                r.replace(r.add(root->get_operator(), inputs));
                return true;
            }};
}

}  // namespace

std::vector<rule> layout_rules() {
    return {contiguous_elide(), transpose_through_pointwise(), sink_reshape(), broadcast_into_pointwise()};
}

}  // namespace kiln
