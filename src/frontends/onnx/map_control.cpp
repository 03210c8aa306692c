// ONNX control flow onto kiln's `if`, `loop` and `scan`. Their submodules are closed: a subgraph
// is parsed into a module whose parameters are the graph's inputs followed by the outer values
// it captures, and those outer values become extra inputs of the op. Each op returns a tuple,
// read back with one get_tuple_elem per node output. An If whose cond is a constant (often a
// test on shapes) becomes the branch that runs, copied into the current module: the other
// branch may not even apply to the model's shapes, and the copy folds with its surroundings.
// An If whose cond is known only at run time and one of whose branches does not apply to the
// shapes is deferred (deferred.cpp) until cond is known; branches that apply but return
// different dims or ranks give the If an output of their joined type (ops/control.cpp).
#include <algorithm>
#include <exception>
#include <limits>
#include <unordered_map>

#include "core/container.hpp"
#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;
using ints = std::vector<std::int64_t>;

bool present(context& ctx, const inputs_t& in, std::size_t i) { return i < in.size() && !ctx.is_none(in[i]); }

// Adds an op that calls submodules (ctx.add takes none); it returns a tuple.
instruction_ref add_with_modules(const node_info& n, context& ctx, const std::string& op, const value& attrs,
                                 const inputs_t& in, std::vector<module*> mods) {
    context::check_present(in);
    auto t = ctx.mod().add_instruction(make_op(op, attrs), in, std::move(mods));
    t->set_source_name(n.name());
    return t;
}

// Elements first... first+count-1 of tuple t.
inputs_t elements(context& ctx, instruction_ref t, std::size_t first, std::size_t count) {
    inputs_t out;
    for (std::size_t i = first; i < first + count; ++i)
        out.push_back(ctx.add("get_tuple_elem", value{{"index", static_cast<std::int64_t>(i)}}, {t}));
    return out;
}

std::ptrdiff_t index_of(const inputs_t& v, instruction_ref x) {
    auto it = std::find(v.begin(), v.end(), x);
    return it == v.end() ? -1 : it - v.begin();
}

// The parameter names of the captures `caps` of module m (its last parameters).
std::vector<std::string> capture_names(const module& m, const inputs_t& caps) {
    auto params = m.parameters();
    std::vector<std::string> names;
    for (std::size_t k = params.size() - caps.size(); k < params.size(); ++k)
        names.push_back(m.parameter_name(*params[k]));
    return names;
}

// The outer values that either branch reads, each once, with its parameter name in its branch.
struct captured {
    inputs_t values;
    std::vector<std::string> names;
};
captured union_of(const module& a, const inputs_t& a_caps, const module& b, const inputs_t& b_caps) {
    captured u;
    for (const auto& [m, caps] : {std::pair{&a, &a_caps}, std::pair{&b, &b_caps}}) {
        auto names = capture_names(*m, *caps);
        for (std::size_t k = 0; k < caps->size(); ++k) {
            if (index_of(u.values, (*caps)[k]) >= 0) continue;
            u.values.push_back((*caps)[k]);
            u.names.push_back(names[k]);
        }
    }
    return u;
}

// Makes branch `m` (whose last parameters receive `mine`) take one parameter per value of `all`,
// in that order: a value it captured twice (two names for one instruction) keeps one parameter;
// a value only the other branch reads gets an unused one, named as in that branch.
void align_captures(module& m, const inputs_t& mine, const captured& all) {
    auto params = m.parameters();
    const std::size_t first = params.size() - mine.size();
    std::vector<instruction_ref> ordered(params.begin(), params.begin() + static_cast<std::ptrdiff_t>(first));
    for (std::size_t k = 0; k < mine.size(); ++k) {
        auto keep = static_cast<std::size_t>(index_of(mine, mine[k]));
        if (keep == k) continue;
        m.replace_uses(params[first + k], params[first + keep]);
        m.remove_instruction(params[first + k]);
    }
    for (std::size_t i = 0; i < all.values.size(); ++i) {
        auto k = index_of(mine, all.values[i]);
        ordered.push_back(k >= 0 ? params[first + static_cast<std::size_t>(k)]
                                 : m.add_parameter(all.names[i], all.values[i]->get_shape()));
    }
    for (auto it = ordered.rbegin(); it != ordered.rend(); ++it) m.move_instruction(*it, m.begin());
}

