#include "targets/cpu/epilogue.hpp"

#include <dnnl.hpp>

#include "ops/binary.hpp"
#include "ops/convolution.hpp"
#include "ops/fused.hpp"
#include "ops/gemm.hpp"
#include "ops/select.hpp"
#include "ops/unary.hpp"

namespace kiln {
namespace {

using alg = dnnl::algorithm;

// Where a value of a fused body comes from: the kernel's argument or a constant, seen through
// broadcast views, with its lens and strides in memory (broadcast dims have length 1).
struct source {
    region_operand from;
    shape s;
};

std::optional<source> resolve(const instruction& v, const instruction& fused) {
    const instruction* root = &v;
    bool viewed = false;
    while (root->get_operator().traits().broadcast_view) root = &*root->inputs()[0], viewed = true;
    source r;
    const instruction* actual = root;
    if (root->is_param()) {
        const module& body = *fused.module_inputs()[0];
        auto params = body.parameters();
        std::size_t i = 0;
        while (i < params.size() && &*params[i] != root) ++i;
        actual = &*fused.inputs().at(i);
        r.from.arg = static_cast<int>(i);
    } else if (!root->is_literal()) {
        return std::nullopt;
    }
    if (actual->is_literal()) r.from = {-1, &actual->get_literal().get_argument()};
    const shape& mem = actual->get_shape();
    if (!viewed) {
        r.s = mem;
        return r;
    }
    if (!mem.standard()) return std::nullopt;   // the body's view strides assume a standard input
    auto lens = v.get_shape().lens();
    auto strides = v.get_shape().strides();
    for (std::size_t d = 0; d < lens.size(); ++d)
        if (strides[d] == 0) lens[d] = 1, strides[d] = 1;
    r.s = shape(mem.type(), lens, strides);
    return r;
}

// The operand right-aligned to the output's rank: every dim equal to the output's or 1.
bool broadcasts_to(const shape& s, const shape& out) {
    if (s.ndim() > out.ndim()) return false;
    std::size_t lead = out.ndim() - s.ndim();
    for (std::size_t d = 0; d < s.ndim(); ++d)
        if (s.lens()[d] != out.lens()[lead + d] && s.lens()[d] != 1) return false;
    return true;
}

std::optional<float> scalar_value(const source& s) {
    if (!s.from.constant) return std::nullopt;
    auto v = to_doubles(*s.from.constant);
    if (v.empty()) return std::nullopt;
    for (double x : v)
        if (x != v[0]) return std::nullopt;
    return static_cast<float>(v[0]);
}

std::optional<epilogue_step> eltwise_step(const operation& op) {
    auto e = [](alg a, float alpha = 0, float beta = 0) {
        return epilogue_step{epilogue_step::eltwise, static_cast<int>(a), alpha, beta, {}, -1, nullptr};
    };
    if (op.get_if<ops::relu>()) return e(alg::eltwise_relu);
    if (const auto* l = op.get_if<ops::leaky_relu>()) return e(alg::eltwise_relu, l->alpha);
    if (op.get_if<ops::sigmoid>()) return e(alg::eltwise_logistic);
    if (op.get_if<ops::tanh>()) return e(alg::eltwise_tanh);
    if (op.get_if<ops::exp>()) return e(alg::eltwise_exp);
    if (op.get_if<ops::abs>()) return e(alg::eltwise_abs);
    if (op.get_if<ops::sqrt>()) return e(alg::eltwise_sqrt);
    if (op.get_if<ops::hard_swish>()) return e(alg::eltwise_hardswish, 1.0f / 6, 0.5f);
    if (const auto* s = op.get_if<ops::silu>()) return e(alg::eltwise_swish, s->beta);
    if (const auto* g = op.get_if<ops::gelu>()) {
        if (g->approximate == "none") return e(alg::eltwise_gelu_erf);
        if (g->approximate == "tanh") return e(alg::eltwise_gelu_tanh);
    }
    return std::nullopt;
}

// A binary op with the running value `cur` as one input and `other` as the other.
std::optional<epilogue_step> binary_step(const operation& op, bool cur_first, const source& other,
                                         const shape& out, epilogue_plan& plan) {
    auto c = scalar_value(other);
    auto linear = [](float a, float b) {
        return epilogue_step{epilogue_step::eltwise, static_cast<int>(alg::eltwise_linear), a, b, {}, -1, nullptr};
    };
    auto bin = [&](alg a) {
        return epilogue_step{epilogue_step::binary, static_cast<int>(a), 0, 0, other.s, other.from.arg, other.from.constant};
    };
    if (!broadcasts_to(other.s, out)) return std::nullopt;
    if (op.get_if<ops::add>()) {
        if (c) return linear(1, *c);
        bool full = other.s.ndim() == out.ndim() && other.s.lens() == out.lens();
        if (full && other.from.arg >= 0 && plan.sum_arg < 0) {
            plan.sum_arg = other.from.arg;
            plan.sum_shape = other.s;
            return epilogue_step{epilogue_step::sum, 0, 0, 0, {}, other.from.arg, nullptr};
        }
        return bin(alg::binary_add);
    }
    if (op.get_if<ops::mul>()) return c ? linear(*c, 0) : bin(alg::binary_mul);
    if (op.get_if<ops::max>()) return bin(alg::binary_max);
    if (op.get_if<ops::min>()) return bin(alg::binary_min);
    if (!cur_first) return std::nullopt;
    if (op.get_if<ops::sub>()) return c ? linear(1, -*c) : bin(alg::binary_sub);
    if (op.get_if<ops::div>()) return c ? linear(1 / *c, 0) : bin(alg::binary_div);
    return std::nullopt;
}

std::optional<epilogue_step> clip_step(const instruction& ins, const instruction& fused) {
    if (!ins.get_operator().get_if<ops::clip>() || ins.inputs().size() != 3) return std::nullopt;
    auto lo = resolve(*ins.inputs()[1], fused), hi = resolve(*ins.inputs()[2], fused);
    if (!lo || !hi) return std::nullopt;
    auto l = scalar_value(*lo), h = scalar_value(*hi);
    if (!l || !h) return std::nullopt;
    return epilogue_step{epilogue_step::eltwise, static_cast<int>(alg::eltwise_clip_v2), *l, *h, {}, -1, nullptr};
}

// A per-channel operand of a convolution's output: its bias.
bool is_channel_bias(const epilogue_step& s, const shape& out) {
    if (s.kind != epilogue_step::binary || s.alg != static_cast<int>(alg::binary_add) || out.ndim() < 3) return false;
    const shape& o = s.operand;
    std::size_t lead = out.ndim() - o.ndim();
    for (std::size_t d = 0; d < out.ndim(); ++d) {
        std::size_t len = d < lead ? 1 : o.lens()[d - lead];
        if (d == 1 ? len != out.lens()[1] || (d >= lead && o.strides()[d - lead] != 1) : len != 1) return false;
    }
    return true;
}

std::optional<contraction_region> finish(contraction_region& r);

region_operand operand_of(const instruction& in, int arg) {
    if (in.is_literal()) return {-1, &in.get_literal().get_argument()};
    return {arg, nullptr};
}

}  // namespace

bool onednn_post_op(const instruction& ins) {
    const operation& op = ins.get_operator();
    dtype t = ins.get_shape().type();   // post-ops compute in float on float/bf16/f16 primitives
    if (t != dtype::float32 && t != dtype::bfloat16 && t != dtype::float16) return false;
    return eltwise_step(op).has_value() || op.get_if<ops::clip>() || op.get_if<ops::add>() || op.get_if<ops::mul>() ||
           op.get_if<ops::max>() || op.get_if<ops::min>();
}

std::optional<contraction_region> find_contraction_region(const instruction& ins) {
    contraction_region r;
    r.ins = &ins;
    r.out = ins.get_shape();
    if (!r.out.standard()) return std::nullopt;
    if (ins.get_operator().traits().contraction) {
        r.contraction = &ins;
        for (std::size_t i = 0; i < ins.inputs().size(); ++i) {
            r.inputs.push_back(operand_of(*ins.inputs()[i], static_cast<int>(i)));
            r.shapes.push_back(ins.inputs()[i]->get_shape());
        }
        return finish(r);
    }
    if (!ins.get_operator().get_if<ops::fused_epilogue>() || ins.module_inputs().size() != 1) return std::nullopt;
    const module& body = *ins.module_inputs()[0];
    const instruction* cur = nullptr;
    for (const auto& b : body) {
        if (b.is_param() || b.is_literal() || b.get_operator().traits().broadcast_view) continue;
        if (b.is_return()) {
            if (b.inputs().size() != 1 || &*b.inputs()[0] != cur) return std::nullopt;
            break;
        }
        if (!cur) {
            if (!b.get_operator().traits().contraction) return std::nullopt;
            r.contraction = cur = &b;
            for (auto in : b.inputs()) {
                auto s = resolve(*in, ins);
                if (!s || in->get_operator().traits().broadcast_view) return std::nullopt;
                r.inputs.push_back(s->from);
                r.shapes.push_back(s->s);
            }
            continue;
        }
        std::optional<epilogue_step> step = eltwise_step(b.get_operator());
        if (!step) step = clip_step(b, ins);
        if (!step && b.inputs().size() == 2) {
            bool first = &*b.inputs()[0] == cur;
            const instruction& other = *b.inputs()[first ? 1 : 0];
            if (&other == cur) return std::nullopt;
            if (auto s = resolve(other, ins)) step = binary_step(b.get_operator(), first, *s, r.out, r.epilogue);
        }
        if (!step || (b.inputs().empty() || (&*b.inputs()[0] != cur && (b.inputs().size() < 2 || &*b.inputs()[1] != cur))))
            return std::nullopt;
        r.epilogue.steps.push_back(*step);
        cur = &b;
    }
    if (!cur) return std::nullopt;
    return finish(r);
}

namespace {
std::optional<contraction_region> finish(contraction_region& r) {
    // A per-channel add right after a convolution is its bias.
    auto& steps = r.epilogue.steps;
    if (const auto* g = r.contraction->get_operator().get_if<ops::gemm>(); g && r.inputs.size() == 3) {
        if (g->beta != 1.0f || !broadcasts_to(r.shapes[2], r.out)) return std::nullopt;   // beta * C: reference
        steps.insert(steps.begin(), epilogue_step{epilogue_step::binary, static_cast<int>(alg::binary_add), 0, 0,
                                                  r.shapes[2], r.inputs[2].arg, r.inputs[2].constant});
    }
    if (r.contraction->get_operator().get_if<ops::convolution>() && !steps.empty() && is_channel_bias(steps[0], r.out)) {
        r.epilogue.bias = region_operand{steps[0].arg, steps[0].constant};
        steps.erase(steps.begin());
    }
    return r;
}
}  // namespace

}  // namespace kiln
