// ONNX pooling onto kiln's pooling op: MaxPool, AveragePool, LpPool and their Global forms; and
// LRN onto lrn.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "frontends/onnx/nn_common.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

// The pooling attributes of `mode` with the node's kernel, strides, dilations, pads (auto_pad
// applied) and ceil_mode; `extra` adds mode-specific attributes. `w` receives the window.
value pool_attrs(const node_info& n, instruction_ref x, const std::string& mode, value extra, window_attrs& w) {
    std::size_t rank = x->get_shape().ndim();
    if (rank < 3) fail("input 0 has ", rank, " dims; expected [N, C, spatial...] (at least 3)");
    w = read_window(n, rank - 2, {});
    apply_auto_pad(w, x->get_shape());
    extra.set("mode", mode);
    extra.set("lengths", to_value(w.kernel));
    extra.set("stride", to_value(w.strides));
    extra.set("dilations", to_value(w.dilations));
    extra.set("padding", to_value(w.pads));
    extra.set("ceil_mode", n.attr_int("ceil_mode", 0) != 0);
    return extra;
}

instruction_ref windowed_pool(const node_info& n, context& ctx, instruction_ref x, const std::string& mode,
                              value extra) {
    window_attrs w;
    return ctx.add("pooling", pool_attrs(n, x, mode, std::move(extra), w), {x});
}

// Calls f(index) for each multi-index below lens, the last dim fastest.
template <class F>
void for_each_multi(const std::vector<std::int64_t>& lens, F f) {
    std::vector<std::int64_t> i(lens.size(), 0);
    for (auto l : lens)
        if (l == 0) return;
    for (;;) {
        f(i);
        std::size_t d = lens.size();
        while (d > 0 && ++i[d - 1] == lens[d - 1]) i[--d] = 0;
        if (d == 0) return;
    }
}

// The constants of one kernel tap over the output positions: the flat spatial index it reads
// (row-major, or column-major over the spatial dims with storage_order 1) and whether it is the
// first tap of its window on a real element. Which taps fall on padding depends only on the
// position, so both are known at parse time.
struct tap_constants {
    std::vector<std::int64_t> index, first;
};

tap_constants tap_at(const window_attrs& w, const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& out,
                     const std::vector<std::int64_t>& t, bool col_major, std::vector<std::int64_t>& seen) {
    tap_constants c;
    std::size_t k = 0, dims = in.size();
    for_each_multi(out, [&](const std::vector<std::int64_t>& o) {
        std::int64_t flat = 0, scale = 1;
        bool real = true;
        for (std::size_t j = 0; j < dims; ++j) {
            std::size_t d = col_major ? j : dims - 1 - j;  // innermost first
            std::int64_t p = o[d] * w.strides[d] + t[d] * w.dilations[d] - w.pads[d];
            real = real && p >= 0 && p < in[d];
            flat += p * scale;
            scale *= in[d];
        }
        c.index.push_back(flat);
        c.first.push_back(real && !seen[k]);
        seen[k++] |= real;
    });
    return c;
}

// The input padded for every tap's strided slice: the node's padding, more at the end when
// ceil_mode needs it, filled with the type's lowest value (pooling's max takes floats, int8 and
// uint8) so that padding never wins.
instruction_ref pad_lowest(context& ctx, instruction_ref x, const window_attrs& w, const std::vector<std::int64_t>& in,
                           const std::vector<std::int64_t>& out) {
    std::size_t dims = in.size();
    std::vector<std::int64_t> pads(2 * (dims + 2), 0);
    for (std::size_t d = 0; d < dims; ++d) {
        std::int64_t needed = (out[d] - 1) * w.strides[d] + (w.kernel[d] - 1) * w.dilations[d] + 1;
        pads[d + 2] = w.pads[d];
        pads[dims + 4 + d] = std::max(w.pads[dims + d], needed - w.pads[d] - in[d]);
    }
    dtype t = x->get_shape().type();
    double lowest = is_float(t) ? -INFINITY : t == dtype::int8 ? -128.0 : 0.0;
    return ctx.add("pad", value{{"pads", to_value(pads)}, {"value", lowest}}, {x});
}

// What kernel tap t reads of the padded input at each output position.
instruction_ref tap_slice(context& ctx, instruction_ref padded, const window_attrs& w,
                          const std::vector<std::int64_t>& out, const std::vector<std::int64_t>& t) {
    std::vector<std::int64_t> axes, starts, ends;
    for (std::size_t d = 0; d < out.size(); ++d) {
        axes.push_back(static_cast<std::int64_t>(d + 2));
        starts.push_back(t[d] * w.dilations[d]);
        ends.push_back(starts.back() + (out[d] - 1) * w.strides[d] + 1);
    }
    return ctx.add("slice",
                   value{{"axes", to_value(axes)},
                         {"starts", to_value(starts)},
                         {"ends", to_value(ends)},
                         {"steps", to_value(w.strides)}},
                   {padded});
}