// Copies m's instructions into the current module with its parameters bound to `args` (constant
// subexpressions fold as they are added); returns what m returns.
inputs_t inline_module(context& ctx, const module& m, const inputs_t& args) {
    std::unordered_map<const instruction*, instruction_ref> at;
    auto params = m.parameters();
    for (std::size_t i = 0; i < params.size(); ++i) at[&*params[i]] = args[i];
    for (const auto& ins : m) {
        if (ins.is_param()) continue;
        if (ins.is_literal()) {
            at[&ins] = ctx.add_literal(ins.get_literal());
            continue;
        }
        inputs_t in;
        for (auto x : ins.inputs()) in.push_back(at.at(&*x));
        if (ins.is_return()) return in;
        const operation& op = ins.get_operator();
        auto r = ins.module_inputs().empty() ? ctx.add(std::string(op.name()), op.attributes(), in)
                                             : ctx.mod().add_instruction(op, in, ins.module_inputs());
        if (!r->is_literal() && !ins.source_name().empty()) r->set_source_name(ins.source_name());
        at[&ins] = r;
    }
    fail("module '", m.name(), "' has no @return");
}

// If: both branches take the same parameters, one per outer value that either branch reads.
inputs_t map_if(const node_info& n, context& ctx, const inputs_t& in) {
    if (!present(ctx, in, 0)) fail("input 0 (cond) is required");
    if (ctx.is_constant(in[0])) {
        // Only the branch that runs is parsed (the other may not even apply to these shapes).
        auto c = ctx.constant_ints(in[0], "input 0 (cond)");
        if (c.size() != 1) fail("input 0 (cond) has ", c.size(), " elements; expected one");
        inputs_t caps;
        module* branch = ctx.parse_subgraph(n.attr_graph(c[0] != 0 ? "then_branch" : "else_branch"),
                                            n.name() + (c[0] != 0 ? "_then" : "_else"), {}, caps);
        return inline_module(ctx, *branch, caps);
    }
    inputs_t then_caps, else_caps;
    const std::size_t first_new = ctx.prog().modules().size();
    std::exception_ptr failed;
    auto parse_branch = [&](const char* attr, const char* suffix, inputs_t& caps) -> module* {
        try {
            return ctx.parse_subgraph(n.attr_graph(attr), n.name() + suffix, {}, caps);
        } catch (const error&) {
            if (!failed) failed = std::current_exception();
            return nullptr;
        }
    };
    module* then_m = parse_branch("then_branch", "_then", then_caps);
    module* else_m = parse_branch("else_branch", "_else", else_caps);
    if (!then_m && !else_m) std::rethrow_exception(failed);
    if (!then_m || !else_m) {
        // A branch that does not apply to these shapes (a model that switches on an input value
        // between branches written for different sizes) is checked only if it is taken: the node
        // is deferred until cond is known, typed as the other branch returns, and then only the
        // branch that runs is mapped.
        ctx.deferred_types = (then_m ? then_m : else_m)->output_shapes();
        ctx.prog().remove_modules_after(first_new);
        ctx.constant_ints(in[0], "input 0 (cond)");   // throws runtime_value_needed
    }
    if (then_m->parameters().size() != then_caps.size() || else_m->parameters().size() != else_caps.size())
        fail("a branch graph declares inputs; If branches take none");
    captured all = union_of(*then_m, then_caps, *else_m, else_caps);
    align_captures(*then_m, then_caps, all);
    align_captures(*else_m, else_caps, all);
    inputs_t args{in[0]};
    args.insert(args.end(), all.values.begin(), all.values.end());
    return elements(ctx, add_with_modules(n, ctx, "if", value(), args, {then_m, else_m}), 0, n.output_count());
}
KILN_ONNX_OP("", "If", 1, map_if)

