// ONNX Einsum, composed of kiln's transpose, reshape, slice, reduce_sum and dot. Each operand
// first takes the diagonal of repeated labels (a strided slice of the two dims flattened) and
// sums the labels no other operand or the output uses; operands then combine left to right, two
// at a time, as one batched matrix product: shared labels still needed are the batch, shared
// labels no longer needed are contracted. Ellipsis dims align right across operands and
// broadcast (size 1 against n), as numpy's einsum. Needs static shapes.
#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>

#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;
using ints = std::vector<std::int64_t>;
using labels_t = std::vector<int>;

// Labels are letters (their char code) or, for the i-th ellipsis dim, ellipsis_label + i.
constexpr int ellipsis_label = 1000;

struct term {
    instruction_ref ins;
    labels_t labels;
};

bool has(const labels_t& ls, int l) { return std::find(ls.begin(), ls.end(), l) != ls.end(); }

std::string label_name(int l) {
    return l < ellipsis_label ? std::string(1, char(l)) : "... dim " + std::to_string(l - ellipsis_label);
}

// One side of an equation: labels with -1 for the ellipsis.
labels_t parse_labels(const std::string& s, const std::string& eq) {
    labels_t out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s.compare(i, 3, "...") == 0) {
            if (has(out, -1)) fail("equation '", eq, "': an ellipsis appears twice in one term");
            out.push_back(-1);
            i += 2;
        } else if (std::isalpha(static_cast<unsigned char>(s[i]))) {
            out.push_back(s[i]);
        } else {
            fail("equation '", eq, "': unexpected character '", s[i], "'; expected letters, ',', '->' or '...'");
        }
    }
    return out;
}

// The ellipsis of a term with `dims` ellipsis dims out of `total`, right-aligned.
labels_t expand(const labels_t& ls, std::size_t dims, std::size_t total) {
    labels_t out;
    for (int l : ls) {
        if (l != -1)
            out.push_back(l);
        else
            for (std::size_t i = total - dims; i < total; ++i) out.push_back(ellipsis_label + static_cast<int>(i));
    }
    return out;
}

struct equation {
    std::vector<labels_t> inputs;
    labels_t output;
};

// The terms left of "->", split at commas.
std::vector<labels_t> parse_terms(const std::string& lhs, const std::string& eq) {
    std::vector<labels_t> raw;
    for (std::size_t start = 0;;) {
        auto comma = lhs.find(',', start);
        raw.push_back(parse_labels(lhs.substr(start, comma - start), eq));
        if (comma == std::string::npos) return raw;
        start = comma + 1;
    }
}

// Without "->": the ellipsis dims, then the letters used once, in alphabetical order.
labels_t implicit_output(const std::vector<labels_t>& inputs, std::size_t ellipsis_dims) {
    std::map<int, int> uses;
    for (const auto& ls : inputs)
        for (int l : ls) ++uses[l];
    labels_t out;
    for (std::size_t i = 0; i < ellipsis_dims; ++i) out.push_back(ellipsis_label + static_cast<int>(i));
    for (auto [l, n] : uses)
        if (l < ellipsis_label && n == 1) out.push_back(l);
    return out;
}

equation parse(std::string eq, const inputs_t& in) {
    eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
    auto arrow = eq.find("->");
    std::vector<labels_t> raw = parse_terms(eq.substr(0, arrow), eq);
    if (raw.size() != in.size())
        fail("equation '", eq, "' has ", raw.size(), " terms but the node has ", in.size(), " inputs");
    std::size_t total = 0;
    std::vector<std::size_t> dims;
    for (std::size_t k = 0; k < raw.size(); ++k) {
        const shape& s = in[k]->get_shape();
        if (s.dynamic()) fail("input ", k, " is dynamic (", to_string(s), "); Einsum needs static shapes");
        std::size_t letters = raw[k].size() - (has(raw[k], -1) ? 1 : 0);
        if (has(raw[k], -1) ? s.ndim() < letters : s.ndim() != letters)
            fail("term ", k, " of '", eq, "' has ", letters, " labels but input ", k, " has ", s.ndim(), " dims");
        dims.push_back(s.ndim() - letters);
        total = std::max(total, dims.back());
    }
    equation e;
    for (std::size_t k = 0; k < raw.size(); ++k) e.inputs.push_back(expand(raw[k], dims[k], total));
    if (arrow == std::string::npos) return {e.inputs, implicit_output(e.inputs, total)};
    labels_t out = parse_labels(eq.substr(arrow + 2), eq);
    if (total > 0 && !has(out, -1))
        fail("equation '", eq, "': the inputs have ellipsis dims but the output has no '...' (as numpy requires)");
    e.output = expand(out, total, total);
    for (int l : e.output) {
        if (std::count(e.output.begin(), e.output.end(), l) > 1) fail("equation '", eq, "': an output label repeats");
        if (std::none_of(e.inputs.begin(), e.inputs.end(), [&](const labels_t& ls) { return has(ls, l); }))
            fail("equation '", eq, "': output label '", label_name(l), "' appears in no input");
    }
    return e;
}

