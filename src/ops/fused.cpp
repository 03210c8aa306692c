// Fused regions: ops whose one submodule is the body of one kernel. The fusion passes
// (src/passes/fuse_*.cpp) build them; a target generates or picks one kernel per instruction.
//   pointwise       pointwise ops (and broadcast views of their inputs) computing one value
//   fused_reduce    reductions over the same `axes` with their pointwise producers and consumers
//   fused_epilogue  one dot, gemm or convolution followed by pointwise ops on its result (bias,
//                   activation, residual add), read directly or through views that keep each
//                   element once (a reshape, a transpose): the epilogue a GEMM or convolution
//                   library applies before it writes its output (cuBLASLt and cuDNN call it that)
// The submodule's parameters receive the op's inputs in order (same type and lens; strides may
// differ); it returns one value, which the op writes in standard layout. The reference compute
// runs the submodule. Validation lives in compute_shape, so the IR validator rejects a bad body.
#include "ops/fused.hpp"

#include <algorithm>
#include <unordered_set>

#include "core/module.hpp"
#include "ops/common.hpp"

namespace kiln::ops {
namespace {

const module& body_of(std::span<module* const> mods) {
    if (mods.size() != 1) fail("expects 1 module (its body), got ", mods.size());
    return *mods[0];
}

// "submodule 'pointwise0' @3 = dot": names a body instruction in messages.
std::string where(const module& m, const instruction& ins) {
    std::size_t n = 0;
    for (const auto& i : m) {
        if (&i == &ins) break;
        if (!i.is_param()) ++n;
    }
    return cat("submodule '", m.name(), "' @", n, " = ", ins.name());
}

// The body's parameters take the inputs; it returns one tensor, whose standard form is the output.
shape check_signature(const module& m, std::span<const shape> in) {
    auto params = m.parameters();
    if (params.size() != in.size())
        fail("submodule '", m.name(), "' takes ", params.size(), " parameters but the op has ", in.size(), " inputs");
    for (std::size_t i = 0; i < in.size(); ++i) {
        const shape& p = params[i]->get_shape();
        if (in[i].is_tuple() || in[i].dynamic() || p.type() != in[i].type() || p.lens() != in[i].lens())
            fail("submodule '", m.name(), "' parameter ", i, " '", m.parameter_name(*params[i]), "' is ", to_string(p),
                 " but input ", i, " is ", to_string(in[i]));
    }
    auto outs = m.output_shapes();
    if (outs.size() != 1 || outs[0].is_tuple() || outs[0].dynamic())
        fail("submodule '", m.name(), "' must return one static tensor, returns ", outs.size(), " values");
    return outs[0].as_standard();
}

// Instructions that compute (not parameters, literals or the return).
std::vector<const instruction*> body_ops(const module& m) {
    std::vector<const instruction*> r;
    for (const auto& ins : m)
        if (!ins.get_operator().traits().builtin) r.push_back(&ins);
    return r;
}

// Every op is pointwise, a broadcast view, or one that `extra` accepts; at least one computes.
template <class Extra>
void check_ops(const module& m, const char* expected, Extra extra) {
    bool computes = false;
    for (const instruction* ins : body_ops(m)) {
        auto t = ins->get_operator().traits();
        if (!t.pointwise && !t.broadcast_view && !extra(*ins)) fail(where(m, *ins), " is not ", expected);
        computes = computes || !t.broadcast_view;
    }
    if (!computes) fail("submodule '", m.name(), "' computes nothing");
}

argument run_body(std::span<const argument> args, std::span<module* const> mods, const module_runner& run) {
    if (!run) fail("needs a module runner to call its submodule");
    auto outs = run(*mods[0], args);
    return outs.at(0).get_shape().standard() ? outs[0] : outs[0].copy();
}

}  // namespace

shape pointwise::compute_shape(std::span<const shape> in, std::span<module* const> mods) const {
    const module& m = body_of(mods);
    shape out = check_signature(m, in);
    check_ops(m, "a pointwise op or a broadcast view", [](const instruction&) { return false; });
    return out;
}

argument pointwise::compute(const shape&, std::span<const argument> args, std::span<module* const> mods,
                            const module_runner& run) const {
    return run_body(args, mods, run);
}
KILN_REGISTER_OP(pointwise)

namespace {

// The axes a reduction reduces, as its attributes say (empty axes: all of them).
std::vector<std::size_t> reduced_axes(const instruction& ins) {
    value attrs = ins.get_operator().attributes();
    std::size_t ndim = ins.inputs().at(0)->get_shape().ndim();
    std::vector<std::int64_t> axes;
    if (attrs.contains("axes")) from_value(attrs.at("axes"), axes);
    if (axes.empty()) {
        std::vector<std::size_t> all(ndim);
        for (std::size_t i = 0; i < ndim; ++i) all[i] = i;
        return all;
    }
    auto r = normalize_axes(axes, ndim);
    std::sort(r.begin(), r.end());
    return r;
}

}  // namespace

shape fused_reduce::compute_shape(std::span<const shape> in, std::span<module* const> mods) const {
    const module& m = body_of(mods);
    shape out = check_signature(m, in);
    if (axes.empty()) fail("axes is empty; expected the axes its reductions reduce");
    std::size_t reductions = 0;
    check_ops(m, "a reduction, a pointwise op or a broadcast view", [&](const instruction& ins) {
        if (!ins.get_operator().traits().reduction) return false;
        auto got = reduced_axes(ins);
        auto want = normalize_axes(axes, ins.inputs().at(0)->get_shape().ndim());
        std::sort(want.begin(), want.end());
        if (got != want)
            fail(where(m, ins), " reduces axes ", lens_to_string(got), " but the op's axes are ",
                 lens_to_string(want));
        ++reductions;
        return true;
    });
    if (reductions == 0) fail("submodule '", m.name(), "' has no reduction");
    return out;
}

argument fused_reduce::compute(const shape&, std::span<const argument> args, std::span<module* const> mods,
                               const module_runner& run) const {
    return run_body(args, mods, run);
}
KILN_REGISTER_OP(fused_reduce)

namespace {

// Whether `to`'s value depends on `from` inside module m.
bool depends_on(const instruction& to, const instruction& from) {
    std::vector<const instruction*> stack{&to};
    std::unordered_set<const instruction*> seen;
    while (!stack.empty()) {
        const instruction* i = stack.back();
        stack.pop_back();
        if (i == &from) return true;
        if (!seen.insert(i).second) continue;
        for (auto in : i->inputs()) stack.push_back(&*in);
    }
    return false;
}

// A view that keeps every element once, in another shape or order (reshape, transpose, squeeze).
bool reorders(const instruction& ins) {
    std::vector<shape> in;
    for (auto i : ins.inputs()) in.push_back(i->get_shape());
    int alias = ins.get_operator().output_alias(in);
    return alias >= 0 && !ins.get_operator().traits().broadcast_view &&
           ins.get_shape().elements() == in[static_cast<std::size_t>(alias)].elements();
}

}  // namespace

shape fused_epilogue::compute_shape(std::span<const shape> in, std::span<module* const> mods) const {
    const module& m = body_of(mods);
    shape out = check_signature(m, in);
    const instruction* anchor = nullptr;
    check_ops(m, "a dot, gemm, convolution, pointwise op, broadcast view or reordering view", [&](const instruction& ins) {
        if (reorders(ins)) return true;   // the product reshaped or transposed before the pointwise tail
        if (!ins.get_operator().traits().contraction) return false;
        if (anchor) fail("submodule '", m.name(), "' has a second ", ins.name(), "; expected one dot, gemm or convolution");
        anchor = &ins;
        return true;
    });
    if (!anchor) fail("submodule '", m.name(), "' has no dot, gemm or convolution");
    for (auto in : anchor->inputs())
        if (!in->is_param() && !in->is_literal() && !in->get_operator().traits().broadcast_view)
            fail(where(m, *anchor), " takes a computed input; an epilogue body starts at its contraction");
    if (!depends_on(*m.get_return()->inputs().at(0), *anchor))
        fail("submodule '", m.name(), "' returns a value that does not depend on its ", anchor->name());
    return out;
}

argument fused_epilogue::compute(const shape&, std::span<const argument> args, std::span<module* const> mods,
                                 const module_runner& run) const {
    return run_body(args, mods, run);
}
KILN_REGISTER_OP(fused_epilogue)

}  // namespace kiln::ops