// A carried value's type widened to hold `out` too: the join, with every dim that is not fixed
// made unbounded, so that a value that grows each iteration settles after one widening.
shape widened(const shape& type, const shape& out) {
    shape j = join_types(type, out);
    if (j.is_sequence()) return shape::sequence(widened(j.element(), j.element()));
    if (j.is_optional()) return shape::optional(widened(j.element(), j.element()));
    if (!j.dynamic() || !j.rank_known()) return j;
    auto dims = j.dims();
    for (auto& d : dims)
        if (!d.is_fixed()) d = {0, unbounded_dim, {}, d.symbol};
    return shape(j.type(), dims);
}

// Parses a Loop body whose carried values (body inputs 2...) start as `body_shapes` says. When
// the body returns a carried value its parameter's type does not hold (a sequence that grows, a
// tensor whose dims change), the parameter is widened and the body parsed again; ranks that
// differ widen to any rank, so this settles within a few rounds. A carried value that starts as
// an optional and that the body returns as a plain value (the "none on the first iteration"
// idiom) stays an optional: the body wraps what it returns, and `wrapped` marks it so the caller
// unwraps the loop's result.
module* parse_loop_body(const node_info& n, context& ctx, std::vector<shape>& body_shapes, inputs_t& caps,
                        std::vector<bool>& wrapped) {
    const std::size_t first_new = ctx.prog().modules().size();
    for (int round = 0;; ++round) {
        caps.clear();
        module* body = ctx.parse_subgraph(n.attr_graph("body"), n.name() + "_body", body_shapes, caps);
        if (body->parameters().size() != body_shapes.size() + caps.size())
            fail("the body graph declares ", body->parameters().size() - caps.size(), " inputs; expected ",
                 body_shapes.size(), " (iteration number, cond, ", body_shapes.size() - 2, " carried values)");
        inputs_t outs = body->get_return()->inputs();
        bool settled = true;
        wrapped.assign(body_shapes.size(), false);
        for (std::size_t i = 2; i < body_shapes.size() && i - 1 < outs.size(); ++i) {
            const shape& out = outs[i - 1]->get_shape();
            wrapped[i] = body_shapes[i].is_optional() && !out.is_optional();
            const shape& param = wrapped[i] ? body_shapes[i].element() : body_shapes[i];
            if (holds_type(param, out)) continue;
            if (round == 3)
                fail("carried value ", i - 2, " does not settle on a type: the body returns ", to_string(out),
                     " for a parameter of ", to_string(body_shapes[i]));
            body_shapes[i] = wrapped[i] ? shape::optional(widened(param, out)) : widened(param, out);
            settled = false;
        }
        if (settled) {
            if (std::find(wrapped.begin(), wrapped.end(), true) == wrapped.end()) return body;
            body->remove_instruction(body->get_return());
            for (std::size_t i = 2; i < wrapped.size(); ++i)
                if (wrapped[i]) outs[i - 1] = body->add_instruction(make_op("optional"), {outs[i - 1]});
            body->add_return(outs);
            return body;
        }
        ctx.prog().remove_modules_after(first_new);
    }
}