std::size_t dim_of(const term& t, int l) {
    auto at = std::find(t.labels.begin(), t.labels.end(), l) - t.labels.begin();
    return t.ins->get_shape().lens()[static_cast<std::size_t>(at)];
}

// t with its dims in the order of `order` (a permutation of its labels).
term arrange(context& ctx, const term& t, const labels_t& order) {
    ints perm;
    for (int l : order) perm.push_back(std::find(t.labels.begin(), t.labels.end(), l) - t.labels.begin());
    ints ident(perm.size());
    std::iota(ident.begin(), ident.end(), 0);
    if (perm == ident) return {t.ins, order};
    return {ctx.add("transpose", value{{"permutation", to_value(perm)}}, {t.ins}), order};
}

instruction_ref reshape(context& ctx, instruction_ref x, const std::vector<std::size_t>& lens) {
    if (x->get_shape().lens() == lens) return x;
    ints dims(lens.begin(), lens.end());
    return ctx.add("reshape", value{{"dims", to_value(dims)}, {"allowzero", true}}, {x});
}

// Sums the dims of `ls` out of t.
term sum(context& ctx, const term& t, const labels_t& ls) {
    if (ls.empty()) return t;
    ints axes;
    labels_t rest;
    for (std::size_t i = 0; i < t.labels.size(); ++i) {
        if (has(ls, t.labels[i]))
            axes.push_back(static_cast<std::int64_t>(i));
        else
            rest.push_back(t.labels[i]);
    }
    return {ctx.add("reduce_sum", value{{"axes", to_value(axes)}, {"keepdims", false}}, {t.ins}), rest};
}

// Takes the diagonal of every label that t repeats: the two dims moved last, flattened, and
// sliced with step n + 1.
term diagonals(context& ctx, term t) {
    for (std::size_t i = 0; i < t.labels.size(); ++i) {
        int l = t.labels[i];
        auto j = static_cast<std::size_t>(std::find(t.labels.begin() + std::ptrdiff_t(i) + 1, t.labels.end(), l) -
                                          t.labels.begin());
        if (j == t.labels.size()) continue;
        const auto& lens = t.ins->get_shape().lens();
        if (lens[i] != lens[j]) fail("label '", label_name(l), "' repeats over dims of ", lens[i], " and ", lens[j]);
        ints perm;
        std::vector<std::size_t> flat;
        labels_t rest;
        for (std::size_t d = 0; d < lens.size(); ++d) {
            if (d == i || d == j) continue;
            perm.push_back(std::int64_t(d));
            flat.push_back(lens[d]);
            rest.push_back(t.labels[d]);
        }
        perm.insert(perm.end(), {std::int64_t(i), std::int64_t(j)});
        std::size_t n = lens[i];
        flat.push_back(n * n);
        auto x = reshape(ctx, ctx.add("transpose", value{{"permutation", to_value(perm)}}, {t.ins}), flat);
        auto last = static_cast<std::int64_t>(flat.size() - 1);
        x = ctx.add("slice",
                    value{{"axes", to_value(ints{last})},
                          {"starts", to_value(ints{0})},
                          {"ends", to_value(ints{std::int64_t(n * n)})},
                          {"steps", to_value(ints{std::int64_t(n + 1)})}},
                    {x});
        rest.push_back(l);
        return diagonals(ctx, {x, rest});
    }
    return t;
}

