// compress and range on the GPU (dynamic_runner.hpp): ops whose output length depends on their
// data. The host reads what fixes the length (one synchronisation), then the device writes it:
//  - compress: one thread lists the indices where the condition is true (and their count); the
//    count is read back, then the kept slices are gathered along the axis by gather's lowering,
//    over those indices.
//  - range: start, limit and delta are read back (one synchronisation each) to size the output as
//    ref does, then a kernel writes start + i * delta in ref's arithmetic (double for floats, each
//    operation rounded, never fused; wrapping 64-bit integers), converted to the element type.
#include "core/error.hpp"
#include "ops/compress.hpp"
#include "ops/generate.hpp"
#include "targets/gpu/dynamic_runner.hpp"
#include "targets/gpu/elementwise.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/lane_util.hpp"

namespace kiln::gpu {
namespace {

std::string node_of(const instruction& ins) {
    return ins.source_name().empty() ? std::string(ins.name()) : cat(ins.name(), " (node '", ins.source_name(), "')");
}

argument run_compress(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    const auto& op = ins.get_operator().get<ops::compress>();
    const shape& c = args[1].get_shape();
    std::string where = node_of(ins);
    std::size_t n = c.elements();
    argument kept = r.allocate(shape(dtype::int64, std::vector<std::size_t>{std::max<std::size_t>(n, 1)}));
    argument count = r.allocate(shape(dtype::int64, std::vector<std::size_t>{1}));
    void* kp = kept.data();
    void* np = count.data();
    void* cp = args[1].data();
    void* a[] = {&kp, &np, &cp};
    launch_kernel(r.kernel(compress_list_kernel(c, where)), 1, 1, a, r.stream(), where);
    auto k = static_cast<std::size_t>(r.read_scalar(count, cat("reading the count of ", where)));
    std::vector<argument> in{args[0], kept.view(shape(dtype::int64, std::vector<std::size_t>{k}))};
    return r.launch(ins, make_op("gather", value{{"axis", op.axis}}), in);
}

double read_double(dynamic_runner& r, const argument& a, const std::string& what) {
    return to_doubles(r.to_host(a, what)).at(0);
}

argument run_range(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    dtype t = args[0].get_shape().type();
    std::string where = node_of(ins);
    bool fp = is_float(t);
    std::size_t n = 0;
    double ds = 0, dd = 0;
    long long is = 0, id = 0;
    if (fp) {
        ds = read_double(r, args[0], cat("reading the start of ", where));
        double limit = read_double(r, args[1], cat("reading the limit of ", where));
        dd = read_double(r, args[2], cat("reading the delta of ", where));
        n = ops::range::length(ds, limit, dd);
    } else {
        is = r.read_scalar(args[0], cat("reading the start of ", where));
        std::int64_t limit = r.read_scalar(args[1], cat("reading the limit of ", where));
        id = r.read_scalar(args[2], cat("reading the delta of ", where));
        n = ops::range::length(static_cast<std::int64_t>(is), limit, static_cast<std::int64_t>(id));
    }
    argument y = r.allocate(shape(t, std::vector<std::size_t>{n}));
    if (n == 0) return y;
    void* yp = y.data();
    unsigned long long count = n;
    launch_dims d = elementwise_launch(n);
    kernel_source src = range_kernel(t, where);
    if (fp) {
        void* a[] = {&yp, &ds, &dd, &count};
        launch_kernel(r.kernel(src), d.grid, d.block, a, r.stream(), where);
    } else {
        void* a[] = {&yp, &is, &id, &count};
        launch_kernel(r.kernel(src), d.grid, d.block, a, r.stream(), where);
    }
    return y;
}

const gpu_dynamic_op_registrar compress_runs{{
    "compress (kept indices listed, their count read back, then a gather)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::compress>() != nullptr; },
    run_compress}};

// shape_of over a value whose shape is known only when it runs: its lens, which the runner has on
// the host (no data is read), copied to the device.
argument run_shape_of(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    const auto& op = ins.get_operator().get<ops::shape_of>();
    std::vector<shape> in{args[0].get_shape()};
    return r.upload(op.compute(op.compute_shape(in), args), cat("writing the lens of ", ins.name(), " (node '", ins.source_name(), "')"));
}

const gpu_dynamic_op_registrar shape_of_runs{{
    "shape_of (the lens the runner knows, copied to the device)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::shape_of>() != nullptr; },
    run_shape_of}};

const gpu_dynamic_op_registrar range_runs{{
    "range (start, limit and delta read back, then a kernel)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::range>() != nullptr; },
    run_range}};

}  // namespace

kernel_source compress_list_kernel(const shape& cond, const std::string& where) {
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n",
                           "extern \"C\" __global__ void kiln_compress_list(kiln::i64* __restrict__ kept, ",
                           "kiln::i64* __restrict__ count, const bool* __restrict__ cond) {\n",
                           "    kiln::i64 k = 0;\n",
                           "    for (kiln::i64 i = 0; i < ", cond.elements(), "ll; ++i)\n",
                           "        if (cond[i * ", cond.elements() > 0 ? cond.strides()[0] : 0, "ll]) kept[k++] = i;\n",
                           "    *count = k;\n}\n");
    return {"kiln_compress_list", code, where};
}

kernel_source range_kernel(dtype t, const std::string& where) {
    bool fp = is_float(t);
    std::string v = fp ? "double" : "long long";
    std::string value = fp ? "__dadd_rn(start, __dmul_rn((double)i, delta))"
                           : "(long long)((unsigned long long)start + (unsigned long long)i * (unsigned long long)delta)";
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n",
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_range(", device_type(t),
                           "* __restrict__ y, ", v, " start, ", v, " delta, unsigned long long n) {\n",
                           "    for (kiln::index_t i = kiln::global_thread(); i < n; i += kiln::grid_threads())\n",
                           "        y[i] = kiln::storer<", device_type(t), ">::from(", value, ");\n}\n");
    return {"kiln_range", code, where};
}

}  // namespace kiln::gpu
