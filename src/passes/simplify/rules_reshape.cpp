// View chains: transposes compose (and cancel when they compose to the identity); reshape,
// flatten, squeeze and unsqueeze keep the row-major order of elements, so a chain of them is one
// reshape of its first input (or that input, when the lens come back); views of literals become
// literals (no copy at run time, and rules downstream see a constant). Reshapes made here spell
// out every dim (allowzero, so that a 0 is a size, not a copied dim).
#include <algorithm>

#include "core/eval.hpp"
#include "core/reflect.hpp"
#include "ops/gather.hpp"
#include "passes/simplify/simplify_rules.hpp"
#include "passes/view_rewire.hpp"

namespace kiln {
namespace {

using match::any;
using match::any_of;
using match::op;

bool is_identity(const std::vector<std::int64_t>& p) {
    for (std::size_t i = 0; i < p.size(); ++i)
        if (p[i] != static_cast<std::int64_t>(i)) return false;
    return true;
}

// transpose_p2(transpose_p1(x)) -> transpose_{p1[p2]}(x), or x when that is the identity
rule transpose_merge() {
    return {"transpose_merge", op("transpose", op("transpose", any("x")).bind("inner")),
            [](rewriter& r, const bindings& b) {
                auto p1 = perm_of(b["inner"]), p2 = perm_of(r.root());
                std::vector<std::int64_t> p;
                for (auto i : p2) p.push_back(p1[static_cast<std::size_t>(i)]);
                if (is_identity(p)) return replace_where_shape_allows(r, b["x"]);
                r.replace(r.add("transpose", {b["x"]}, value{{"permutation", to_value(p)}}));
                return true;
            }};
}

// transpose_id(x) -> x
rule transpose_identity() {
    return {"transpose_identity", op("transpose", any("x")), [](rewriter& r, const bindings& b) {
                return is_identity(perm_of(r.root())) && replace_where_shape_allows(r, b["x"]);
            }};
}

// reshape(x) -> x, x already of those lens (reshape stands for any relabelling op)
rule reshape_noop() {
    return {"reshape_noop", relabel_of(any("x")), [](rewriter& r, const bindings& b) {
                return b["x"]->get_shape().lens() == r.root()->get_shape().lens() &&
                       replace_where_shape_allows(r, b["x"]);
            }};
}

// reshape(reshape(x)) -> reshape(x), or x when the lens come back
rule reshape_merge() {
    return {"reshape_merge", relabel_of(relabel_of(any("x"))), [](rewriter& r, const bindings& b) {
                const shape& out = r.root()->get_shape();
                if (out.dynamic() || b["x"]->get_shape().dynamic()) return false;
                if (b["x"]->get_shape().lens() == out.lens()) return replace_where_shape_allows(r, b["x"]);
                // A relabelling chain gives standard strides, except perhaps on dims of length 1.
                shape merged(out.type(), out.lens());
                if (!out.standard() || !users_take(r.root(), merged, uses::all)) return false;
                auto merged_op = r.add("reshape", {b["x"]}, value{{"dims", to_value(out.lens())}, {"allowzero", true}});
                return replace_where_shape_allows(r, merged_op, uses::all);
            }};
}

// view(literal) -> literal, for relabelling views and transposes of a literal nothing else reads
rule literal_view() {
    auto view = any_of({relabel_of(match::constant("c")), op("transpose", match::constant("c"))});
    return {"literal_view", view, [](rewriter& r, const bindings& b) {
                auto c = b["c"];
                if (c->outputs().size() != 1 || c->get_shape().dynamic()) return false;
                const argument& a = c->get_literal().get_argument();
                literal folded(compute_op(r.root()->get_operator(), std::span(&a, 1)));
                if (!users_take(r.root(), folded.get_shape(), uses::all)) return false;
                return replace_where_shape_allows(r, r.add_literal(std::move(folded)), uses::all);
            }};
}

// gather(x, k) -> squeeze(slice(x)) for one constant index k (a scalar; an index of shape [1]
// keeps the dim): a view, where the gather would copy (the q, k and v a fused projection is split
// into by q = qkv[0]). An index outside [-n, n) stays a gather, which reports it.
rule gather_constant_index() {
    return {"gather_constant_index", op("gather", any("x"), match::constant("k")), [](rewriter& r, const bindings& b) {
                const shape& xs = b["x"]->get_shape();
                const shape& ks = b["k"]->get_shape();
                if (xs.dynamic() || ks.dynamic() || ks.elements() != 1 || ks.ndim() > 1 || xs.is_tuple()) return false;
                const auto axis = r.root()->get_operator().get<ops::gather>().axis;
                const auto rank = static_cast<std::int64_t>(xs.ndim());
                if (axis < -rank || axis >= rank) return false;
                const auto a = axis < 0 ? axis + rank : axis;
                const auto n = static_cast<std::int64_t>(xs.lens()[static_cast<std::size_t>(a)]);
                const double v = literal_values(*b["k"]).at(0);
                if (v < -n || v >= n) return false;
                const auto k = static_cast<std::int64_t>(v < 0 ? v + n : v);
                instruction_ref y = r.add("slice", {b["x"]}, value{{"axes", to_value(std::vector<std::int64_t>{a})},
                                                              {"starts", to_value(std::vector<std::int64_t>{k})},
                                                              {"ends", to_value(std::vector<std::int64_t>{k + 1})}});
                if (ks.ndim() == 0) y = r.add("squeeze", {y}, value{{"axes", to_value(std::vector<std::int64_t>{a})}});
                return replace_where_shape_allows(r, y);
            }};
}

// The dims of a common refinement of two factorisations of one count (lens that multiply to it):
// every cut between dims of either is a cut of the result; empty when a dim of one straddles a cut
// of the other without dividing it (then no refinement exists). Dims of length 1 vanish.
std::vector<std::size_t> refinement(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
    std::vector<std::size_t> cuts;
    for (const auto* lens : {&a, &b}) {
        std::size_t p = 1;
        for (auto l : *lens) cuts.push_back(p *= l);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::vector<std::size_t> r;
    std::size_t prev = 1;
    for (auto c : cuts) {
        if (c == 0 || c % prev != 0) return {};
        if (c != prev) r.push_back(c / prev);
        prev = c;
    }
    return r;
}

// reshape(f(transpose(reshape(x)))) -> reshape(f(transpose'(reshape'(x)))), f absent or pointwise
// with single-value literals beside: the dims the outer reshape merges or splits refined through the
// transpose, so that no intermediate shape needs dims merged that memory keeps apart. An attention
// projection splitting [S, B, H * D] into heads as [S, B * H, D], transposed to [B * H, S, D] and
// split to [B, H, S, D] merges B with H in between, which copies; refined, q, k and v are strided
// views of the projection. Applied only where one of the reshapes copies and none of the new
// ones does.
rule reshape_through_transpose() {
    auto t = op("transpose", relabel_of(any("x")).bind("inner")).bind("t");
    auto scaled = match::pointwise("f").used_once();
    return {"reshape_through_transpose", any_of({relabel_of(t), relabel_of(scaled)}), [](rewriter& r, const bindings& b) {
                instruction_ref f = r.root()->inputs().front(), tr = f;
                std::size_t moving = 0;
                if (b.has("f")) {   // f reads the transpose and single values only
                    for (auto in : f->inputs()) {
                        if (in->name() == "transpose") {
                            tr = in;
                            ++moving;
                        } else if (!in->is_literal() || in->get_shape().elements() != 1 || in->get_shape().ndim() > 1) {
                            return false;
                        }
                    }
                    if (moving != 1 || tr->outputs().size() != 1) return false;
                    bindings inner;
                    if (!relabel_of(any("x"))(tr->inputs().front(), inner)) return false;
                }
                const instruction_ref u = tr->inputs().front(), x = u->inputs().front();
                const shape& out = r.root()->get_shape();
                const shape& us = u->get_shape();
                if (out.dynamic() || us.dynamic() || x->get_shape().dynamic()) return false;
                // Only where the inner or the outer reshape copies now, and below, none will.
                auto copies = [](instruction_ref v) {
                    return v->get_operator().output_alias(std::vector<shape>{v->inputs().front()->get_shape()}) < 0;
                };
                if (!copies(u) && !copies(r.root())) return false;
                const auto p = perm_of(tr);
                std::vector<std::size_t> permuted;
                for (auto d : p) permuted.push_back(us.lens()[static_cast<std::size_t>(d)]);
                const auto fine = refinement(permuted, out.lens());
                if (fine.empty()) return false;
                // Each dim of u (in the transpose's order) as its run of fine dims.
                std::vector<std::vector<std::size_t>> runs(us.ndim());
                std::size_t k = 0;
                for (auto d : p) {
                    std::size_t left = us.lens()[static_cast<std::size_t>(d)];
                    while (left > 1) {
                        if (k >= fine.size() || left % fine[k] != 0) return false;
                        runs[static_cast<std::size_t>(d)].push_back(k);
                        left /= fine[k++];
                    }
                }
                // reshape'(x): the fine dims in u's order; transpose': back to the transpose's order.
                std::vector<std::int64_t> split, perm(fine.size());
                std::vector<std::size_t> position(fine.size());
                for (const auto& run : runs)
                    for (auto f_dim : run) {
                        position[f_dim] = split.size();
                        split.push_back(static_cast<std::int64_t>(fine[f_dim]));
                    }
                for (std::size_t i = 0; i < fine.size(); ++i) perm[i] = static_cast<std::int64_t>(position[i]);
                const value split_attrs{{"dims", to_value(split)}, {"allowzero", true}};
                const value perm_attrs{{"permutation", to_value(perm)}};
                const operation split_op = make_op("reshape", split_attrs);
                if (split_op.output_alias(std::vector<shape>{x->get_shape()}) < 0) return false;
                shape s1 = split_op.compute_shape(std::vector<shape>{x->get_shape()});
                shape s2 = make_op("transpose", perm_attrs).compute_shape(std::vector<shape>{s1});
                if (b.has("f")) {
                    std::vector<shape> in;
                    for (auto i : f->inputs()) in.push_back(i == tr ? s2 : i->get_shape());
                    s2 = f->get_operator().compute_shape(in);
                }
                const value out_attrs{{"dims", to_value(out.lens())}, {"allowzero", true}};
                const operation out_op = make_op("reshape", out_attrs);
                if (out_op.output_alias(std::vector<shape>{s2}) < 0) return false;
                // Every user must take the result's strides (k's transpose to kT stays a view); checked
                // before anything is added, so that a declined match leaves nothing to match again.
                if (!users_take_layout(r.root(), out_op.compute_shape(std::vector<shape>{s2}))) return false;
                instruction_ref y = r.add("transpose", {r.add("reshape", {x}, split_attrs)}, perm_attrs);
                if (b.has("f")) {
                    std::vector<instruction_ref> in = f->inputs();
                    std::replace(in.begin(), in.end(), tr, y);
                    y = r.add(f->get_operator(), in);
                }
                move_users(r.mod(), r.root(), r.add(out_op, {y}));
                return true;
            }};
}

}  // namespace

std::vector<rule> reshape_rules() {
    return {transpose_identity(), transpose_merge(), reshape_noop(), reshape_merge(), literal_view(),
            gather_constant_index(), reshape_through_transpose()};
}

}  // namespace kiln
