// ONNX ops that rearrange elements, onto kiln's data-movement ops: Concat, Split, Tile, Pad,
// DepthToSpace, SpaceToDepth, Trilu, and ReverseSequence (composed of slice, reverse and concat).
// Inputs that decide the output shape (split sizes, repeats, pads) must be constants.
#include <set>

#include "core/error.hpp"
#include "core/eval.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;
using ints = std::vector<std::int64_t>;

bool present(context& ctx, const inputs_t& in, std::size_t i) { return i < in.size() && !ctx.is_none(in[i]); }

// The single value of a constant scalar or one-element input.
std::int64_t constant_scalar(context& ctx, instruction_ref i, const std::string& what) {
    auto v = ctx.constant_ints(i, what);
    if (v.size() != 1) fail(what, " has ", v.size(), " elements; expected exactly one");
    return v[0];
}

// x's dims must be known now (for checks and compositions that depend on them).
const shape& static_shape(instruction_ref x) {
    if (x->get_shape().dynamic()) fail("input 0 is dynamic (", to_string(x->get_shape()), "); its shape is needed now");
    return x->get_shape();
}

// Concat's axis: optional (default 1) in opset 1, required from 4.
KILN_ONNX_OP("", "Concat", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    if (n.opset() >= 4) n.attr("axis");
    return {ctx.add("concat", value{{"axis", n.attr_int("axis", 1)}}, in)};
})

// One output per piece of kiln's split tuple; a constant input folds into one literal per piece.
inputs_t split_pieces(context& ctx, instruction_ref x, const value& attrs, std::size_t count) {
    operation op = make_op("split", attrs);
    inputs_t out;
    if (ctx.is_constant(x)) {
        std::vector<argument> args{x->get_literal().get_argument()};
        argument pieces = compute_op(op, args);
        for (const auto& piece : pieces.sub_arguments()) out.push_back(ctx.add_literal(literal(piece)));
        return out;
    }
    auto t = ctx.add("split", attrs, {x});
    for (std::size_t i = 0; i < count; ++i)
        out.push_back(ctx.add("get_tuple_elem", value{{"index", static_cast<std::int64_t>(i)}}, {t}));
    return out;
}

// Split by `sizes`, or into equal pieces, one per node output. Before opset 18 equal pieces
// must divide the dim exactly; from 18 num_outputs gives ceil-sized pieces and a smaller last.
inputs_t split(const node_info& n, context& ctx, instruction_ref x, const ints& sizes) {
    std::int64_t axis = n.attr_int("axis", 0);
    std::size_t outs = n.output_count();
    if (!sizes.empty()) {
        if (sizes.size() != outs) fail("split has ", sizes.size(), " sizes but the node has ", outs, " outputs");
        return split_pieces(ctx, x, value{{"axis", axis}, {"sizes", to_value(sizes)}}, outs);
    }
    auto count = static_cast<std::int64_t>(outs);
    if (n.opset() >= 18) {
        if (!n.has_attr("num_outputs")) fail("neither the split input nor the num_outputs attribute is given");
        count = n.attr_int("num_outputs", 0);
        if (count != static_cast<std::int64_t>(outs))
            fail("num_outputs=", count, " but the node has ", outs, " outputs");
    } else {
        const shape& s = static_shape(x);
        auto r = static_cast<std::int64_t>(s.ndim());
        if (axis < -r || axis >= r) fail("axis=", axis, " is out of range for ", r, " dims");
        std::size_t dim = s.lens()[static_cast<std::size_t>(axis < 0 ? axis + r : axis)];
        if (outs == 0 || dim % outs != 0) fail("cannot split a dim of ", dim, " into ", outs, " equal pieces");
    }
    return split_pieces(ctx, x, value{{"axis", axis}, {"num_outputs", count}}, outs);
}
// Opset 1 takes the sizes from the split attribute or an optional second input.
KILN_ONNX_OP("", "Split", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    ints sizes = present(ctx, in, 1) ? ctx.constant_ints(in[1], "input 1 (split)") : n.attr_ints("split");
    return split(n, ctx, in.at(0), sizes);
})
KILN_ONNX_OP("", "Split", 2, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return split(n, ctx, in.at(0), n.attr_ints("split"));
})
KILN_ONNX_OP("", "Split", 13, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    ints sizes = present(ctx, in, 1) ? ctx.constant_ints(in[1], "input 1 (split)") : ints{};
    return split(n, ctx, in.at(0), sizes);
})

