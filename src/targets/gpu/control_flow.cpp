// If, Loop and Scan on the GPU (dynamic_runner.hpp): their bodies run through the runner on device
// values; the host reads only what decides what runs next, each read one synchronisation of the
// stream: an If's condition, a Loop's trip count and condition before it starts, and the
// condition each iteration returns (a Scan's length is static: it reads nothing). Results are
// made standard as ref makes them; scan outputs are stacked on the device (one device-to-device
// copy per iteration).
#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/reflect.hpp"
#include "ops/control.hpp"
#include "ops/scan.hpp"
#include "targets/gpu/dynamic_runner.hpp"
#include "targets/gpu/gpu_error.hpp"

namespace kiln::gpu {
namespace {

std::string node_of(const instruction& ins) {
    return ins.source_name().empty() ? std::string(ins.name()) : cat(ins.name(), " (node '", ins.source_name(), "')");
}

argument run_if(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    bool cond = r.read_scalar(args[0], cat("reading the condition of ", node_of(ins))) != 0;
    const module& branch = *ins.module_inputs()[cond ? 0 : 1];
    auto results = r.run(branch, args.subspan(1));
    for (auto& v : results) v = r.standard(ins, v);
    return argument(std::move(results));
}

// The parts (one per iteration, equal lens) one after another along a new first dim; no
// iteration: the inner dims' minimum lens, as ref.
argument stack(dynamic_runner& r, const instruction& ins, const std::vector<argument>& parts, const shape& stacked,
               std::size_t output) {
    if (stacked.type() == dtype::string)
        fail("gpu: ", node_of(ins), ": scan output ", output, " is a string tensor, which the gpu target does not stack "
             "(strings have no device form)");
    std::vector<std::size_t> lens = ops::stacked_lens(parts, stacked, output);
    argument out = r.allocate(shape(stacked.type(), lens));
    std::size_t at = 0;
    for (const auto& p : parts) {
        argument s = r.standard(ins, p);
        std::size_t bytes = s.get_shape().bytes();
        KILN_GPU_CHECK(cudaMemcpyAsync(out.data() + at, s.data(), bytes, cudaMemcpyDeviceToDevice, r.stream()),
                       cat("stacking scan output ", output, " of ", node_of(ins)));
        at += bytes;
    }
    return out;
}

argument run_loop(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    const auto& op = ins.get_operator().get<ops::loop>();
    const module& body = *ins.module_inputs()[0];
    auto params = body.parameters();
    const std::int64_t trips = r.read_scalar(args[0], cat("reading the trip count of ", node_of(ins)));
    bool cond = r.read_scalar(args[1], cat("reading the condition of ", node_of(ins))) != 0;
    const std::size_t n = args.size() - 2;
    const std::size_t k = ins.get_shape().sub_shapes().size() - n;
    std::vector<argument> carried(args.begin() + 2, args.end());
    std::vector<std::vector<argument>> scans(k);
    for (std::int64_t i = 0; i < trips && cond; ++i) {
        if (i == op.max_iterations)
            fail("the loop runs past max_iterations=", op.max_iterations, "; its trip count and cond allow more");
        std::vector<argument> in{r.scalar(params[0]->get_shape(), i), r.scalar(params[1]->get_shape(), 1)};
        in.insert(in.end(), carried.begin(), carried.end());
        std::vector<argument> outs;
        try {   // the body's instructions check for a cancel; this names the iteration it stopped in
            outs = r.run(body, in);
        } catch (const cancelled& e) {
            throw cancelled(cat("iteration ", i, ": ", e.what()));
        }
        cond = r.read_scalar(outs[0], cat("reading the condition iteration ", i, " of ", node_of(ins), " returned")) != 0;
        std::copy(outs.begin() + 1, outs.begin() + 1 + static_cast<std::ptrdiff_t>(n), carried.begin());
        for (std::size_t s = 0; s < k; ++s) scans[s].push_back(outs[1 + n + s]);
    }
    std::vector<argument> result;
    for (const auto& c : carried) result.push_back(r.standard(ins, c));
    for (std::size_t s = 0; s < k; ++s) result.push_back(stack(r, ins, scans[s], ins.get_shape().sub_shapes()[n + s], s));
    return argument(std::move(result));
}

// Lens and strides of `s` without dim `axis`: one slice along it.
shape drop_axis(const shape& s, std::size_t axis) {
    auto lens = s.lens();
    auto strides = s.strides();
    lens.erase(lens.begin() + static_cast<std::ptrdiff_t>(axis));
    strides.erase(strides.begin() + static_cast<std::ptrdiff_t>(axis));
    return {s.type(), lens, strides};
}

// A scan output: the iterations' slices one after another along a new first dim (the last
// iteration's first when reversed), then that dim moved to `axis` by a transpose made standard.
argument stack_scan(dynamic_runner& r, const instruction& ins, const std::vector<argument>& parts, const shape& out,
                    std::size_t axis, bool reverse) {
    if (out.type() == dtype::string)
        fail("gpu: ", node_of(ins), ": a scan output is a string tensor, which the gpu target does not stack "
             "(strings have no device form)");
    std::vector<std::size_t> lens = out.lens();
    lens.erase(lens.begin() + static_cast<std::ptrdiff_t>(axis));
    lens.insert(lens.begin(), parts.size());
    argument stacked = r.allocate(shape(out.type(), lens));
    for (std::size_t t = 0; t < parts.size(); ++t) {
        argument s = r.standard(ins, parts[t]);
        std::size_t bytes = s.get_shape().bytes();
        std::size_t pos = reverse ? parts.size() - 1 - t : t;
        KILN_GPU_CHECK(cudaMemcpyAsync(stacked.data() + pos * bytes, s.data(), bytes, cudaMemcpyDeviceToDevice, r.stream()),
                       cat("stacking a scan output of ", node_of(ins)));
    }
    if (axis == 0) return stacked;
    std::vector<std::int64_t> perm;
    for (std::size_t d = 1; d <= axis; ++d) perm.push_back(static_cast<std::int64_t>(d));
    perm.push_back(0);
    for (std::size_t d = axis + 1; d < lens.size(); ++d) perm.push_back(static_cast<std::int64_t>(d));
    std::vector<argument> in{stacked};
    return r.standard(ins, r.view(make_op("transpose", value{{"permutation", to_value(perm)}}), in));
}

// Scan's length is static, so it reads nothing back: each iteration's scan-input slices are views,
// the body runs on the device and the states stay there.
argument run_scan(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    const auto& op = ins.get_operator().get<ops::scan>();
    std::vector<shape> in;
    for (const auto& a : args) in.push_back(a.get_shape());
    auto l = op.split_inputs(in);
    const module& body = *ins.module_inputs()[0];
    const shape& out = ins.get_shape();
    const std::size_t k = out.sub_shapes().size() - l.states;
    auto in_dirs = op.input_directions(l.scans);
    auto out_dirs = op.output_directions(k);
    auto out_axes = op.output_axes(k);
    std::vector<argument> values(args.begin(), args.end());
    std::vector<std::vector<argument>> parts(k);
    for (std::size_t t = 0; t < l.length; ++t) {
        for (std::size_t j = 0; j < l.scans; ++j) {
            const argument& x = args[l.states + j];
            const std::size_t axis = l.in_axes[j];
            const std::size_t pos = in_dirs[j] != 0 ? l.length - 1 - t : t;
            values[l.states + j] = x.view(drop_axis(x.get_shape(), axis), pos * x.get_shape().strides()[axis]);
        }
        auto outs = r.run(body, values);
        std::copy_n(outs.begin(), l.states, values.begin());
        for (std::size_t s = 0; s < k; ++s) parts[s].push_back(outs[l.states + s]);
    }
    std::vector<argument> result;
    for (std::size_t i = 0; i < l.states; ++i) result.push_back(r.standard(ins, values[i]));
    for (std::size_t s = 0; s < k; ++s) {
        const shape& o = out.sub_shapes()[l.states + s];
        std::size_t a = ops::normalize_axis(out_axes[s], o.ndim(), "scan_output_axes");
        result.push_back(stack_scan(r, ins, parts[s], o, a, out_dirs[s] != 0));
    }
    return argument(std::move(result));
}

const gpu_dynamic_op_registrar if_runs{{
    "if (the condition read back, then one branch run on the device)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::if_op>() != nullptr; },
    run_if}};

const gpu_dynamic_op_registrar loop_runs{{
    "loop (trip count and conditions read back, the body run on the device)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::loop>() != nullptr; },
    run_loop}};

const gpu_dynamic_op_registrar scan_runs{{
    "scan (the body run on the device per slice; nothing read back)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::scan>() != nullptr; },
    run_scan}};

}  // namespace
}  // namespace kiln::gpu
