#include "targets/gpu/contraction.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_set>

#include "core/error.hpp"
#include "ops/convolution.hpp"
#include "ops/fused.hpp"
#include "ops/binary.hpp"
#include "ops/gemm.hpp"
#include "ops/unary.hpp"
#include "targets/gpu/conv_epilogue.hpp"
#include "targets/gpu/layout_nhwc.hpp"
#include "targets/gpu/libraries.hpp"
#include "targets/gpu/matmul.hpp"

namespace kiln::gpu {
namespace {

constexpr std::size_t max_workspace = 64u << 20;

// A matrix operand with the batch dims of `batch` (numpy broadcast: missing or 1 dims repeat).
shape with_batch(const shape& s, const std::vector<std::size_t>& batch) {
    std::size_t nb = s.lens().size() - 2;
    std::vector<std::size_t> lens(batch), strides(batch.size(), 0);
    for (std::size_t d = 0; d < nb; ++d) {
        std::size_t to = batch.size() - nb + d;
        strides[to] = s.lens()[d] == 1 ? 0 : s.strides()[d];
    }
    for (std::size_t d = nb; d < s.lens().size(); ++d) {
        lens.push_back(s.lens()[d]);
        strides.push_back(s.strides()[d]);
    }
    return shape(s.type(), lens, strides);
}

shape swap_last_two(const shape& s) {
    auto l = s.lens(), st = s.strides();
    std::size_t n = l.size();
    std::swap(l[n - 1], l[n - 2]);
    std::swap(st[n - 1], st[n - 2]);
    return shape(s.type(), l, st);
}

// `c_in`: C when it is not the output (a residual, beta = 1); null: C is the output's memory.
void add_matmul(lowering_context& ctx, const instruction& ins, body_operand a, body_operand b, body_operand c,
                float alpha, float beta, matmul_epilogue epi = matmul_epilogue::none, std::byte* bias = nullptr,
                std::byte* c_in = nullptr) {
    // numpy matmul's vectors: a 1-d A is a row [1, K], a 1-d B a column [K, 1], and the result
    // (standard, so the same bytes) gets those dims back.
    bool a_vec = a.s.lens().size() == 1, b_vec = b.s.lens().size() == 1;
    if (a_vec) a.s = shape(a.s.type(), {1, a.s.lens()[0]}, {a.s.lens()[0] * a.s.strides()[0], a.s.strides()[0]});
    if (b_vec) b.s = shape(b.s.type(), {b.s.lens()[0], 1}, {b.s.strides()[0], 1});
    if (a_vec || b_vec) {
        auto cl = c.s.lens();
        if (b_vec) cl.push_back(1);
        if (a_vec) cl.insert(cl.end() - 1, 1);
        c.s = shape(c.s.type(), cl);
    }
    std::vector<std::size_t> batch(c.s.lens().begin(), c.s.lens().end() - 2);
    a.s = with_batch(a.s, batch);
    b.s = with_batch(b.s, batch);
    if (!matmul_operand_ok(a.s)) a = materialize(ctx, ins, a);
    if (!matmul_operand_ok(b.s)) b = materialize(ctx, ins, b);
    auto& libs = ctx.libraries();
    libs.reserve_workspace(max_workspace);
    matmul_tuning tune{libs.tuning.get(), a.ptr, b.ptr, c_in, c.ptr, bias, libs.workspace(), libs.stream};
    auto plan = std::make_shared<matmul_plan>(
        libs.blas(), matmul_problem{a.s, b.s, c.s, alpha, beta, libs.allow_tf32, epi}, max_workspace, ctx.where(ins),
        &libs.plans, libs.tuning ? &tune : nullptr);
    ctx.add_step(ins, [plan, a = a.ptr, b = b.ptr, c = c.ptr, bias, c_in, &libs](cudaStream_t s) {
        plan->run(a, b, c, libs.workspace(), s, bias, c_in);
    });
}

// A [N] (or [1, ..., N]) contiguous vector of the output's type: what cuBLASLt's bias epilogue
// adds to each row of an [M, N] output.
bool is_row_bias(const shape& v, const shape& out) {
    std::size_t n = out.lens().back();
    return out.lens().size() == 2 && out.standard() && v.type() == out.type() && !v.lens().empty() &&
           v.lens().back() == n && v.elements() == n && (n == 1 || v.strides().back() == 1);
}

}  // namespace

body_operand materialize(lowering_context& ctx, const instruction& ins, const body_operand& o) {
    shape std_shape = o.s.as_standard();
    body_operand r{ctx.scratch(std_shape.bytes(), "a materialised operand"), std_shape};
    copy_operand(ctx, ins, o, r);
    return r;
}

void copy_operand(lowering_context& ctx, const instruction& ins, const body_operand& from, const body_operand& to) {
    elementwise_spec spec{{from.s}, to.s, "const auto y = x0;"};
    spec.any_order = true;
    ctx.add_kernel(ins, make_elementwise_kernel(spec, ctx.where(ins)), elementwise_launch(spec),
                   {to.ptr, from.ptr});
}

void lower_contraction(lowering_context& ctx, const instruction& ins, const operation& op,
                       const std::vector<body_operand>& in, const body_operand& out) {
    if (op.get_if<ops::dot>()) {
        add_matmul(ctx, ins, in.at(0), in.at(1), out, 1.0f, 0.0f);
    } else if (const auto* g = op.get_if<ops::gemm>()) {
        body_operand a = in.at(0), b = in.at(1);
        if (g->trans_a) a.s = swap_last_two(a.s);
        if (g->trans_b) b.s = swap_last_two(b.s);
        float beta = 0;
        if (in.size() > 2 && g->beta == 1 && is_row_bias(in[2].s, out.s)) {
            // C one row of the output's type, added once: cuBLASLt's bias epilogue, no copy of C.
            add_matmul(ctx, ins, a, b, out, g->alpha, 0.0f, matmul_epilogue::bias, in[2].ptr);
            return;
        }
        if (in.size() > 2 && g->beta != 0) {
            // beta * C: C broadcast into the output first, then the product accumulates onto it.
            shape cs = in[2].s;
            elementwise_spec spec{{shape(cs.type(), out.s.lens(), [&] {
                                       std::vector<std::size_t> st(out.s.lens().size(), 0);
                                       std::size_t off = st.size() - cs.lens().size();
                                       for (std::size_t d = 0; d < cs.lens().size(); ++d)
                                           st[off + d] = cs.lens()[d] == 1 ? 0 : cs.strides()[d];
                                       return st;
                                   }())},
                                  out.s, "const auto y = x0;"};
            ctx.add_kernel(ins, make_elementwise_kernel(spec, ctx.where(ins)), elementwise_launch(spec),
                           {out.ptr, in[2].ptr});
            beta = g->beta;
        }
        add_matmul(ctx, ins, a, b, out, g->alpha, beta);
    } else if (op.get_if<ops::convolution>()) {
        lower_convolution(ctx, ins, op, in, out);
    } else {
        fail("gpu: no GPU implementation of ", op.name(), " as a contraction: ", ctx.where(ins));
    }
}

std::optional<body_operand> aliased_operand(const instruction& i,
                                            const std::unordered_map<const instruction*, body_operand>& known) {
    if (auto it = known.find(&i); it != known.end()) return it->second;
    if (i.is_param() || i.is_literal() || i.is_return()) return std::nullopt;
    std::vector<shape> in;
    for (auto j : i.inputs()) in.push_back(j->get_shape());
    int alias = i.get_operator().output_alias(in);
    if (alias < 0) return std::nullopt;
    auto src = aliased_operand(*i.inputs()[alias], known);
    if (!src) return std::nullopt;
    return view_operand(i, *src);
}

namespace {

// cuBLASLt and cuDNN take float types only (integer GEMMs have no GPU implementation yet).
bool is_contraction(const instruction& ins) {
    const auto& op = ins.get_operator();
    return (op.get_if<ops::dot>() || op.get_if<ops::gemm>() || op.get_if<ops::convolution>()) &&
           is_float(ins.get_shape().type());
}

std::vector<body_operand> operands_of(lowering_context& ctx, const instruction& ins) {
    std::vector<body_operand> r;
    for (auto i : ins.inputs()) r.push_back({ctx.address(*i), ctx.layout(*i)});
    return r;
}

const gpu_lowering_registrar contraction_lowering{{
    "dot, gemm or convolution (cuBLASLt, cuDNN)",
    [](const instruction& ins) { return is_contraction(ins); },
    [](lowering_context& ctx, const instruction& ins) {
        lower_contraction(ctx, ins, ins.get_operator(), operands_of(ctx, ins), {ctx.address(ins), ctx.layout(ins)});
    },
    true,
    false,
    true,
    true,
}};

// Whether every reordering view in the body leaves its result standard (a reshape, not a
// transpose): then element i of the output reads element i of the product, and the epilogue
// can overwrite the product in place.
bool views_keep_order(const module& body, const instruction& anchor) {
    std::unordered_set<const instruction*> of_product{&anchor};
    for (const auto& b : body) {
        if (b.is_param() || b.is_literal() || b.is_return()) continue;
        std::vector<shape> in;
        for (auto i : b.inputs()) in.push_back(i->get_shape());
        int alias = b.get_operator().output_alias(in);
        if (alias < 0 || !of_product.contains(&*b.inputs()[static_cast<std::size_t>(alias)])) continue;
        if (!b.get_shape().standard()) return false;
        of_product.insert(&b);
    }
    return true;
}

// A dot or a gemm (its C only a row bias with beta = 1), then reshapes of the product keeping its
// rows, and what cuBLASLt applies itself, in its order
// D = act(A B + C + bias): the adds of a bias [N] and of a residual (C with beta = 1: same shape,
// type and layout as the output), each at most once, then relu or tanh's GELU, last. The region
// is then one library call: no generated kernel, no extra pass over the output.
bool try_library_epilogue(lowering_context& ctx, const instruction& ins, const module& body, const instruction& anchor,
                          const std::vector<body_operand>& in,
                          const std::unordered_map<const instruction*, body_operand>& known) {
    const auto& aop = anchor.get_operator();
    const auto* g = aop.get_if<ops::gemm>();
    const shape& out = ins.get_shape();
    const shape& product = anchor.get_shape();
    // A gemm's C joins only as a bias (one row, beta = 1); the product is the output's bytes.
    bool c_bias = g && anchor.inputs().size() == 3 && g->beta == 1 && is_row_bias(in.at(2).s, product);
    if (!(aop.get_if<ops::dot>() || (g && (anchor.inputs().size() == 2 || c_bias))) || !out.standard() ||
        !product.standard() || product.type() != out.type() || product.elements() != out.elements() ||
        product.lens().size() < 2)
        return false;
    std::size_t n = product.lens().back();
    std::optional<body_operand> bias, residual;
    if (c_bias) bias = in.at(2);
    bool relu = false, gelu = false;
    const instruction* prev = &anchor;
    for (const auto& b : body) {
        if (b.is_param() || b.is_return() || &b == &anchor) continue;
        bool reads_prev = std::any_of(b.inputs().begin(), b.inputs().end(), [&](auto i) { return &*i == prev; });
        if (!reads_prev && aliased_operand(b, known)) continue;   // a view of an input (the bias broadcast)
        if (relu || gelu || !reads_prev) return false;            // a chain, the activation last
        const auto& op = b.get_operator();
        const shape& bs = b.get_shape();
        std::vector<shape> in_shapes;
        for (auto i : b.inputs()) in_shapes.push_back(i->get_shape());
        if (op.output_alias(in_shapes) >= 0) {
            // A reshape of the product keeping its rows ([batch * seq, N] as [batch, seq, N]).
            if (!bs.standard() || bs.lens().empty() || bs.lens().back() != n) return false;
        } else if (op.get_if<ops::add>() && b.inputs().size() == 2 && &*b.inputs()[0] != &*b.inputs()[1]) {
            auto other = aliased_operand(&*b.inputs()[0] == prev ? *b.inputs()[1] : *b.inputs()[0], known);
            if (!other || other->s.type() != out.type() || bs.lens().empty() || bs.lens().back() != n) return false;
            // As the add reads it: numpy-broadcast to its result.
            shape os = broadcast_to(other->s, bs.lens());
            bool row = std::all_of(os.strides().begin(), os.strides().end() - 1, [](std::size_t st) { return st == 0; }) &&
                       (os.strides().back() == 1 || n == 1);
            if (!bias && row)
                bias = other;
            else if (!residual && os == bs && bs.standard())
                residual = other;
            else
                return false;
        } else if (op.get_if<ops::relu>()) {
            relu = true;
        } else if (const auto* ge = op.get_if<ops::gelu>(); ge && ge->approximate == "tanh") {
            gelu = true;
        } else {
            return false;
        }
        prev = &b;
    }
    if (prev == &anchor || &*std::prev(body.end())->inputs().at(0) != prev) return false;
    std::byte* d = ctx.address(ins);
    // cuBLASLt reads C and writes D element by element: the same memory or apart, never overlapping.
    if (residual && residual->ptr != d && residual->ptr < d + out.bytes() && d < residual->ptr + out.bytes()) return false;
    matmul_epilogue epi = bias ? (relu ? matmul_epilogue::bias_relu : gelu ? matmul_epilogue::bias_gelu : matmul_epilogue::bias)
                               : (relu ? matmul_epilogue::relu : gelu ? matmul_epilogue::gelu : matmul_epilogue::none);
    body_operand a = in.at(0), b = in.at(1);
    if (g && g->trans_a) a.s = swap_last_two(a.s);
    if (g && g->trans_b) b.s = swap_last_two(b.s);
    add_matmul(ctx, ins, a, b, {d, product}, g ? g->alpha : 1.0f, residual ? 1.0f : 0.0f, epi, bias ? bias->ptr : nullptr,
               residual ? residual->ptr : nullptr);
    return true;
}

// A fused epilogue: its anchor (the contraction) into the output buffer, then the pointwise rest
// of the body as one kernel reading the anchor's result where it lies and writing over it.
// An operand of the contraction: a region input, a literal the fusion kept inside (an RNN's zero
// initial state), or a view of one (a transposed weight) read through the view's strides.
body_operand region_input(lowering_context& ctx, const instruction& ins, const instruction& i,
                          std::unordered_map<const instruction*, body_operand>& known) {
    if (auto it = known.find(&i); it != known.end()) return it->second;
    if (i.is_literal()) {
        const argument& a = i.get_literal().get_argument();
        return known[&i] = {ctx.upload(a, ctx.where(ins)), a.get_shape().as_standard()};
    }
    std::vector<shape> in;
    for (auto j : i.inputs()) in.push_back(j->get_shape());
    int alias = i.is_param() || i.is_literal() ? -1 : i.get_operator().output_alias(in);
    if (alias < 0) fail("gpu: a fused epilogue's contraction must read the region's inputs, literals or views of them: ", ctx.where(ins));
    return known[&i] = view_operand(i, region_input(ctx, ins, *i.inputs()[alias], known));
}

const gpu_lowering_registrar epilogue_lowering{{
    "fused epilogue (library GEMM/convolution, then one generated kernel)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::fused_epilogue>() != nullptr; },
    [](lowering_context& ctx, const instruction& ins) {
        const module& body = *ins.module_inputs().at(0);
        auto known = body_params(ctx, ins, body);
        const instruction* anchor = nullptr;
        for (const auto& b : body)
            if (is_contraction(b)) anchor = &b;
        if (!anchor) fail("gpu: fused epilogue without a contraction: ", ctx.where(ins));
        std::vector<body_operand> in;
        for (auto i : anchor->inputs()) in.push_back(region_input(ctx, ins, *i, known));
        if (try_library_epilogue(ctx, ins, body, *anchor, in, known)) return;
        if (anchor->get_operator().get_if<ops::convolution>() && lower_conv_epilogue(ctx, ins, body, *anchor, in, known)) return;
        const shape& out = ctx.layout(ins);
        // The product channels-last for an NHWC convolution (the epilogue kernel then writes the
        // output's layout, whichever it is), else standard.
        shape as = nhwc_convolution(ins) ? channels_last(anchor->get_shape()) : anchor->get_shape().as_standard();
        body_operand result{ctx.address(ins), as};
        // The product goes straight into the output when the epilogue can read and write each
        // element in place (same type and layout, or a reshape of a standard product), else into
        // scratch memory.
        bool in_place = views_keep_order(body, *anchor) &&
                        (same_layout(as, out) || (as.standard() && out.standard() && as.type() == out.type() &&
                                                  as.elements() == out.elements()));
        if (!in_place) result.ptr = ctx.scratch(as.bytes(), "a fused epilogue's product");
        lower_contraction(ctx, ins, anchor->get_operator(), in, result);
        const instruction& ret = *std::prev(body.end());
        if (&*ret.inputs().at(0) == anchor) {   // nothing after the product
            if (result.ptr != ctx.address(ins)) copy_operand(ctx, ins, result, {ctx.address(ins), out});
            return;
        }
        known[anchor] = result;
        add_body_kernel(ctx, ins, body, known, ctx.address(ins), out);
    },
    true,
    false,
    true,
    true,
}};

}  // namespace
}  // namespace kiln::gpu
