// oneDNN kernels for transformer ops: layer norm and softmax as their primitives, attention in
// onednn_attention.cpp. float32, and float16/bfloat16 in the type oneDNN computes them in
// (compute_type: float32 where the CPU lacks the type's arithmetic, x converted on the way in and
// the result on the way out); primitives and scratch buffers made when the executable is built.
#include <dnnl.hpp>

#include "ops/attention.hpp"
#include "ops/normalization.hpp"
#include "ops/softmax.hpp"
#include "targets/cpu/kernels.hpp"
#include "targets/cpu/onednn_util.hpp"
#include "targets/cpu/type_convert.hpp"

namespace kiln {
namespace {

using dnnl::memory;

// One primitive over plain inputs and output. Each operand is {DNNL_ARG_*, the kernel's
// descriptor, the primitive's}: where they differ (the type), a buffer of the primitive's and a
// conversion each run.
struct operand_desc {
    int arg;
    memory::desc from, want;
};
host_kernel single(dnnl::primitive p, const dnnl::primitive_desc_base& pd, std::vector<operand_desc> ins,
                   memory::desc out, memory::desc out_want, cpu_context& ctx) {
    struct io {
        memory user, inner;
        std::optional<tensor_copy> copy;
    };
    struct state {
        dnnl::primitive p;
        std::vector<io> in;
        io out;
        std::unordered_map<int, memory> args;
    };
    auto st = std::make_shared<state>();
    st->p = std::move(p);
    auto& eng = ctx.dnnl->engine;
    auto make = [&](const memory::desc& from, const memory::desc& want, bool input) {
        io x;
        x.user = memory(from, eng, nullptr);
        x.inner = from == want ? x.user : memory(want, eng);
        if (from != want) input ? x.copy.emplace(x.user, x.inner) : x.copy.emplace(x.inner, x.user);
        return x;
    };
    for (auto& o : ins) st->in.push_back(make(o.from, o.want, true)), st->args[o.arg] = st->in.back().inner;
    st->out = make(out, out_want, false);
    st->args[DNNL_ARG_DST] = st->out.inner;
    if (pd.scratchpad_desc().get_size() > 0) st->args[DNNL_ARG_SCRATCHPAD] = ctx.dnnl->scratchpad_memory(pd.scratchpad_desc());
    return [st, &ctx](std::span<const argument> args, const argument& out) {
        auto& s = ctx.dnnl->stream;
        for (std::size_t i = 0; i < st->in.size(); ++i) {
            auto& x = st->in[i];
            x.user.set_data_handle(args[i].data());
            if (x.copy) x.copy->execute(s, x.user, x.inner);
        }
        st->out.user.set_data_handle(out.data());
        if (auto sp = st->args.find(DNNL_ARG_SCRATCHPAD); sp != st->args.end()) ctx.dnnl->bind_scratchpad(sp->second);
        st->p.execute(s, st->args);
        if (st->out.copy) st->out.copy->execute(s, st->out.inner, st->out.user);
        s.wait();
    };
}

// Layer norm over dims axis..end as oneDNN's over the last dim of [rows, C]: x standard, scale and
// bias C contiguous values (oneDNN reads them as float32).
host_kernel layernorm(const ops::layernorm& op, const instruction& ins, cpu_context& ctx) {
    const shape& x = ins.inputs()[0]->get_shape();
    if (!x.standard() || ins.inputs().size() != 3) return {};
    std::size_t axis = op.axis < 0 ? x.ndim() + op.axis : op.axis;
    std::size_t c = 1;
    for (std::size_t d = axis; d < x.ndim(); ++d) c *= x.lens()[d];
    for (std::size_t i = 1; i < 3; ++i) {
        const shape& s = ins.inputs()[i]->get_shape();
        if (s.elements() != c || !s.standard()) return {};
    }
    auto t = compute_type(x.type()), f32 = memory::data_type::f32;
    auto dim = [](std::size_t n) { return static_cast<memory::dim>(n); };
    memory::desc xd({dim(x.elements() / c), dim(c)}, *dnnl_type(x.type()), memory::format_tag::ab);
    memory::desc yd({dim(x.elements() / c), dim(c)}, *dnnl_type(ins.get_shape().type()), memory::format_tag::ab);
    memory::desc xw = with_type(xd, t), cd({dim(c)}, f32, memory::format_tag::a);
    auto scale_from = [&](std::size_t i) { return memory::desc({dim(c)}, *dnnl_type(ins.inputs()[i]->get_shape().type()), memory::format_tag::a); };
    dnnl::layer_normalization_forward::primitive_desc pd(
        ctx.dnnl->engine, dnnl::prop_kind::forward_inference, xw, xw, op.epsilon,
        dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift, user_scratchpad());
    return single(dnnl::layer_normalization_forward(pd), pd,
                  {{DNNL_ARG_SRC, xd, xw}, {DNNL_ARG_SCALE, scale_from(1), cd}, {DNNL_ARG_SHIFT, scale_from(2), cd}}, yd,
                  xw, ctx);
}

host_kernel softmax(std::int64_t axis, dnnl::algorithm alg, const instruction& ins, cpu_context& ctx) {
    const shape& x = ins.inputs()[0]->get_shape();
    if (x.ndim() == 0) return {};
    int a = static_cast<int>(axis < 0 ? axis + static_cast<std::int64_t>(x.ndim()) : axis);
    auto t = compute_type(x.type());
    memory::desc xd = plain_desc(x), yd = plain_desc(ins.get_shape());
    memory::desc xw = with_type(xd, t), yw = with_type(yd, t);
    dnnl::softmax_forward::primitive_desc pd(ctx.dnnl->engine, dnnl::prop_kind::forward_inference, alg, xw, yw, a,
                                             user_scratchpad());
    return single(dnnl::softmax_forward(pd), pd, {{DNNL_ARG_SRC, xd, xw}}, yd, yw, ctx);
}

}  // namespace

host_kernel make_onednn_transformer_kernel(const instruction& ins, cpu_context& ctx) {
    const operation& op = ins.get_operator();
    if (const auto* a = op.get_if<ops::attention>()) return onednn_attention_kernel(*a, ins, ctx);
    if (const auto* l = op.get_if<ops::layernorm>()) return layernorm(*l, ins, ctx);
    if (const auto* s = op.get_if<ops::softmax>()) return softmax(s->axis, dnnl::algorithm::softmax_accurate, ins, ctx);
    if (const auto* s = op.get_if<ops::logsoftmax>()) return softmax(s->axis, dnnl::algorithm::softmax_log, ins, ctx);
    return {};
}

}  // namespace kiln
