// Scaled dot-product attention as exporters write it out (kT is k with its last two dims swapped):
//   softmax(scale * (q @ kT) [+ mask], last axis) @ v    -> attention[scale](q, k, v[, mask])
//   softmax(where(keep, scale * (q @ kT), -inf)) @ v     -> attention[scale](q, k, v, keep)
//   softmax(where(drop, -inf, scale * (q @ kT))) @ v     -> attention[scale](q, k, v, not drop)
// The last form is what masked_fill exports; a fill of -1e30 or less (such as the type's lowest
// value) counts as -inf, since its weights are exactly 0 too. The scale may be muls or divs by
// scalar constants on the scores, on q and on kT (multiplied together; none means 1). kT is usually
// a transpose view itself (from [B, H, S, D] or straight from [B, S, H, D]); k is then that view's
// source transposed once, the two permutations composed. q, kT and v must agree exactly in their
// batch dims (no broadcasting) and be rank 4 ([B, H, S, D]) or rank 3 ([B*H, S, D], given a
// leading 1 by unsqueeze views and squeezed back after). The mask must broadcast to the scores
// (the add keeps their shape), and the softmax result must feed only the second matmul.
// A program converted to float16/bfloat16 before recognition (convert_precision keeps softmax in
// float32) reads convert(softmax(convert(scores) to float32)) to the low type @ v: the same
// attention, whose op computes the scores and softmax in float and rounds the probabilities to
// the type for the second matmul (the written-out form also rounds the scores to the type first).
// One difference remains by design: a query row whose mask removes every key gives NaN (or, for a
// finite fill, the mean of v) written out, zeros from the op. Causal masks never remove a row.
// A constant mask that is a causal band (keep j <= i + c for every batch and head, as GPT-2's
// export has it) then becomes the op's own causal limit (is_causal, causal_offset = c).
#include <algorithm>
#include <numeric>

#include "core/reflect.hpp"
#include "ops/attention.hpp"
#include "ops/softmax.hpp"
#include "ops/views.hpp"
#include "passes/recognize/recognize_rules.hpp"