instruction_ref tile(context& ctx, instruction_ref x, const ints& repeats) {
    return ctx.add("tile", value{{"repeats", to_value(repeats)}}, {x});
}
// Opset 1 repeats one axis: inputs tiles and axis are scalars.
KILN_ONNX_OP("", "Tile", 1, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    const shape& s = static_shape(in.at(0));
    std::int64_t tiles = constant_scalar(ctx, in.at(1), "input 1 (tiles)");
    std::int64_t axis = constant_scalar(ctx, in.at(2), "input 2 (axis)");
    auto r = static_cast<std::int64_t>(s.ndim());
    if (axis < -r || axis >= r) fail("input 2 (axis) is ", axis, "; input 0 has ", r, " dims");
    ints repeats(s.ndim(), 1);
    repeats[static_cast<std::size_t>(axis < 0 ? axis + r : axis)] = tiles;
    return {tile(ctx, in[0], repeats)};
})
KILN_ONNX_OP("", "Tile", 6, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    return {tile(ctx, in.at(0), ctx.constant_ints(in.at(1), "input 1 (repeats)"))};
})

instruction_ref pad(const node_info& n, context& ctx, instruction_ref x, const ints& pads, double fill) {
    return ctx.add("pad", value{{"pads", to_value(pads)}, {"mode", n.attr_string("mode", "constant")}, {"value", fill}},
                   {x});
}
// Opset 1 calls the pads attribute "paddings".
KILN_ONNX_OP("", "Pad", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    const char* name = n.opset() < 2 ? "paddings" : "pads";
    n.attr(name);
    return {pad(n, ctx, in.at(0), n.attr_ints(name), n.attr_float("value", 0))};
})

// Opset 18's axes: pads holds begins then ends for those axes only; other dims get no padding.
ints pads_for_axes(const ints& pads, const ints& axes, std::size_t rank) {
    if (pads.size() != 2 * axes.size())
        fail("input 1 (pads) has ", pads.size(), " entries; expected 2 * ", axes.size(),
             " (one begin and end per axis)");
    ints full(2 * rank, 0);
    std::set<std::size_t> seen;
    auto r = static_cast<std::int64_t>(rank);
    for (std::size_t i = 0; i < axes.size(); ++i) {
        if (axes[i] < -r || axes[i] >= r) fail("input 3 (axes) has ", axes[i], "; input 0 has ", rank, " dims");
        auto a = static_cast<std::size_t>(axes[i] < 0 ? axes[i] + r : axes[i]);
        if (!seen.insert(a).second) fail("input 3 (axes) lists dim ", a, " twice");
        full[a] = pads[i];
        full[rank + a] = pads[axes.size() + i];
    }
    return full;
}
// From opset 11 pads and the optional constant_value (and axes, 18) are inputs.
KILN_ONNX_OP("", "Pad", 11, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    ints pads = ctx.constant_ints(in.at(1), "input 1 (pads)");
    if (present(ctx, in, 3))
        pads = pads_for_axes(pads, ctx.constant_ints(in[3], "input 3 (axes)"), static_shape(in[0]).ndim());
    double fill = 0;
    if (present(ctx, in, 2)) {
        auto v = ctx.constant_doubles(in[2], "input 2 (constant_value)");
        if (v.size() != 1) fail("input 2 (constant_value) has ", v.size(), " elements; expected one");
        fill = v[0];
    }
    return {pad(n, ctx, in[0], pads, fill)};
})

KILN_ONNX_OP("", "DepthToSpace", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    n.attr("blocksize");
    return {ctx.add("depth_to_space",
                    value{{"blocksize", n.attr_int("blocksize", 1)}, {"mode", n.attr_string("mode", "DCR")}},
                    {in.at(0)})};
})

// SpaceToDepth in CRD mode (opset 28): channel c * bs^2 + block instead of DCR's block * C + c;
// kiln's space_to_depth is DCR only, so CRD is composed: [N,C,H,W] -> [N,C,H/bs,bs,W/bs,bs] ->
// [N,C,bs,bs,H/bs,W/bs] -> [N,C*bs*bs,H/bs,W/bs].
instruction_ref space_to_depth_crd(context& ctx, instruction_ref x, std::int64_t bs) {
    const shape& s = static_shape(x);
    if (s.ndim() != 4) fail("input 0 has ", s.ndim(), " dims; expected [N, C, H, W]");
    if (bs < 1) fail("blocksize=", bs, "; expected at least 1");
    ints l(s.lens().begin(), s.lens().end());
    if (l[2] % bs != 0 || l[3] % bs != 0)
        fail("height and width (", l[2], ", ", l[3], ") are not multiples of blocksize=", bs);
    auto blocks = ctx.add("reshape", value{{"dims", to_value(ints{l[0], l[1], l[2] / bs, bs, l[3] / bs, bs})}}, {x});
    auto moved = ctx.add("transpose", value{{"permutation", to_value(ints{0, 1, 3, 5, 2, 4})}}, {blocks});
    return ctx.add("reshape", value{{"dims", to_value(ints{l[0], l[1] * bs * bs, l[2] / bs, l[3] / bs})}}, {moved});
}
KILN_ONNX_OP("", "SpaceToDepth", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    n.attr("blocksize");
    std::int64_t bs = n.attr_int("blocksize", 1);
    std::string mode = n.attr_string("mode", "DCR");
    if (mode == "CRD") return {space_to_depth_crd(ctx, in.at(0), bs)};
    if (mode != "DCR") fail("mode='", mode, "'; expected DCR or CRD");
    return {ctx.add("space_to_depth", value{{"blocksize", bs}}, {in.at(0)})};
})

