#include "core/eval.hpp"

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "core/cancel.hpp"
#include "core/container.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"

namespace kiln {

std::string describe(const module& m, const instruction& ins) {
    std::size_t n = 0;
    std::string name;
    for (const auto& i : m) {
        if (&i == &ins) {
            name = i.is_param() ? m.parameter_name(i) : "@" + std::to_string(n);
            break;
        }
        if (!i.is_param()) ++n;
    }
    // An op with long attributes (a deferred ONNX node carries its serialized node) is named
    // without them, so that the message stays readable; the source name says which node it is.
    std::string op = to_string(ins.get_operator());
    if (op.size() > 200) op = std::string(ins.get_operator().name()) + "[...]";
    std::string s = cat("module ", m.name(), ": ", name, " = ", op);
    if (!ins.source_name().empty()) s += " (node '" + ins.source_name() + "')";
    return s;
}

namespace {

// Packed tensors are widened to a byte type for op computes (int4 and int2 to int8, the unsigned
// ones to uint8, fp4e2m1 to float32, which holds its values exactly) and packed again afterwards.
dtype widened(dtype t) {
    switch (t) {
    case dtype::int4: case dtype::int2: return dtype::int8;
    case dtype::uint4: case dtype::uint2: return dtype::uint8;
    case dtype::fp4e2m1: return dtype::float32;
    default: return t;
    }
}

argument widen(const argument& a) {
    if (!is_packed(a.get_shape().type())) return a;
    shape s(widened(a.get_shape().type()), a.get_shape().lens());
    return from_doubles(s, to_doubles(a));
}

argument narrow(const argument& a, dtype t) {
    if (!is_packed(t) || is_packed(a.get_shape().type())) return a;
    return from_doubles(shape(t, a.get_shape().lens()), to_doubles(a));
}

}  // namespace

argument bind_input(const module& m, const instruction& p, const argument& a) {
    const std::string name = m.parameter_name(p);
    const shape& want = p.get_shape();
    const shape& got = a.get_shape();
    if (want.is_sequence() || want.is_optional()) {
        check_value(want, a, cat("input '", name, "'"));
        return a;
    }
    if (got.type() != want.type())
        fail("input '", name, "': expected ", dtype_name(want.type()), ", got ", dtype_name(got.type()));
    if (want.dynamic()) {
        try {
            want.instantiate(got.lens());
        } catch (const error& e) {
            fail("input '", name, "': ", e.what());
        }
        return a;
    }
    if (got.lens() != want.lens())
        fail("input '", name, "': expected lens ", lens_to_string(want.lens()), ", got ", lens_to_string(got.lens()));
    return a;
}

namespace {

struct interpreter {
    const module& m;
    std::unordered_map<const instruction*, argument> results;
    std::unordered_map<const instruction*, std::size_t> uses_left;
    const instruction_observer* observe = nullptr;

    argument run_one(const instruction& ins) {
        std::vector<argument> args;
        for (auto in : ins.inputs()) args.push_back(results.at(&*in));
        return compute_op(ins.get_operator(), args, ins.module_inputs());
    }

    void release_inputs(const instruction& ins) {
        std::vector<instruction_ref> unique(ins.inputs());
        std::sort(unique.begin(), unique.end(), [](auto a, auto b) { return &*a < &*b; });
        unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
        for (auto in : unique)
            if (--uses_left[&*in] == 0 && !in->is_param() && !in->is_literal()) results.erase(&*in);
    }

