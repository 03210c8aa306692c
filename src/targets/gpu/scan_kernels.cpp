// Ops that walk one axis in order: argmax/argmin (the first, or last, extreme element; NaN counts
// as the extreme) and cumsum/cumprod (running sums and products, exclusive and reverse). One
// thread per lane walks its lane sequentially, so ties, NaN and rounding follow ref's order
// exactly; lanes run in parallel. Floats accumulate in double as ref does; integers wrap in 64 bits.
#include "core/error.hpp"
#include "ops/arg_reduce.hpp"
#include "ops/cumulative.hpp"
#include "targets/gpu/body_kernel.hpp"
#include "targets/gpu/lane_util.hpp"

namespace kiln::gpu {
namespace {

std::size_t axis_of(std::int64_t a, std::size_t ndim) {
    return static_cast<std::size_t>(a < 0 ? a + static_cast<std::int64_t>(ndim) : a);
}

std::vector<std::size_t> all_dims(const shape& s) {
    std::vector<std::size_t> r(s.ndim());
    for (std::size_t d = 0; d < r.size(); ++d) r[d] = d;
    return r;
}

// The frame of a scan kernel: `body` runs per lane with `base` (the lane's input offset) and
// `ybase` (its output offset) in scope.
void add_scan_kernel(lowering_context& ctx, const instruction& ins, const std::string& entry, std::size_t axis,
                     const std::string& yk_layout, const std::string& body) {
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& y = ins.get_shape();
    lane_split s = split(x.ndim(), {axis});
    std::size_t lanes = product(x, s.kept);
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n",
                           "extern \"C\" __global__ void __launch_bounds__(256) ", entry, "(", device_type(y.type()),
                           "* __restrict__ y, const ", device_type(x.type()), "* __restrict__ x) {\n",
                           "    constexpr auto K = ", layout_of(x, s.kept), ";\n",
                           "    constexpr auto Y = ", yk_layout, ";\n",
                           "    constexpr kiln::index_t N = ", x.lens()[axis], "ull;\n",
                           "    constexpr kiln::i64 S = ", x.strides()[axis], "ll;\n",
                           "    for (kiln::index_t lane = kiln::global_thread(); lane < ", lanes, "ull; lane += kiln::grid_threads()) {\n",
                           "        const kiln::i64 base = K.offset(lane), ybase = Y.offset(lane);\n", body, "    }\n}\n");
    ctx.add_kernel(ins, {entry, code, ctx.where(ins)}, elementwise_launch(lanes),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0])});
}

template <class Op>
void lower_arg_reduce(lowering_context& ctx, const instruction& ins, const char* better) {
    const auto& op = ins.get_operator().get<Op>();
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& y = ins.get_shape();
    std::size_t axis = axis_of(op.axis, x.ndim());
    // With keepdims the output keeps the axis (length 1); without, its dims are the kept ones.
    std::string yk = y.ndim() == x.ndim() ? layout_of(y, split(y.ndim(), {axis}).kept) : layout_of(y, all_dims(y));
    std::string ct = compute_type(x.type());
    std::string sel = op.select_last_index ? "true" : "false";
    std::string body = cat("        ", ct, " bv = kiln::load(x[base]);\n",
                           "        kiln::i64 best = 0;\n",
                           "        for (kiln::index_t i = 1; i < N; ++i) {\n",
                           "            const ", ct, " v = kiln::load(x[base + (kiln::i64)i * S]);\n",
                           "            const bool replaces = bv != bv ? (", sel, " && v != v) : v != v ? true : v == bv ? ", sel,
                           " : v ", better, " bv;\n",
                           "            if (replaces) { best = (kiln::i64)i; bv = v; }\n",
                           "        }\n",
                           "        y[ybase] = best;\n");
    add_scan_kernel(ctx, ins, "kiln_arg_reduce", axis, yk, body);
}

template <class Op>
void lower_cumulative(lowering_context& ctx, const instruction& ins, const char* combine) {
    const auto& op = ins.get_operator().get<Op>();
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& y = ins.get_shape();
    std::size_t axis = axis_of(op.axis, x.ndim());
    std::string acc = is_float(x.type()) ? "double" : "kiln::u64";   // ref: double, or wrapping 64-bit integers
    std::string step = cat("acc = acc ", combine, " v;");
    std::string body = cat("        ", acc, " acc = ", Op::identity, ";\n",
                           "        for (kiln::index_t j = 0; j < N; ++j) {\n",
                           "            const kiln::i64 i = ", op.reverse ? "(kiln::i64)(N - 1 - j)" : "(kiln::i64)j", ";\n",
                           "            const ", acc, " v = (", acc, ")kiln::load(x[base + i * S]);\n",
                           op.exclusive ? "" : cat("            ", step, "\n"),
                           "            y[ybase + i * ", y.strides()[axis], "ll] = kiln::storer<", device_type(y.type()), ">::from(",
                           is_float(x.type()) ? "acc" : cat("(", compute_type(x.type()), ")acc"), ");\n",
                           op.exclusive ? cat("            ", step, "\n") : "",
                           "        }\n");
    add_scan_kernel(ctx, ins, "kiln_cumulative", axis, layout_of(y, split(y.ndim(), {axis}).kept), body);
}

bool static_input(const instruction& ins) {
    return ins.inputs().size() == 1 && !ins.inputs()[0]->get_shape().dynamic() && ins.get_shape().standard();
}

const gpu_lowering_registrar arg_reduce_lowering{{
    "argmax/argmin (generated kernel, one thread per lane)",
    [](const instruction& ins) {
        const auto& op = ins.get_operator();
        return (op.get_if<ops::argmax>() || op.get_if<ops::argmin>()) && static_input(ins);
    },
    [](lowering_context& ctx, const instruction& ins) {
        if (ins.get_operator().get_if<ops::argmax>()) lower_arg_reduce<ops::argmax>(ctx, ins, ">");
        else lower_arg_reduce<ops::argmin>(ctx, ins, "<");
    }}};

const gpu_lowering_registrar cumulative_lowering{{
    "cumsum/cumprod (generated kernel, one thread per lane)",
    [](const instruction& ins) {
        const auto& op = ins.get_operator();
        return (op.get_if<ops::cumsum>() || op.get_if<ops::cumprod>()) && static_input(ins);
    },
    [](lowering_context& ctx, const instruction& ins) {
        if (ins.get_operator().get_if<ops::cumsum>()) lower_cumulative<ops::cumsum>(ctx, ins, "+");
        else lower_cumulative<ops::cumprod>(ctx, ins, "*");
    }}};

}  // namespace
}  // namespace kiln::gpu
