// ONNX reductions along axes: ReduceX, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax and CumSum.
// Axes given as inputs (ReduceSum from opset 13, the other ReduceX from 18, CumSum) must be
// constants: kiln's ops take them as attributes.
#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

// Axes and keepdims from attributes (before axes became an input). Empty axes reduce every dim.
op_mapping reduce_attr_axes(std::string op) {
    return [op](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
        return {ctx.add(op, value{{"axes", to_value(n.attr_ints("axes"))}, {"keepdims", n.attr_int("keepdims", 1) != 0}},
                        {in.at(0)})};
    };
}

// Axes from the optional input 1; absent or empty axes reduce every dim unless
// noop_with_empty_axes, which returns the input unchanged.
op_mapping reduce_input_axes(std::string op) {
    return [op](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
        std::vector<std::int64_t> axes;
        if (in.size() > 1 && !ctx.is_none(in[1])) axes = ctx.constant_ints(in[1], "input 1 (axes)");
        return {ctx.add(op, value{{"axes", to_value(axes)},
                                  {"keepdims", n.attr_int("keepdims", 1) != 0},
                                  {"noop_with_empty_axes", n.attr_int("noop_with_empty_axes", 0) != 0}},
                        {in.at(0)})};
    };
}

// ReduceSum took its axes as an input from opset 13, the others from opset 18.
struct reduce_kind {
    const char* onnx;
    const char* kiln;
    std::int64_t axes_input_since;
};
constexpr reduce_kind reduce_kinds[] = {
    {"ReduceSum", "reduce_sum", 13},          {"ReduceMean", "reduce_mean", 18},
    {"ReduceMax", "reduce_max", 18},          {"ReduceMin", "reduce_min", 18},
    {"ReduceProd", "reduce_prod", 18},        {"ReduceL1", "reduce_l1", 18},
    {"ReduceL2", "reduce_l2", 18},            {"ReduceLogSum", "reduce_log_sum", 18},
    {"ReduceLogSumExp", "reduce_log_sum_exp", 18}, {"ReduceSumSquare", "reduce_sum_square", 18},
};

const bool reduce_registered = [] {
    for (const auto& k : reduce_kinds) {
        register_onnx_op("", k.onnx, 1, reduce_attr_axes(k.kiln));
        register_onnx_op("", k.onnx, k.axes_input_since, reduce_input_axes(k.kiln));
    }
    return true;
}();

// select_last_index (opset 12) defaults to the first extreme element, as before it existed.
op_mapping arg_reduce(std::string op) {
    return [op](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
        return {ctx.add(op, value{{"axis", n.attr_int("axis", 0)},
                                  {"keepdims", n.attr_int("keepdims", 1) != 0},
                                  {"select_last_index", n.attr_int("select_last_index", 0) != 0}},
                        {in.at(0)})};
    };
}
KILN_ONNX_OP("", "ArgMax", 1, arg_reduce("argmax"))
KILN_ONNX_OP("", "ArgMin", 1, arg_reduce("argmin"))

// Applies a softmax-like op along one axis of x.
using along_axis = std::function<instruction_ref(context&, instruction_ref x, std::int64_t axis)>;

// Hardmax along one axis: 1 at the first largest element of each lane, 0 elsewhere; argmax
// picks the first on ties, one_hot puts the 1 back along the same axis.
instruction_ref hardmax(context& ctx, instruction_ref x, std::int64_t axis) {
    const shape& s = x->get_shape();
    if (s.dynamic()) fail("Hardmax needs static dims (its one-hot depth is the axis length); input 0 is ", to_string(s));
    auto a = static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(s.ndim()) : axis);
    if (a >= s.ndim()) fail("axis=", axis, " is out of range for ", s.ndim(), " dims");
    auto idx = ctx.add("argmax", value{{"axis", axis}, {"keepdims", false}}, {x});
    std::vector<double> off_on{0, 1};
    auto values = ctx.add_literal(literal(shape(s.type(), std::vector<std::size_t>{2}), off_on));
    return ctx.add("one_hot", value{{"depth", s.lens()[a]}, {"axis", axis}}, {idx, values});
}

// Opset 13 on: the op along one axis, by default the last.
op_mapping single_axis(along_axis f) {
    return [f](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
        return {f(ctx, in.at(0), n.attr_int("axis", -1))};
    };
}

// Before opset 13 the input is seen as 2-D, dims [0, axis) by dims [axis, n), and the op runs
// along the second (default axis 1). When the dims after `axis` are all 1 that is the op along
// `axis` itself; otherwise flatten, apply along dim 1 and reshape back.
op_mapping coerced_2d(along_axis f) {
    return [f](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
        instruction_ref x = in.at(0);
        const shape& s = x->get_shape();
        auto rank = static_cast<std::int64_t>(s.ndim());
        std::int64_t axis = n.attr_int("axis", 1);
        if (axis < -rank || axis >= rank) fail("axis=", axis, " is out of range for ", rank, " dims");
        if (axis < 0) axis += rank;
        auto dims = s.dims();
        bool trailing_ones = true;
        for (auto k = static_cast<std::size_t>(axis) + 1; k < dims.size(); ++k)
            trailing_ones = trailing_ones && dims[k].is_fixed() && dims[k].min == 1;
        if (trailing_ones) return {f(ctx, x, axis)};
        if (s.dynamic())
            fail("axis=", axis, " spans several dims of input 0 ", to_string(s),
                 "; kiln needs them static to flatten them (opset < 13 semantics)");
        std::vector<std::int64_t> lens(s.lens().begin(), s.lens().end());
        auto flat = ctx.add("flatten", value{{"axis", axis}}, {x});
        return {ctx.add("reshape", value{{"dims", to_value(lens)}}, {f(ctx, flat, 1)})};
    };
}

along_axis kiln_op(std::string op) {
    return [op](context& ctx, instruction_ref x, std::int64_t axis) { return ctx.add(op, value{{"axis", axis}}, {x}); };
}

KILN_ONNX_OP("", "Softmax", 1, coerced_2d(kiln_op("softmax")))
KILN_ONNX_OP("", "Softmax", 13, single_axis(kiln_op("softmax")))
KILN_ONNX_OP("", "LogSoftmax", 1, coerced_2d(kiln_op("logsoftmax")))
KILN_ONNX_OP("", "LogSoftmax", 13, single_axis(kiln_op("logsoftmax")))
KILN_ONNX_OP("", "Hardmax", 1, coerced_2d(hardmax))
KILN_ONNX_OP("", "Hardmax", 13, single_axis(hardmax))

// The axis is a scalar (or one-element) int32/int64 input.
KILN_ONNX_OP("", "CumSum", 11, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    auto axis = ctx.constant_ints(in.at(1), "input 1 (axis)");
    if (axis.size() != 1) fail("input 1 (axis) has ", axis.size(), " values; expected one");
    return {ctx.add("cumsum", value{{"axis", axis[0]},
                                    {"exclusive", n.attr_int("exclusive", 0) != 0},
                                    {"reverse", n.attr_int("reverse", 0) != 0}},
                    {in.at(0)})};
})

}  // namespace
}  // namespace kiln::onnx_fe