// Trilu with k computed at run time (it does not change the output's shape): a literal of
// j - i compared with k masks the last two dims, and where() zeroes the rest.
instruction_ref trilu_runtime_k(context& ctx, instruction_ref x, instruction_ref k, bool upper) {
    const shape& s = static_shape(x);
    if (s.ndim() < 2) fail("input 0 has ", s.ndim(), " dims; expected at least 2");
    std::size_t rows = s.lens()[s.ndim() - 2];
    std::size_t cols = s.lens()[s.ndim() - 1];
    ints diag(rows * cols);
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j)
            diag[i * cols + j] = static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i);
    auto d = ctx.add_literal(literal(shape(k->get_shape().type(), std::vector<std::size_t>{rows, cols}), diag));
    auto keep = ctx.add(upper ? "greater_or_equal" : "less_or_equal", {d, k});
    auto zero = ctx.add_literal(literal(shape(s.type()), std::vector<double>{0}));
    return ctx.add("where", {keep, x, zero});
}

// Trilu keeps the upper (j - i >= k) or lower (j - i <= k) triangle; k defaults to 0.
KILN_ONNX_OP("", "Trilu", 14, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    bool upper = n.attr_int("upper", 1) != 0;
    if (present(ctx, in, 1) && !ctx.is_constant(in[1])) return {trilu_runtime_k(ctx, in.at(0), in[1], upper)};
    std::int64_t k = present(ctx, in, 1) ? constant_scalar(ctx, in[1], "input 1 (k)") : 0;
    return {ctx.add("trilu", value{{"upper", upper}, {"k", k}}, {in.at(0)})};
})

// One batch entry b of ReverseSequence: its first len steps reversed, the rest as they are.
instruction_ref reversed_entry(context& ctx, instruction_ref x, std::int64_t b, std::int64_t len, std::int64_t steps,
                               std::int64_t batch_axis, std::int64_t time_axis) {
    auto part = [&](std::int64_t t0, std::int64_t t1) {
        return ctx.add("slice",
                       value{{"axes", to_value(ints{batch_axis, time_axis})},
                             {"starts", to_value(ints{b, t0})},
                             {"ends", to_value(ints{b + 1, t1})}},
                       {x});
    };
    inputs_t parts;
    if (len > 0) parts.push_back(ctx.add("reverse", value{{"axes", to_value(ints{time_axis})}}, {part(0, len)}));
    if (len < steps) parts.push_back(part(len, steps));
    return parts.size() == 1 ? parts[0] : ctx.add("concat", value{{"axis", time_axis}}, parts);
}

// ReverseSequence: sequence_lens (a constant) says how many leading time steps of each batch
// entry to reverse; the batch and time axes are 0 and 1 in either order.
inputs_t map_reverse_sequence(const node_info& n, context& ctx, const inputs_t& in) {
    const shape& s = static_shape(in.at(0));
    std::int64_t batch_axis = n.attr_int("batch_axis", 1);
    std::int64_t time_axis = n.attr_int("time_axis", 0);
    if (s.ndim() < 2) fail("input 0 has ", s.ndim(), " dims; expected at least 2");
    if (batch_axis + time_axis != 1 || batch_axis * time_axis != 0)
        fail("batch_axis=", batch_axis, " and time_axis=", time_axis, "; expected 0 and 1 in either order");
    auto lens = ctx.constant_ints(in.at(1), "input 1 (sequence_lens)");
    auto batch = static_cast<std::int64_t>(s.lens()[static_cast<std::size_t>(batch_axis)]);
    auto steps = static_cast<std::int64_t>(s.lens()[static_cast<std::size_t>(time_axis)]);
    if (static_cast<std::int64_t>(lens.size()) != batch)
        fail("input 1 (sequence_lens) has ", lens.size(), " entries; the batch has ", batch);
    if (batch == 0 || steps == 0) return {ctx.add("identity", {in[0]})};  // nothing to reverse
    inputs_t entries;
    for (std::int64_t b = 0; b < batch; ++b) {
        if (lens[b] < 0 || lens[b] > steps)
            fail("sequence_lens[", b, "]=", lens[b], " is outside [0, ", steps, "] (the time axis)");
        entries.push_back(reversed_entry(ctx, in[0], b, lens[b], steps, batch_axis, time_axis));
    }
    if (entries.size() == 1) return entries;
    return {ctx.add("concat", value{{"axis", batch_axis}}, entries)};
}
KILN_ONNX_OP("", "ReverseSequence", 10, map_reverse_sequence)

}  // namespace
}  // namespace kiln::onnx_fe