// Loop: an absent trip count is unlimited and an absent cond is true. Scan outputs get a first
// dim bounded by the trip count when it is a constant (and unbounded otherwise).
inputs_t map_loop(const node_info& n, context& ctx, const inputs_t& in) {
    const std::int64_t no_limit = std::numeric_limits<std::int64_t>::max();
    instruction_ref trips = present(ctx, in, 0) ? in[0] : ctx.add_literal(literal(shape(dtype::int64), ints{no_limit}));
    instruction_ref cond = present(ctx, in, 1) ? in[1] : ctx.add_literal(literal(shape(dtype::bool_), ints{1}));
    auto max_iterations = static_cast<std::int64_t>(unbounded_dim);
    if (ctx.is_constant(trips)) {
        auto m = ctx.constant_ints(trips, "input 0 (M)");
        if (m.size() == 1) max_iterations = std::clamp<std::int64_t>(m[0], 0, max_iterations);
    }
    if (ctx.is_constant(cond)) {
        auto c = ctx.constant_ints(cond, "input 1 (cond)");
        if (c.size() == 1 && c[0] == 0) max_iterations = 0;
    }
    // The body takes (iteration number, cond, carried values); Loop bodies rarely declare shapes.
    std::vector<shape> body_shapes{shape(dtype::int64), shape(dtype::bool_)};
    inputs_t args{trips, cond};
    for (std::size_t i = 2; i < in.size(); ++i) {
        if (ctx.is_none(in[i])) fail("input ", i, " (a loop-carried value) is absent");
        body_shapes.push_back(in[i]->get_shape());
        args.push_back(in[i]);
    }
    const std::size_t carried = args.size() - 2;
    inputs_t caps;
    std::vector<bool> wrapped;
    module* body = parse_loop_body(n, ctx, body_shapes, caps, wrapped);
    // Captured values ride along as carried values that the body returns unchanged, after its
    // own carried values and before the scan outputs.
    auto ret = body->get_return();
    inputs_t outs = ret->inputs();
    if (outs.size() < 1 + carried)
        fail("the body graph returns ", outs.size(), " values; expected cond, then ", carried, " carried values");
    auto params = body->parameters();
    outs.insert(outs.begin() + static_cast<std::ptrdiff_t>(1 + carried),
                params.end() - static_cast<std::ptrdiff_t>(caps.size()), params.end());
    body->remove_instruction(ret);
    body->add_return(outs);
    args.insert(args.end(), caps.begin(), caps.end());
    auto t = add_with_modules(n, ctx, "loop", value{{"max_iterations", max_iterations}}, args, {body});
    auto results = elements(ctx, t, 0, carried);
    for (std::size_t i = 0; i < carried; ++i)
        if (wrapped[2 + i]) results[i] = ctx.add("optional_get_element", value(), {results[i]});
    auto scans = elements(ctx, t, carried + caps.size(), outs.size() - 1 - carried - caps.size());
    results.insert(results.end(), scans.begin(), scans.end());
    return results;
}
KILN_ONNX_OP("", "Loop", 1, map_loop)

// x[..., i, ...] along `axis`: x without that dim.
instruction_ref index_axis(context& ctx, instruction_ref x, std::int64_t axis, std::int64_t i) {
    auto s = ctx.add(
        "slice", value{{"axes", to_value(ints{axis})}, {"starts", to_value(ints{i})}, {"ends", to_value(ints{i + 1})}},
        {x});
    return ctx.add("squeeze", value{{"axes", to_value(ints{axis})}}, {s});
}

// x's shape without dim `axis` (which may count from the end).
shape without_axis(const shape& x, std::int64_t axis, const std::string& what) {
    if (x.dynamic()) fail(what, " is dynamic (", to_string(x), "); Scan needs its length now");
    auto r = static_cast<std::int64_t>(x.ndim());
    if (axis < -r || axis >= r) fail("axis ", axis, " of ", what, " is out of range for ", r, " dims");
    auto lens = x.lens();
    lens.erase(lens.begin() + (axis < 0 ? axis + r : axis));
    return {x.type(), lens};
}

std::size_t scan_input_count(const node_info& n, std::size_t available) {
    n.attr("num_scan_inputs");  // required
    std::int64_t m = n.attr_int("num_scan_inputs", 0);
    if (m < 1 || static_cast<std::size_t>(m) > available)
        fail("num_scan_inputs=", m, "; expected 1 to ", available, " (the node's state and scan inputs)");
    return static_cast<std::size_t>(m);
}