// Sums the labels of terms[k] that neither the other terms nor the output use.
void sum_unused(context& ctx, std::vector<term>& terms, std::size_t k, const labels_t& output) {
    labels_t unused;
    for (int l : terms[k].labels) {
        bool used = has(output, l);
        for (std::size_t o = 0; o < terms.size(); ++o) used = used || (o != k && has(terms[o].labels, l));
        if (!used) unused.push_back(l);
    }
    terms[k] = sum(ctx, terms[k], unused);
}

std::vector<std::size_t> sizes(const term& t, const labels_t& ls) {
    std::vector<std::size_t> out;
    for (int l : ls) out.push_back(dim_of(t, l));
    return out;
}

std::size_t product(const std::vector<std::size_t>& v) {
    return std::accumulate(v.begin(), v.end(), std::size_t{1}, std::multiplies<>());
}

labels_t joined(labels_t a, const labels_t& b, const labels_t& c = {}) {
    a.insert(a.end(), b.begin(), b.end());
    a.insert(a.end(), c.begin(), c.end());
    return a;
}

// a and b as one batched product [batch..., a_free..., b_free...]: shared labels that `keep`
// lists are the batch, other shared labels are contracted.
term contract(context& ctx, const term& a_in, const term& b_in, const labels_t& keep) {
    labels_t batch, summed, a_free, b_free;
    for (int l : a_in.labels) (has(b_in.labels, l) ? (has(keep, l) ? batch : summed) : a_free).push_back(l);
    for (int l : b_in.labels)
        if (!has(a_in.labels, l)) b_free.push_back(l);
    // Shared letters have one size; ellipsis dims (always kept, so batch dims) may broadcast.
    for (int l : joined(batch, summed)) {
        std::size_t na = dim_of(a_in, l), nb = dim_of(b_in, l);
        if (na != nb && (l < ellipsis_label || (na != 1 && nb != 1)))
            fail("label '", label_name(l), "' has sizes ", na, " and ", nb, " in two operands");
    }
    term a = arrange(ctx, a_in, joined(batch, a_free, summed));
    term b = arrange(ctx, b_in, joined(batch, summed, b_free));
    auto ab = sizes(a, batch), bb = sizes(b, batch), af = sizes(a, a_free), bf = sizes(b, b_free);
    std::size_t k = product(sizes(a, summed));
    auto am = ab, bm = bb;
    am.insert(am.end(), {product(af), k});
    bm.insert(bm.end(), {k, product(bf)});
    auto y = ctx.add("dot", {reshape(ctx, a.ins, am), reshape(ctx, b.ins, bm)});
    std::vector<std::size_t> lens;
    for (std::size_t i = 0; i < batch.size(); ++i) lens.push_back(std::max(ab[i], bb[i]));
    lens.insert(lens.end(), af.begin(), af.end());
    lens.insert(lens.end(), bf.begin(), bf.end());
    return {reshape(ctx, y, lens), joined(batch, a_free, b_free)};
}

inputs_t einsum(const node_info& n, context& ctx, const inputs_t& in) {
    if (in.empty()) fail("Einsum needs at least one input");
    n.attr("equation");
    equation e = parse(n.attr_string("equation", ""), in);
    std::vector<term> terms;
    for (std::size_t k = 0; k < in.size(); ++k) terms.push_back(diagonals(ctx, {in[k], e.inputs[k]}));
    for (std::size_t k = 0; k < terms.size(); ++k) sum_unused(ctx, terms, k, e.output);
    while (terms.size() > 1) {
        labels_t keep = e.output;
        for (std::size_t k = 2; k < terms.size(); ++k)
            keep.insert(keep.end(), terms[k].labels.begin(), terms[k].labels.end());
        term ab = contract(ctx, terms[0], terms[1], keep);
        terms.erase(terms.begin());
        terms[0] = ab;
        sum_unused(ctx, terms, 0, e.output);
    }
    return {arrange(ctx, terms[0], e.output).ins};
}
KILN_ONNX_OP("", "Einsum", 12, einsum)

}  // namespace
}  // namespace kiln::onnx_fe