    std::vector<argument> run(std::span<const argument> inputs) {
        auto params = m.parameters();
        if (inputs.size() != params.size())
            fail("module ", m.name(), ": ", params.size(), " inputs expected, ", inputs.size(), " given");
        for (std::size_t i = 0; i < params.size(); ++i) results[&*params[i]] = bind_input(m, *params[i], inputs[i]);
        if (observe)
            for (auto p : params) (*observe)(*p, results.at(&*p), 0.0);
        for (const auto& ins : m) uses_left[&ins] = ins.outputs().size();
        const instruction* last = nullptr;
        for (const auto& ins : m) {
            last = &ins;
            if (ins.is_param()) continue;
            check_cancelled([&] { return describe(m, ins); });
            if (ins.is_literal()) {
                results[&ins] = ins.get_literal().get_argument();
                if (observe) (*observe)(ins, results[&ins], 0.0);
                continue;
            }
            if (ins.is_return()) {
                std::vector<argument> outs;
                for (auto in : ins.inputs()) outs.push_back(results.at(&*in));
                return outs;
            }
            auto start = std::chrono::steady_clock::now();
            try {
                results[&ins] = run_one(ins);
            } catch (const error& e) {
                fail(describe(m, ins), ": ", e.what());
            } catch (const cancelled& e) {   // in a body it runs: the path down to where it stopped
                throw cancelled(cat(describe(m, ins), ": ", e.what()));
            }
            if (observe)
                (*observe)(ins, results[&ins],
                           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
            release_inputs(ins);
        }
        if (!last) return {};
        return {results.at(last)};
    }
};

}  // namespace

argument compute_op(const operation& op, const shape& out, std::span<const argument> args,
                    std::span<module* const> mods, const module_runner& run, std::span<const planned_buffer> into) {
    std::vector<argument> wide;
    wide.reserve(args.size());
    for (const auto& a : args) wide.push_back(widen(a));
    shape out_wide = out.is_tensor() ? out.with_type(widened(out.type())) : out;
    bool packed = out_wide != out;
    argument r;
    {
        result_buffer_scope scope(packed ? std::span<const planned_buffer>() : into);
        r = op.compute(out_wide, wide, mods, run);
    }
    if (!out.dynamic() && !out.is_tuple() && r.get_shape().lens() != out.lens())
        fail("computed lens ", lens_to_string(r.get_shape().lens()), " but the shape says ", to_string(out));
    if (!packed) return r;
    result_buffer_scope scope(into);
    return narrow(r, out.type());
}

argument compute_op(const operation& op, std::span<const argument> args, std::span<module* const> mods) {
    std::vector<shape> shapes;
    for (const auto& a : args) shapes.push_back(a.get_shape());
    // The output shape is recomputed from the actual input shapes, which binds dynamic dims.
    shape out = op.compute_shape(shapes, mods);
    // Before the op allocates (its output, or scratch of that size): a size bomb (Expand, Tile,
    // Range, Resize to huge sizes) is an error naming the size, which callers prefix with the node.
    if (!out.is_tuple()) check_tensor_bytes(out);
    module_runner run = [](const module& sub, std::span<const argument> in) { return evaluate(sub, in); };
    return compute_op(op, out, args, mods, run, {});
}

std::vector<argument> evaluate(const module& m, std::span<const argument> inputs) {
    interpreter it{m, {}, {}, nullptr};
    return it.run(inputs);
}

std::vector<argument> order_inputs(const module& m, const param_map& inputs) {
    std::vector<argument> ordered;
    std::vector<std::string> missing;
    for (const auto& name : m.parameter_names()) {
        auto it = inputs.find(name);
        if (it == inputs.end()) missing.push_back(name);
        else ordered.push_back(it->second);
    }
    if (!missing.empty()) {
        std::string list;
        for (const auto& n : missing) list += (list.empty() ? "'" : ", '") + n + "'";
        fail("missing input", missing.size() > 1 ? "s " : " ", list);
    }
    for (const auto& [name, arg] : inputs)
        if (m.get_parameter(name) == m.end()) fail("unknown input '", name, "'");
    return ordered;
}

std::vector<argument> evaluate(const module& m, const param_map& inputs) {
    auto ordered = order_inputs(m, inputs);
    return evaluate(m, std::span<const argument>(ordered));
}

std::vector<argument> evaluate(const program& p, const param_map& inputs) { return evaluate(p.main(), inputs); }

std::vector<argument> evaluate(const program& p, const param_map& inputs, const instruction_observer& observe) {
    auto ordered = order_inputs(p.main(), inputs);
    interpreter it{p.main(), {}, {}, &observe};
    return it.run(ordered);
}

}  // namespace kiln