namespace kiln {
namespace {

using namespace recognize;

// Strips muls and divs by scalar constants off `ins` (each used only by the chain), multiplying
// their factors into scale.
instruction_ref peel_scale(instruction_ref ins, double& scale, std::vector<instruction_ref>& inner) {
    while ((ins->name() == "mul" || ins->name() == "div") && ins->outputs().size() == 1) {
        auto a = ins->inputs()[0], c = ins->inputs()[1];
        if (ins->name() == "mul" && a->is_literal()) std::swap(a, c);
        auto s = scalar_value(c);
        if (!s || *s == 0 || a->is_literal() || a->get_shape().lens() != ins->get_shape().lens()) break;
        scale = ins->name() == "mul" ? scale * *s : scale / *s;
        inner.push_back(ins);
        ins = a;
    }
    return ins;
}

// kT with its last two dims swapped back: one transpose of kT's source when kT is a transpose.
instruction_ref untranspose(rewriter& r, instruction_ref kt) {
    std::vector<std::int64_t> perm(kt->get_shape().ndim());
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    auto src = kt;
    if (const auto* t = kt->get_operator().get_if<ops::transpose>()) {
        for (auto& i : perm) i = t->permutation[static_cast<std::size_t>(i)];
        src = kt->inputs().front();
    }
    if (std::is_sorted(perm.begin(), perm.end())) return src;
    return r.add("transpose", {src}, {{"permutation", to_value(perm)}});
}

// The scores' parts: q, kT, the mask (may be absent; `drop` when it is true where keys are
// dropped), the scale and the instructions between.
struct scores {
    instruction_ref q, kt;
    std::optional<instruction_ref> mask;
    bool drop = false;
    double scale = 1;
    std::vector<instruction_ref> inner;
};

// A fill that removes a key: -inf, or a finite stand-in for it (such as the type's lowest value).
bool removes_key(instruction_ref fill) {
    auto v = scalar_value(fill);
    return v && *v <= -1e30;
}

// One way to read the softmax input: the scores' body (scale * (q @ kT)) and the mask part.
struct reading {
    instruction_ref body;
    scores parts;
};

// The ways to read `s`: body + mask, where(keep, body, -inf) and where(drop, -inf, body)
// (masked_fill); s itself without a mask.
std::vector<reading> mask_readings(instruction_ref s) {
    const auto& in = s->inputs();
    if (s->outputs().size() == 1 && s->name() == "add") return {{in[0], {.mask = in[1]}}, {in[1], {.mask = in[0]}}};
    if (s->outputs().size() == 1 && s->name() == "where") {
        if (removes_key(in[2])) return {{in[1], {.mask = in[0]}}};
        if (removes_key(in[1])) return {{in[2], {.mask = in[0], .drop = true}}};
    }
    return {{s, {}}};
}

// Reads scale * (q @ kT) with a mask as mask_readings allows; nullopt when `s` is not of that form.
std::optional<scores> read_scores(instruction_ref s) {
    for (auto [body, out] : mask_readings(s)) {
        if (out.mask) out.inner.push_back(s);
        auto d = peel_scale(body, out.scale, out.inner);
        if (d->name() != "dot" || d->outputs().size() != 1 || s->get_shape().lens() != d->get_shape().lens()) continue;
        out.inner.push_back(d);
        out.q = peel_scale(d->inputs()[0], out.scale, out.inner);
        out.kt = peel_scale(d->inputs()[1], out.scale, out.inner);
        return out;
    }
    return std::nullopt;
}

// q [..., Sq, D], kT [..., D, Skv], v [..., Skv, Dv] of rank 3 or 4 with equal batch dims.
bool shapes_map(const shape& q, const shape& kt, const shape& v) {
    if (q.dynamic() || kt.dynamic() || v.dynamic() || !is_float(q.type())) return false;
    std::size_t n = q.ndim();
    if ((n != 3 && n != 4) || kt.ndim() != n || v.ndim() != n) return false;
    for (std::size_t i = 0; i + 2 < n; ++i)
        if (kt.lens()[i] != q.lens()[i] || v.lens()[i] != q.lens()[i]) return false;
    return kt.lens()[n - 1] == v.lens()[n - 2];
}

instruction_ref lift(rewriter& r, instruction_ref x) {
    return x->get_shape().ndim() == 4 ? x : r.add("unsqueeze", {x}, {{"axes", to_value(std::vector<std::int64_t>{0})}});
}

// softmax(scale * (q @ kT) [+ mask]) @ v -> attention[scale](q, k, v[, mask])
rule attention() {
    auto softmax = match::op("softmax").bind("p").used_once();
    auto rounded = match::op("convert", softmax).bind("down").used_once();
    return {"attention", match::op("dot", match::any_of({softmax, rounded}), match::any("v")),
            [](rewriter& r, const bindings& b) {
                auto p = b["p"], v = b["v"];
                auto axis = p->get_operator().get<ops::softmax>().axis;
                auto s = p->inputs().front();
                std::vector<instruction_ref> converts;
                if (b.has("down")) {   // float32 softmax of scores converted up from v's type, rounded back down
                    auto up = s;
                    if (up->name() != "convert" || up->outputs().size() != 1 || p->get_shape().type() != dtype::float32 ||
                        up->inputs()[0]->get_shape().type() != v->get_shape().type() ||
                        b["down"]->get_shape().type() != v->get_shape().type())
                        return false;
                    s = up->inputs()[0];
                    converts = {up, b["down"]};
                }
                auto sc = read_scores(s);
                if ((axis != -1 && axis != static_cast<std::int64_t>(p->get_shape().ndim()) - 1) || !sc) return false;
                if (!shapes_map(sc->q->get_shape(), sc->kt->get_shape(), v->get_shape())) return false;
                sc->inner.insert(sc->inner.end(), converts.begin(), converts.end());
                // An added mask has the scores' type by the add's own rules; a where's condition is bool.
                if (sc->mask && (*sc->mask)->get_shape().dynamic()) return false;
                sc->inner.push_back(p);
                if (!used_only_within(sc->inner, r.root())) return false;
                std::vector<instruction_ref> args{lift(r, sc->q), lift(r, untranspose(r, sc->kt)), lift(r, v)};
                if (sc->mask) args.push_back(sc->drop ? r.add("logical_not", {*sc->mask}) : *sc->mask);
                auto att = r.add("attention", args, {{"scale", static_cast<float>(sc->scale)}});
                if (v->get_shape().ndim() == 3)
                    att = r.add("squeeze", {att}, {{"axes", to_value(std::vector<std::int64_t>{0})}});
                r.replace(att);
                return true;
            }};
}

// The offset c when the constant mask `m`, broadcast to [.., S, Skv], keeps key j for query i exactly
// when j <= i + c, the same band for every batch and head; nullopt otherwise. A bool mask keeps
// where true; an additive one keeps where 0 and drops where it is -inf or a stand-in (<= -1e30).
// Some row must keep part of the keys (a mask that keeps all or none is not a band).
std::optional<std::int64_t> causal_band(instruction_ref m, std::size_t queries, std::size_t keys) {
    const auto& lens = m->get_shape().lens();
    if (lens.size() < 2 || lens[lens.size() - 2] != queries || lens.back() != keys) return std::nullopt;
    if (std::any_of(lens.begin(), lens.end() - 2, [](std::size_t n) { return n != 1; })) return std::nullopt;
    if (queries * keys > (std::size_t{1} << 24)) return std::nullopt;   // its values as doubles would take over 128 MiB
    const bool flag = m->get_shape().type() == dtype::bool_;
    auto v = literal_values(*m);
    std::vector<std::int64_t> kept(queries, 0);
    for (std::size_t i = 0; i < queries; ++i) {   // each row keeps a prefix of the keys
        bool dropped = false;
        for (std::size_t j = 0; j < keys; ++j) {
            double x = v[i * keys + j];
            bool keep = flag ? x != 0 : x == 0;
            if ((!keep && !flag && x > -1e30) || (keep && dropped)) return std::nullopt;   // a finite bias, a gap
            dropped = dropped || !keep;
            kept[i] += keep;
        }
    }
    std::optional<std::int64_t> c;
    for (std::size_t i = 0; i < queries; ++i)
        if (kept[i] > 0 && kept[i] < static_cast<std::int64_t>(keys)) c = kept[i] - 1 - static_cast<std::int64_t>(i);
    if (!c) return std::nullopt;
    for (std::size_t i = 0; i < queries; ++i) {
        std::int64_t want = std::clamp<std::int64_t>(static_cast<std::int64_t>(i) + *c + 1, 0, static_cast<std::int64_t>(keys));
        if (kept[i] != want) return std::nullopt;
    }
    return c;
}

// attention(q, k, v, m) with a constant causal band m (keep j <= i + c) -> attention[is_causal,
// causal_offset=c](q, k, v): exporters write GPT-2's causal mask as a constant; as the op's own
// causal limit a kernel skips the key tiles past it and reads no mask.
rule causal_mask() {
    return {"attention_causal_mask",
            match::op("attention", match::any("q"), match::any("k"), match::any("v"), match::constant("m")),
            [](rewriter& r, const bindings& b) {
                const auto& op = r.root()->get_operator().get<ops::attention>();
                if (op.is_causal) return false;
                auto c = causal_band(b["m"], b["q"]->get_shape().lens()[2], b["k"]->get_shape().lens()[2]);
                if (!c) return false;
                r.replace(r.add("attention", {b["q"], b["k"], b["v"]},
                                {{"scale", op.scale}, {"is_causal", true}, {"causal_offset", *c}, {"softcap", op.softcap}}));
                return true;
            }};
}

}  // namespace

std::vector<rule> attention_rules() { return {attention(), causal_mask()}; }

}  // namespace kiln
