// Control flow (ONNX If and Loop): `if` runs one of two submodules, `loop` runs a body submodule
// while its condition holds. Submodules are closed: they see only their parameters, which the op
// passes in order. Both ops return a tuple (read with get_tuple_elem) whose elements are in
// standard layout, so the tuple's shape does not depend on which branch ran.
#include <algorithm>
#include <array>
#include <iterator>

#include "core/cancel.hpp"
#include "core/container.hpp"
#include "core/module.hpp"
#include "ops/common.hpp"
#include "ops/control.hpp"

namespace kiln::ops {

std::vector<std::size_t> stacked_lens(const std::vector<argument>& parts, const shape& stacked, std::size_t output) {
    std::vector<std::size_t> lens{parts.size()};
    if (parts.empty()) {
        auto dims = stacked.dims();
        for (std::size_t d = 1; d < dims.size(); ++d) lens.push_back(dims[d].min);
        return lens;
    }
    const auto& first = parts[0].get_shape().lens();
    lens.insert(lens.end(), first.begin(), first.end());
    for (std::size_t i = 1; i < parts.size(); ++i)
        if (parts[i].get_shape().lens() != first)
            fail("scan output ", output, " has lens ", lens_to_string(first), " in iteration 0 but ",
                 lens_to_string(parts[i].get_shape().lens()), " in iteration ", i);
    return lens;
}

namespace {

// ONNX gives flags and counts as scalars or 1-element tensors.
void check_flag(const shape& s, dtype t, const std::string& what) {
    if (s.type() != t || s.dynamic() || s.is_tuple() || s.elements() != 1)
        fail(what, " is ", to_string(s), "; expected a ", dtype_name(t), " scalar or 1-element tensor");
}

std::int64_t read_flag(const argument& a) { return to_int64s(a).at(0); }

argument make_flag(const shape& s, std::int64_t v) { return from_int64s(s, std::array<std::int64_t, 1>{v}); }

// Whether a value of shape `arg` can be bound to a parameter of shape `param` (as evaluate binds).
bool binds(const shape& param, const shape& arg) {
    if (!param.is_tensor() || !arg.is_tensor() || !param.rank_known()) return holds_type(param, arg);
    if (!param.dynamic() || arg.dynamic()) return param.as_standard() == arg.as_standard();
    if (param.type() != arg.type() || param.ndim() != arg.ndim()) return false;
    for (std::size_t i = 0; i < arg.ndim(); ++i)
        if (arg.lens()[i] < param.dyn_dims()[i].min || arg.lens()[i] > param.dyn_dims()[i].max) return false;
    return true;
}

// Parameters first_param... of `m` receive `values` (inputs first_input... of the op).
void check_bindings(const module& m, std::size_t first_param, std::span<const shape> values, std::size_t first_input,
                    const char* role) {
    auto params = m.parameters();
    if (params.size() != first_param + values.size())
        fail(role, " '", m.name(), "' takes ", params.size(), " parameters; expected ", first_param + values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        const instruction& p = *params[first_param + i];
        if (!binds(p.get_shape(), values[i]))
            fail(role, " '", m.name(), "' parameter ", first_param + i, " '", m.parameter_name(p), "' is ",
                 to_string(p.get_shape()), " but input ", first_input + i, " is ", to_string(values[i]));
    }
}

// The interpreter widens int4/uint4 to 8 bits before an op computes; a submodule wants them packed.
argument as_type(const argument& a, dtype t) {
    if (a.get_shape().type() == t) return a;
    return from_int64s(shape(t, a.get_shape().lens()), to_int64s(a));
}

std::vector<argument> bind_values(const module& m, std::size_t first_param, std::span<const argument> values) {
    auto params = m.parameters();
    std::vector<argument> r;
    for (std::size_t i = 0; i < values.size(); ++i)
        r.push_back(as_type(values[i], params[first_param + i]->get_shape().type()));
    return r;
}

argument standard(const argument& a) { return a.get_shape().standard() ? a : a.copy(); }

void check_runner(const module_runner& run) {
    if (!run) fail("needs a module runner to call its submodules");
}

}  // namespace

shape if_op::compute_shape(std::span<const shape> in, std::span<module* const> mods) const {
    if (in.empty()) fail("expected at least 1 input (cond)");
    if (mods.size() != 2) fail("expects 2 modules (then, else), got ", mods.size());
    check_flag(in[0], dtype::bool_, "input 0 (cond)");
    check_bindings(*mods[0], 0, in.subspan(1), 1, "then branch");
    check_bindings(*mods[1], 0, in.subspan(1), 1, "else branch");
    auto then_out = mods[0]->output_shapes(), else_out = mods[1]->output_shapes();
    const std::string& t = mods[0]->name();
    const std::string& e = mods[1]->name();
    if (then_out.size() != else_out.size())
        fail("branch '", t, "' returns ", then_out.size(), " values but '", e, "' returns ", else_out.size());
    // An output's type is the join of what either branch returns: dims that differ become
    // ranges and ranks that differ any rank, known when the branch that runs has run (a model
    // that switches on an input value between branches written for different sizes).
    std::vector<shape> outs;
    for (std::size_t i = 0; i < then_out.size(); ++i) {
        if (then_out[i].type() != else_out[i].type())
            fail("branches return different types: output ", i, " is ", to_string(then_out[i]), " in '", t, "' but ",
                 to_string(else_out[i]), " in '", e, "'");
        outs.push_back(join_types(then_out[i], else_out[i]));
    }
    return shape(std::move(outs));
}

argument if_op::compute(const shape&, std::span<const argument> args, std::span<module* const> mods,
                 const module_runner& run) const {
    check_runner(run);
    const module& branch = *mods[read_flag(args[0]) != 0 ? 0 : 1];
    auto results = run(branch, bind_values(branch, 0, args.subspan(1)));
    for (auto& r : results) r = standard(r);
    return argument(std::move(results));
}
KILN_REGISTER_OP(if_op)

namespace {

// Scan outputs of every iteration stacked along a new first axis. Elements go through int64 or
// double, which hold every dtype exactly (packed int4 included).
argument stack(const std::vector<argument>& parts, const shape& stacked, std::size_t output) {
    std::vector<std::size_t> lens = stacked_lens(parts, stacked, output);
    shape s(stacked.type(), lens);
    if (is_float(s.type())) {
        std::vector<double> v;
        for (const auto& p : parts) std::ranges::copy(to_doubles(p), std::back_inserter(v));
        return from_doubles(s, v);
    }
    std::vector<std::int64_t> v;
    for (const auto& p : parts) std::ranges::copy(to_int64s(p), std::back_inserter(v));
    return from_int64s(s, v);
}

}  // namespace

shape loop::compute_shape(std::span<const shape> in, std::span<module* const> mods) const {
    if (in.size() < 2) fail("expected at least 2 inputs (max_trip_count, cond), got ", in.size());
    if (mods.size() != 1) fail("expects 1 module (the body), got ", mods.size());
    if (max_iterations < 0) fail("max_iterations=", max_iterations, " is negative");
    check_flag(in[0], dtype::int64, "input 0 (max_trip_count)");
    check_flag(in[1], dtype::bool_, "input 1 (cond)");
    const module& body = *mods[0];
    auto carried = in.subspan(2);
    check_bindings(body, 2, carried, 2, "body");
    auto params = body.parameters();
    check_flag(params[0]->get_shape(), dtype::int64, "body parameter 0 (iteration number)");
    check_flag(params[1]->get_shape(), dtype::bool_, "body parameter 1 (cond)");
    auto outs = body.output_shapes();
    if (outs.size() < 1 + carried.size())
        fail("body '", body.name(), "' returns ", outs.size(), " values; expected cond, ", carried.size(),
             " carried values, then the scan outputs");
    check_flag(outs[0], dtype::bool_, "body output 0 (cond)");
    std::vector<shape> result;
    for (std::size_t i = 0; i < carried.size(); ++i) {
        const shape& param = params[2 + i]->get_shape();
        if (!holds_type(param, outs[1 + i]))
            fail("body output ", 1 + i, " (carried value ", i, ") is ", to_string(outs[1 + i]),
                 " but its body parameter is ", to_string(param));
        result.push_back(param.as_standard());
    }
    for (std::size_t k = 1 + carried.size(); k < outs.size(); ++k) {
        if (!outs[k].is_tensor())
            fail("body output ", k, " is ", to_string(outs[k]), "; a scan output must be a tensor");
        auto dims = outs[k].dims();
        dims.insert(dims.begin(), dynamic_dim{0, static_cast<std::size_t>(max_iterations), {}, {}});
        result.emplace_back(outs[k].type(), std::move(dims));
    }
    return shape(std::move(result));
}

argument loop::compute(const shape& out, std::span<const argument> args, std::span<module* const> mods,
                 const module_runner& run) const {
    check_runner(run);
    const module& body = *mods[0];
    auto params = body.parameters();
    const std::int64_t trips = read_flag(args[0]);
    bool cond = read_flag(args[1]) != 0;
    const std::size_t n = args.size() - 2;
    const std::size_t k = out.sub_shapes().size() - n;
    std::vector<argument> carried = bind_values(body, 2, args.subspan(2));
    std::vector<std::vector<argument>> scans(k);
    for (std::int64_t i = 0; i < trips && cond; ++i) {
        if (i == max_iterations)
            fail("the loop runs past max_iterations=", max_iterations, "; its trip count and cond allow more");
        std::vector<argument> in{make_flag(params[0]->get_shape(), i), make_flag(params[1]->get_shape(), 1)};
        in.insert(in.end(), carried.begin(), carried.end());
        std::vector<argument> outs;
        try {   // the body's instructions check for a cancel; this names the iteration it stopped in
            outs = run(body, in);
        } catch (const cancelled& e) {
            throw cancelled(cat("iteration ", i, ": ", e.what()));
        }
        cond = read_flag(outs[0]) != 0;
        std::copy(outs.begin() + 1, outs.begin() + 1 + static_cast<std::ptrdiff_t>(n), carried.begin());
        for (std::size_t s = 0; s < k; ++s) scans[s].push_back(outs[1 + n + s]);
    }
    std::vector<argument> result;
    for (const auto& c : carried) result.push_back(standard(c));
    for (std::size_t s = 0; s < k; ++s) result.push_back(stack(scans[s], out.sub_shapes()[n + s], s));
    return argument(std::move(result));
}
KILN_REGISTER_OP(loop)

}  // namespace kiln::ops
