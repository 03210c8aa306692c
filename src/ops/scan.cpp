// ONNX Scan (opset 9 on): runs a body submodule once per slice of the scan inputs along their
// scan axes, threads state values through the iterations, and stacks what each iteration
// returns into the scan outputs. Unlike `loop`, the iteration count is the scan inputs' length,
// so every result shape is static. The body is closed (it sees only its parameters): it takes
// the states, one slice of each scan input, then the extra inputs (outer values it reads), and
// returns the new states, then one slice of each scan output.
#include <algorithm>

#include "core/module.hpp"
#include "ops/common.hpp"
#include "ops/scan.hpp"

namespace kiln::ops {
namespace {

// Lens and strides of `s` without dim `axis`: the shape of one slice along that axis.
shape drop_axis(const shape& s, std::size_t axis) {
    auto lens = s.lens();
    auto strides = s.strides();
    lens.erase(lens.begin() + static_cast<std::ptrdiff_t>(axis));
    strides.erase(strides.begin() + static_cast<std::ptrdiff_t>(axis));
    return {s.type(), lens, strides};
}

// One list attribute per scan input or output: empty means `def` for each.
std::vector<std::int64_t> per_item(const std::vector<std::int64_t>& attr, std::size_t n, std::int64_t def,
                                   const char* what) {
    if (attr.empty()) return std::vector<std::int64_t>(n, def);
    if (attr.size() != n) fail(what, " has ", attr.size(), " entries; expected ", n);
    return attr;
}

std::vector<std::int64_t> directions(const std::vector<std::int64_t>& attr, std::size_t n, const char* what) {
    auto d = per_item(attr, n, 0, what);
    for (auto v : d)
        if (v != 0 && v != 1) fail(what, " has ", v, "; expected 0 (forward) or 1 (reverse)");
    return d;
}

// The interpreter widens int4/uint4 to 8 bits before an op computes; the body wants them packed.
argument as_type(const argument& a, dtype t) {
    if (a.get_shape().type() == t) return a;
    return from_int64s(shape(t, a.get_shape().lens()), to_int64s(a));
}

// Per-iteration slices stacked along `axis` of `out`; a reverse direction puts the last
// iteration's slice first. Elements go through int64 or double, which hold every dtype exactly.
template <class T>
std::vector<T> stack_values(const std::vector<argument>& parts, const shape& out, std::size_t axis, bool reverse,
                            std::vector<T> (*read)(const argument&)) {
    const auto& lens = out.lens();
    const std::size_t seq = lens[axis];
    std::size_t inner = 1;
    for (std::size_t d = axis + 1; d < lens.size(); ++d) inner *= lens[d];
    std::vector<T> r(out.elements());
    for (std::size_t t = 0; t < seq; ++t) {
        const std::size_t pos = reverse ? seq - 1 - t : t;
        auto v = read(parts[t]);
        for (std::size_t q = 0; q < v.size(); ++q) r[((q / inner) * seq + pos) * inner + q % inner] = v[q];
    }
    return r;
}

argument stack_along(const std::vector<argument>& parts, const shape& out, std::size_t axis, bool reverse) {
    if (is_float(out.type())) return from_doubles(out, stack_values<double>(parts, out, axis, reverse, to_doubles));
    return from_int64s(out, stack_values<std::int64_t>(parts, out, axis, reverse, to_int64s));
}

}  // namespace

scan::layout scan::split_inputs(std::span<const shape> in) const {
    if (num_states < 0) fail("num_states=", num_states, " is negative");
    if (num_scan_inputs < 1) fail("num_scan_inputs=", num_scan_inputs, "; expected at least 1");
    layout l{static_cast<std::size_t>(num_states), static_cast<std::size_t>(num_scan_inputs), 0, {}, 0};
    if (in.size() < l.states + l.scans)
        fail("has ", in.size(), " inputs; expected ", l.states, " states and ", l.scans, " scan inputs at least");
    l.extras = in.size() - l.states - l.scans;
    auto axes = per_item(scan_input_axes, l.scans, 0, "scan_input_axes");
    directions(scan_input_directions, l.scans, "scan_input_directions");
    for (std::size_t j = 0; j < l.scans; ++j) {
        const shape& s = in[l.states + j];
        if (s.ndim() == 0) fail("scan input ", j, " (input ", l.states + j, ") is a scalar; it needs a scan axis");
        l.in_axes.push_back(normalize_axis(axes[j], s.ndim(), "scan_input_axes"));
        std::size_t len = s.lens()[l.in_axes[j]];
        if (j == 0)
            l.length = len;
        else if (len != l.length)
            fail("scan input ", j, " has length ", len, " along its scan axis but scan input 0 has ", l.length);
    }
    return l;
}

std::vector<shape> scan::body_inputs(std::span<const shape> in, const layout& l) {
    std::vector<shape> r(in.begin(), in.end());
    for (std::size_t j = 0; j < l.scans; ++j) r[l.states + j] = drop_axis(in[l.states + j], l.in_axes[j]);
    return r;
}

void scan::check_body(const module& body, std::span<const shape> values) {
    auto params = body.parameters();
    if (params.size() != values.size())
        fail("body '", body.name(), "' takes ", params.size(), " parameters; expected ", values.size(),
             " (states, scan input slices, extra inputs)");
    for (std::size_t i = 0; i < values.size(); ++i)
        if (params[i]->get_shape().as_standard() != values[i].as_standard())
            fail("body '", body.name(), "' parameter ", i, " '", body.parameter_name(*params[i]), "' is ",
                 to_string(params[i]->get_shape()), " but receives ", to_string(values[i].as_standard()));
}

shape scan::compute_shape(std::span<const shape> in, std::span<module* const> mods) const {
    if (mods.size() != 1) fail("expects 1 module (the body), got ", mods.size());
    check_static(in);
    layout l = split_inputs(in);
    const module& body = *mods[0];
    check_body(body, body_inputs(in, l));
    auto outs = body.output_shapes();
    if (outs.size() < l.states)
        fail("body '", body.name(), "' returns ", outs.size(), " values; expected ", l.states, " states first");
    std::vector<shape> result;
    for (std::size_t i = 0; i < l.states; ++i) {
        if (outs[i].as_standard() != in[i].as_standard())
            fail("body output ", i, " (state ", i, ") is ", to_string(outs[i]), " but its initial value is ",
                 to_string(in[i]));
        result.push_back(in[i].as_standard());
    }
    const std::size_t k = outs.size() - l.states;
    auto axes = per_item(scan_output_axes, k, 0, "scan_output_axes");
    directions(scan_output_directions, k, "scan_output_directions");
    for (std::size_t s = 0; s < k; ++s) {
        const shape& o = outs[l.states + s];
        if (o.is_tuple() || o.dynamic())
            fail("body output ", l.states + s, " is ", to_string(o),
                 "; a scan output slice must be a static tensor");
        auto lens = o.lens();
        auto a = normalize_axis(axes[s], lens.size() + 1, "scan_output_axes");
        lens.insert(lens.begin() + static_cast<std::ptrdiff_t>(a), l.length);
        result.emplace_back(o.type(), lens);
    }
    return shape(std::move(result));
}

argument scan::compute(const shape& out, std::span<const argument> args, std::span<module* const> mods,
                 const module_runner& run) const {
    if (!run) fail("needs a module runner to call its body");
    std::vector<shape> in;
    for (const auto& a : args) in.push_back(a.get_shape());
    layout l = split_inputs(in);
    const module& body = *mods[0];
    auto params = body.parameters();
    auto in_dirs = directions(scan_input_directions, l.scans, "scan_input_directions");
    auto out_dirs =
        directions(scan_output_directions, out.sub_shapes().size() - l.states, "scan_output_directions");
    std::vector<argument> values;
    for (std::size_t i = 0; i < args.size(); ++i) values.push_back(as_type(args[i], params[i]->get_shape().type()));
    std::vector<std::vector<argument>> parts(out_dirs.size());
    for (std::size_t t = 0; t < l.length; ++t) {
        for (std::size_t j = 0; j < l.scans; ++j) {
            const argument& x = args[l.states + j];
            const std::size_t axis = l.in_axes[j];
            const std::size_t pos = in_dirs[j] != 0 ? l.length - 1 - t : t;
            argument slice = x.view(drop_axis(x.get_shape(), axis), pos * x.get_shape().strides()[axis]);
            values[l.states + j] = as_type(slice, params[l.states + j]->get_shape().type());
        }
        auto outs = run(body, values);
        std::copy_n(outs.begin(), l.states, values.begin());
        for (std::size_t s = 0; s < parts.size(); ++s) parts[s].push_back(outs[l.states + s]);
    }
    std::vector<argument> result;
    auto out_axes = per_item(scan_output_axes, parts.size(), 0, "scan_output_axes");
    for (std::size_t i = 0; i < l.states; ++i) result.push_back(values[i].copy());
    for (std::size_t s = 0; s < parts.size(); ++s) {
        const shape& o = out.sub_shapes()[l.states + s];
        auto a = normalize_axis(out_axes[s], o.ndim(), "scan_output_axes");
        result.push_back(stack_along(parts[s], o, a, out_dirs[s] != 0));
    }
    return argument(std::move(result));
}

std::vector<std::int64_t> scan::input_directions(std::size_t scans) const {
    return directions(scan_input_directions, scans, "scan_input_directions");
}
std::vector<std::int64_t> scan::output_directions(std::size_t outputs) const {
    return directions(scan_output_directions, outputs, "scan_output_directions");
}
std::vector<std::int64_t> scan::output_axes(std::size_t outputs) const {
    return per_item(scan_output_axes, outputs, 0, "scan_output_axes");
}
KILN_REGISTER_OP(scan)

}  // namespace kiln::ops
