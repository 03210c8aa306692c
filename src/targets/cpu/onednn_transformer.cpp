// oneDNN kernels for transformer ops: layer norm and softmax as their primitives, attention in
// onednn_attention.cpp. All in float; primitives and scratch buffers made when the executable is
// built.
#include <dnnl.hpp>

#include "ops/attention.hpp"
#include "ops/normalization.hpp"
#include "ops/softmax.hpp"
#include "targets/cpu/kernels.hpp"
#include "targets/cpu/onednn_util.hpp"

namespace kiln {
namespace {

using dnnl::memory;

// One primitive over plain inputs and output; `args` maps DNNL_ARG_* to the kernel's argument.
host_kernel single(dnnl::primitive p, const dnnl::primitive_desc_base& pd, std::vector<std::pair<int, memory::desc>> ins,
                   memory::desc out, cpu_context& ctx) {
    struct state {
        dnnl::primitive p;
        std::vector<memory> in;
        memory out;
        std::unordered_map<int, memory> args;
    };
    auto st = std::make_shared<state>();
    st->p = std::move(p);
    auto& eng = ctx.dnnl->engine;
    for (auto& [arg, d] : ins) st->in.emplace_back(d, eng, nullptr), st->args[arg] = st->in.back();
    st->out = memory(out, eng, nullptr);
    st->args[DNNL_ARG_DST] = st->out;
    if (pd.scratchpad_desc().get_size() > 0) st->args[DNNL_ARG_SCRATCHPAD] = memory(pd.scratchpad_desc(), eng);
    return [st, &ctx](std::span<const argument> args, const argument& out) {
        for (std::size_t i = 0; i < st->in.size(); ++i) st->in[i].set_data_handle(args[i].data());
        st->out.set_data_handle(out.data());
        st->p.execute(ctx.dnnl->stream, st->args);
        ctx.dnnl->stream.wait();
    };
}

// Layer norm over dims axis..end as oneDNN's over the last dim of [rows, C]: x standard, scale and
// bias C contiguous floats.
host_kernel layernorm(const ops::layernorm& op, const instruction& ins, cpu_context& ctx) {
    const shape& x = ins.inputs()[0]->get_shape();
    if (x.type() != dtype::float32 || !x.standard() || ins.inputs().size() != 3) return {};
    std::size_t axis = op.axis < 0 ? x.ndim() + op.axis : op.axis;
    std::size_t c = 1;
    for (std::size_t d = axis; d < x.ndim(); ++d) c *= x.lens()[d];
    for (std::size_t i = 1; i < 3; ++i) {
        const shape& s = ins.inputs()[i]->get_shape();
        if (s.elements() != c || !s.standard() || s.type() != dtype::float32) return {};
    }
    auto f32 = memory::data_type::f32;
    memory::desc xd({static_cast<memory::dim>(x.elements() / c), static_cast<memory::dim>(c)}, f32, memory::format_tag::ab);
    memory::desc cd({static_cast<memory::dim>(c)}, f32, memory::format_tag::a);
    dnnl::layer_normalization_forward::primitive_desc pd(
        ctx.dnnl->engine, dnnl::prop_kind::forward_inference, xd, xd, op.epsilon,
        dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift);
    return single(dnnl::layer_normalization_forward(pd), pd,
                  {{DNNL_ARG_SRC, xd}, {DNNL_ARG_SCALE, cd}, {DNNL_ARG_SHIFT, cd}}, xd, ctx);
}

host_kernel softmax(std::int64_t axis, dnnl::algorithm alg, const instruction& ins, cpu_context& ctx) {
    const shape& x = ins.inputs()[0]->get_shape();
    if (x.type() != dtype::float32 || x.ndim() == 0) return {};
    int a = static_cast<int>(axis < 0 ? axis + static_cast<std::int64_t>(x.ndim()) : axis);
    memory::desc xd = plain_desc(x), yd = plain_desc(ins.get_shape());
    dnnl::softmax_forward::primitive_desc pd(ctx.dnnl->engine, dnnl::prop_kind::forward_inference, alg, xd, yd, a);
    return single(dnnl::softmax_forward(pd), pd, {{DNNL_ARG_SRC, xd}}, yd, ctx);
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