// Scan from opset 9: inputs are the N initial states then the M scan inputs, without a batch dim.
inputs_t map_scan(const node_info& n, context& ctx, const inputs_t& in) {
    const std::size_t m = scan_input_count(n, in.size());
    const std::size_t states = in.size() - m;
    for (std::size_t i = 0; i < in.size(); ++i)
        if (ctx.is_none(in[i])) fail("input ", i, " is absent");
    ints axes = n.attr_ints("scan_input_axes", ints(m, 0));
    if (axes.size() != m) fail("scan_input_axes has ", axes.size(), " entries; expected ", m);
    std::vector<shape> body_shapes;
    for (std::size_t i = 0; i < in.size(); ++i)
        body_shapes.push_back(i < states
                                  ? in[i]->get_shape()
                                  : without_axis(in[i]->get_shape(), axes[i - states], cat("scan input ", i - states)));
    inputs_t caps;
    module* body = ctx.parse_subgraph(n.attr_graph("body"), n.name() + "_body", body_shapes, caps);
    inputs_t args = in;
    args.insert(args.end(), caps.begin(), caps.end());
    value attrs{{"num_states", states},
                {"num_scan_inputs", m},
                {"scan_input_axes", to_value(axes)},
                {"scan_input_directions", to_value(n.attr_ints("scan_input_directions"))},
                {"scan_output_axes", to_value(n.attr_ints("scan_output_axes"))},
                {"scan_output_directions", to_value(n.attr_ints("scan_output_directions"))}};
    return elements(ctx, add_with_modules(n, ctx, "scan", attrs, args, {body}), 0, n.output_count());
}
KILN_ONNX_OP("", "Scan", 9, map_scan)

// Scan in opset 8: every input and output has a batch dim first (scan inputs and outputs scan
// along dim 1), and input 0 gives per-batch sequence lengths. Each batch entry runs as its own
// scan over the shared body; the results are stacked again. Shorter sequences are refused.
inputs_t map_scan8(const node_info& n, context& ctx, const inputs_t& in) {
    if (in.empty()) fail("expected inputs (sequence_lens, states..., scan inputs...)");
    const inputs_t data(in.begin() + 1, in.end());
    const std::size_t m = scan_input_count(n, data.size());
    const std::size_t states = data.size() - m;
    std::vector<shape> body_shapes;
    for (std::size_t i = 0; i < data.size(); ++i) {
        if (ctx.is_none(data[i])) fail("input ", i + 1, " is absent");
        shape s = without_axis(data[i]->get_shape(), 0, cat("input ", i + 1));
        body_shapes.push_back(i < states ? s : without_axis(s, 0, cat("input ", i + 1)));
    }
    const std::size_t batch = data[0]->get_shape().lens()[0];
    const auto length = static_cast<std::int64_t>(data[states]->get_shape().lens().at(1));
    if (present(ctx, in, 0))
        for (auto len : ctx.constant_ints(in[0], "input 0 (sequence_lens)"))
            if (len != length)
                fail("sequence_lens has ", len, "; kiln supports only full-length sequences (", length, ")");
    inputs_t caps;
    module* body = ctx.parse_subgraph(n.attr_graph("body"), n.name() + "_body", body_shapes, caps);
    value attrs{
        {"num_states", states}, {"num_scan_inputs", m}, {"scan_input_directions", to_value(n.attr_ints("directions"))}};
    std::vector<inputs_t> per_output(n.output_count());
    for (std::size_t b = 0; b < batch; ++b) {
        inputs_t args;
        for (auto x : data) args.push_back(index_axis(ctx, x, 0, static_cast<std::int64_t>(b)));
        args.insert(args.end(), caps.begin(), caps.end());
        auto outs = elements(ctx, add_with_modules(n, ctx, "scan", attrs, args, {body}), 0, n.output_count());
        for (std::size_t k = 0; k < outs.size(); ++k)
            per_output[k].push_back(ctx.add("unsqueeze", value{{"axes", to_value(ints{0})}}, {outs[k]}));
    }
    inputs_t results;
    for (const auto& parts : per_output) results.push_back(ctx.add("concat", value{{"axis", 0}}, parts));
    return results;
}
KILN_ONNX_OP("", "Scan", 8, map_scan8)

}  // namespace
}  // namespace kiln::onnx_fe
