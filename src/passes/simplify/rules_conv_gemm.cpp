// Scales and biases into convolution, gemm and dot weights. A scale folds when it holds one value
// per output channel (convolution: dim 1 of the result; gemm and dot: the last dim) or one value
// in all; a constant that also varies along another dim, or that broadcasts the result to a
// larger shape, declines. The product x * (w * c) rounds w * c once more than (x * w) * c: within
// float rounding. kiln's convolution and dot take no bias, so a bias stays an add (on a constant
// that simplify_algebra has folded); gemm takes it as its C input.
#include "ops/gemm.hpp"
#include "passes/simplify/simplify_rules.hpp"

namespace kiln {
namespace {

using match::any;
using match::constant;
using match::op;

// Lens of `rank` dims, all 1 except `len` at `axis`.
std::vector<std::size_t> one_axis(std::size_t rank, std::size_t axis, std::size_t len) {
    std::vector<std::size_t> lens(rank, 1);
    lens[axis] = len;
    return lens;
}

// w * c, c one value per index of w's dim `axis`.
instruction_ref scale_weights(rewriter& r, instruction_ref w, instruction_ref c, std::size_t axis) {
    const auto& lens = w->get_shape().lens();
    return r.add("mul", {w, relaid(r, c, one_axis(lens.size(), axis, lens[axis]))});
}

// conv(x, w) * c -> conv(x, w * c), c one value per output channel
rule conv_scale() {
    return {"conv_scale",
            op("mul", op("convolution", any("x"), constant("w")).used_once().bind("conv"), constant("c")),
            [](rewriter& r, const bindings& b) {
                const auto& out = b["conv"]->get_shape().lens();
                if (!per_axis(*b["c"], out.size(), 1, out[1])) return false;
                auto w = scale_weights(r, b["w"], b["c"], 0);
                r.replace(r.add(b["conv"]->get_operator(), {b["x"], w}));
                return true;
            }};
}

// dot(x, w) * c -> dot(x, w * c), c one value per column of w
rule dot_scale() {
    return {"dot_scale", op("mul", op("dot", any("x"), constant("w")).used_once().bind("dot"), constant("c")),
            [](rewriter& r, const bindings& b) {
                const auto& out = b["dot"]->get_shape().lens();
                const auto& wl = b["w"]->get_shape().lens();
                if (wl.size() < 2 || !per_axis(*b["c"], out.size(), out.size() - 1, out.back())) return false;
                auto w = scale_weights(r, b["w"], b["c"], wl.size() - 1);
                r.replace(r.add("dot", {b["x"], w}));
                return true;
            }};
}

float beta_of(instruction_ref g) { return g->get_operator().get<ops::gemm>().beta; }

// gemm(a, b, c) * s -> gemm(a, b * s, c * s), s one value per column of the result
rule gemm_scale() {
    return {"gemm_scale", op("mul", op("gemm").used_once().bind("g"), constant("s")),
            [](rewriter& r, const bindings& b) {
                auto g = b["g"];
                auto in = g->inputs();
                if (!in[1]->is_literal() || !per_axis(*b["s"], 2, 1, g->get_shape().lens()[1])) return false;
                bool uses_c = in.size() == 3 && beta_of(g) != 0;
                if (uses_c && !in[2]->is_literal()) return false;
                bool trans_b = g->get_operator().get<ops::gemm>().trans_b;
                in[1] = scale_weights(r, in[1], b["s"], trans_b ? 0 : 1);
                if (uses_c) in[2] = r.add("mul", {in[2], b["s"]});
                r.replace(r.add(g->get_operator(), in));
                return true;
            }};
}

// gemm(a, b) + c -> gemm[beta=1](a, b, c); gemm[beta=1](a, b, c1) + c2 -> gemm(a, b, c1 + c2)
rule gemm_bias() {
    return {"gemm_bias", op("add", op("gemm").used_once().bind("g"), any("c")),
            [](rewriter& r, const bindings& b) {
                auto g = b["g"];
                auto c = b["c"];
                auto in = g->inputs();
                // c broadcasts to the result one way: the add keeps gemm's lens and c has at most 2 dims.
                if (c == g || r.root()->get_shape().lens() != g->get_shape().lens() || c->get_shape().ndim() > 2)
                    return false;
                if (in.size() == 3) {
                    if (beta_of(g) != 1 || !in[2]->is_literal() || !c->is_literal()) return false;
                    in[2] = r.add("add", {in[2], c});
                } else {
                    in.push_back(c);
                }
                auto op1 = g->get_operator().with_attributes(value{{"beta", 1.0}});
                r.replace(r.add(op1, in));
                return true;
            }};
}

}  // namespace

std::vector<rule> conv_gemm_rules() { return {conv_scale(), dot_scale(), gemm_scale(), gemm_bias()}; }

}  // namespace kiln