// The flat index of the first element of each (N, C) plane, shaped [N, C, 1, ...].
instruction_ref plane_offsets(context& ctx, const shape& xs) {
    std::size_t planes = xs.lens()[0] * xs.lens()[1], plane = xs.elements() / std::max<std::size_t>(planes, 1);
    std::vector<std::int64_t> base;
    for (std::size_t p = 0; p < planes; ++p) base.push_back(static_cast<std::int64_t>(p * plane));
    std::vector<std::size_t> lens(xs.ndim(), 1);
    lens[0] = xs.lens()[0], lens[1] = xs.lens()[1];
    return ctx.add_literal(literal(shape(dtype::int64, lens), base));
}

// MaxPool with its Indices output, which kiln's pooling does not compute. Each kernel tap is a
// strided slice of the padded input; a running select keeps the first tap on a real element,
// then any strictly greater value, with the flat input index of its tap (the ONNX reference's
// choice among equal values).
inputs_t max_pool_with_indices(const node_info& n, context& ctx, instruction_ref x) {
    window_attrs w;
    value attrs = pool_attrs(n, x, "max", value{}, w);
    const shape& xs = x->get_shape();
    std::vector<shape> in_shapes{xs};
    shape ys = make_op("pooling", attrs).compute_shape(in_shapes);  // checks the type and geometry
    auto in = spatial_lens(xs, "MaxPool's Indices");
    std::vector<std::int64_t> out(ys.lens().begin() + 2, ys.lens().end());
    auto padded = pad_lowest(ctx, x, w, in, out);
    std::vector<std::size_t> tap_lens{1, 1};
    tap_lens.insert(tap_lens.end(), out.begin(), out.end());
    std::int64_t positions = 1;
    for (auto o : out) positions *= o;
    std::vector<std::int64_t> seen(static_cast<std::size_t>(positions), 0);
    bool col_major = n.attr_int("storage_order", 0) != 0;
    instruction_ref best = ctx.none(), index = ctx.none();
    for_each_multi(w.kernel, [&](const std::vector<std::int64_t>& t) {
        auto v = tap_slice(ctx, padded, w, out, t);
        tap_constants c = tap_at(w, in, out, t, col_major, seen);
        auto tap_index = ctx.add_literal(literal(shape(dtype::int64, tap_lens), c.index));
        if (ctx.is_none(best)) {
            best = v, index = tap_index;
            return;
        }
        auto take = ctx.add("greater", {v, best});
        if (std::count(c.first.begin(), c.first.end(), 1) > 0)
            take = ctx.add("logical_or", {take, ctx.add_literal(literal(shape(dtype::bool_, tap_lens), c.first))});
        best = ctx.add("where", {take, v, best});
        index = ctx.add("where", {take, tap_index, index});
    });
    return {best, ctx.add("add", {index, plane_offsets(ctx, xs)})};
}

KILN_ONNX_OP("", "MaxPool", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    if (n.output_count() > 1 && !n.proto().output(1).empty()) return max_pool_with_indices(n, ctx, in.at(0));
    return {windowed_pool(n, ctx, in.at(0), "max", value{})};
})

inputs_t map_average_pool(const node_info& n, context& ctx, const inputs_t& in) {
    return {windowed_pool(n, ctx, in.at(0), "average",
                          value{{"count_include_pad", n.attr_int("count_include_pad", 0) != 0}})};
}
KILN_ONNX_OP("", "AveragePool", 1, map_average_pool)

// LpPool's p: a float attribute in opset 1, an int from opset 2; kiln takes a whole order >= 1.
std::int64_t lp_order(const node_info& n) {
    if (n.opset() >= 2) return n.attr_int("p", 2);
    float p = n.attr_float("p", 2.0f);
    if (p != std::trunc(p)) fail("attribute 'p' is ", p, "; kiln supports whole orders only");
    return static_cast<std::int64_t>(p);
}

KILN_ONNX_OP("", "LpPool", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {windowed_pool(n, ctx, in.at(0), "lpnorm", value{{"lp_order", lp_order(n)}})};
})

// A Global pool: one output per (N, C) over all spatial dims.
op_mapping global_pool(std::string mode) {
    return [mode](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
        value attrs{{"mode", mode}, {"global", true}};
        if (mode == "lpnorm") attrs.set("lp_order", lp_order(n));
        return {ctx.add("pooling", attrs, {in.at(0)})};
    };
}
KILN_ONNX_OP("", "GlobalAveragePool", 1, global_pool("average"))
KILN_ONNX_OP("", "GlobalMaxPool", 1, global_pool("max"))
KILN_ONNX_OP("", "GlobalLpPool", 1, global_pool("lpnorm"))

inputs_t map_lrn(const node_info& n, context& ctx, const inputs_t& in) {
    n.attr("size");  // required: fails naming it when absent
    return {ctx.add("lrn",
                    value{{"alpha", n.attr_float("alpha", 1e-4f)},
                          {"beta", n.attr_float("beta", 0.75f)},
                          {"bias", n.attr_float("bias", 1.0f)},
                          {"size", n.attr_int("size", 1)}},
                    {in.at(0)})};
}
KILN_ONNX_OP("", "LRN", 1, map_lrn)

}  // namespace
}  // namespace kiln::onnx_fe
