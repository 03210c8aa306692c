// ONNX indexing ops onto kiln's: Gather, GatherElements, GatherND, Scatter, ScatterElements,
// ScatterND, TopK, Range, NonZero and OneHot. The attributes map one to one; inputs that kiln's
// ops take as attributes (TopK's K, OneHot's depth) must be constants.
#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

// A mapping that applies one kiln op to all the node's inputs, with one int attribute copied
// from the node (ONNX's default when absent).
op_mapping with_int(std::string op, std::string attr, std::int64_t def) {
    return [=](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
        return {ctx.add(op, value{{attr, n.attr_int(attr, def)}}, in)};
    };
}

KILN_ONNX_OP("", "Gather", 1, with_int("gather", "axis", 0))
KILN_ONNX_OP("", "GatherElements", 11, with_int("gather_elements", "axis", 0))
// batch_dims came in opset 12; before it the default 0 is the only behaviour.
KILN_ONNX_OP("", "GatherND", 11, with_int("gathernd", "batch_dims", 0))

// Scatter (opset 9, deprecated in 11) is ScatterElements without a reduction. The reduction
// attribute came in opset 16 (add, mul) and grew max, min in 18; its absence means none.
op_mapping scatter_elements() {
    return [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
        return {ctx.add("scatter_elements",
                        value{{"axis", n.attr_int("axis", 0)}, {"reduction", n.attr_string("reduction", "none")}}, in)};
    };
}
KILN_ONNX_OP("", "Scatter", 9, scatter_elements())
KILN_ONNX_OP("", "ScatterElements", 11, scatter_elements())
KILN_ONNX_OP("", "ScatterND", 11, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("scatternd", value{{"reduction", n.attr_string("reduction", "none")}}, in)};
})

// Range takes scalars; a one-element 1-D input, which ONNX's own AffineGrid function body passes
// (its 3-D branch splits the size into [1] pieces) and onnx's reference accepts, is read as its
// element.
inputs_t range(const node_info&, context& ctx, const inputs_t& in) {
    inputs_t args;
    for (auto x : in) {
        const shape& s = x->get_shape();
        bool one = s.is_tensor() && !s.dynamic() && s.ndim() == 1 && s.lens()[0] == 1;
        args.push_back(one ? ctx.add("squeeze", value{{"axes", to_value(std::vector<std::int64_t>{0})}}, {x}) : x);
    }
    return {ctx.add("range", args)};
}
KILN_ONNX_OP("", "Range", 11, range)
KILN_ONNX_OP("", "NonZero", 9, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("nonzero", in)};
})

// The single value of a constant scalar or one-element input.
std::int64_t constant_scalar(context& ctx, instruction_ref i, const std::string& what) {
    auto v = ctx.constant_ints(i, what);
    if (v.size() != 1) fail(what, " has ", v.size(), " elements; expected exactly one");
    return v[0];
}

// TopK's values and indices from kiln's (values, indices) tuple. largest and sorted came in
// opset 11; before it TopK always returned the largest, sorted.
inputs_t topk(const node_info& n, context& ctx, instruction_ref x, std::int64_t k) {
    auto t = ctx.add("topk",
                     value{{"k", k},
                           {"axis", n.attr_int("axis", -1)},
                           {"largest", n.attr_int("largest", 1) != 0},
                           {"sorted", n.attr_int("sorted", 1) != 0}},
                     {x});
    return {ctx.add("get_tuple_elem", value{{"index", 0}}, {t}), ctx.add("get_tuple_elem", value{{"index", 1}}, {t})};
}
KILN_ONNX_OP("", "TopK", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    if (!n.has_attr("k")) fail("required attribute 'k' is missing");
    return topk(n, ctx, in.at(0), n.attr_int("k", 0));
})
// From opset 10 K is an input; kiln's topk needs it when compiling, as its output shape.
KILN_ONNX_OP("", "TopK", 10, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return topk(n, ctx, in.at(0), constant_scalar(ctx, in.at(1), "input 1 (K)"));
})

// depth (any numeric type, truncated to an integer) sets the output shape, so it must be a
// constant. Negative indices count from depth (ONNX says so from opset 11; in 9 they were
// undefined, so the same reading serves both).
KILN_ONNX_OP("", "OneHot", 9, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    std::int64_t depth = constant_scalar(ctx, in.at(1), "input 1 (depth)");
    return {ctx.add("one_hot", value{{"depth", depth}, {"axis", n.attr_int("axis", -1)}}, {in.at(0), in.at(2)})};
})

}  // namespace
}  // namespace kiln::onnx_fe
