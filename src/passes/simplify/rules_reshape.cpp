// View chains: transposes compose (and cancel when they compose to the identity); reshape,
// flatten, squeeze and unsqueeze keep the row-major order of elements, so a chain of them is one
// reshape of its first input (or that input, when the lens come back); views of literals become
// literals (no copy at run time, and rules downstream see a constant). Reshapes made here spell
// out every dim (allowzero, so that a 0 is a size, not a copied dim).
#include "core/eval.hpp"
#include "core/reflect.hpp"
#include "ops/gather.hpp"
#include "passes/simplify/simplify_rules.hpp"

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

}  // namespace

std::vector<rule> reshape_rules() {
    return {transpose_identity(), transpose_merge(), reshape_noop(), reshape_merge(), literal_view(),
            gather_constant_index()};
}

}  // namespace kiln
