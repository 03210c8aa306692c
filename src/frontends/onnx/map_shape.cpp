// ONNX ops that change a tensor's shape without reordering its elements, onto kiln's view ops:
// Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Expand and Slice. Where ONNX moved an
// attribute to an input (Reshape 5, Slice 10, Squeeze/Unsqueeze 13), the input must be a
// constant: kiln's ops take it as an attribute because it decides the output shape.
#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;
using ints = std::vector<std::int64_t>;

bool present(context& ctx, const inputs_t& in, std::size_t i) { return i < in.size() && !ctx.is_none(in[i]); }

// An optional constant int input, empty when absent.
ints optional_ints(context& ctx, const inputs_t& in, std::size_t i, const std::string& what) {
    return present(ctx, in, i) ? ctx.constant_ints(in[i], what) : ints{};
}

// A required list attribute (an absent one would silently mean something else).
ints required_ints(const node_info& n, const std::string& name) {
    n.attr(name);  // fails naming it when absent
    return n.attr_ints(name);
}

// allowzero (opset 14) makes a 0 in the shape a real size instead of "copy the input's dim".
instruction_ref reshape(const node_info& n, context& ctx, instruction_ref x, const ints& dims) {
    return ctx.add("reshape", value{{"dims", to_value(dims)}, {"allowzero", n.attr_int("allowzero", 0) != 0}}, {x});
}
KILN_ONNX_OP("", "Reshape", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {reshape(n, ctx, in.at(0), required_ints(n, "shape"))};
})
KILN_ONNX_OP("", "Reshape", 5, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {reshape(n, ctx, in.at(0), ctx.constant_ints(in.at(1), "input 1 (shape)"))};
})

KILN_ONNX_OP("", "Flatten", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("flatten", value{{"axis", n.attr_int("axis", 1)}}, {in.at(0)})};
})

// No perm reverses the dims, as kiln's empty permutation does.
KILN_ONNX_OP("", "Transpose", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("transpose", value{{"permutation", to_value(n.attr_ints("perm"))}}, {in.at(0)})};
})

// Squeeze without axes removes every dim of size 1.
instruction_ref squeeze(context& ctx, instruction_ref x, const ints& axes) {
    return ctx.add("squeeze", value{{"axes", to_value(axes)}}, {x});
}
KILN_ONNX_OP("", "Squeeze", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {squeeze(ctx, in.at(0), n.attr_ints("axes"))};
})
KILN_ONNX_OP("", "Squeeze", 13, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    return {squeeze(ctx, in.at(0), optional_ints(ctx, in, 1, "input 1 (axes)"))};
})

// Unsqueeze's axes count in the output's rank (in every opset; negative ones from 11).
instruction_ref unsqueeze(context& ctx, instruction_ref x, const ints& axes) {
    return ctx.add("unsqueeze", value{{"axes", to_value(axes)}}, {x});
}
KILN_ONNX_OP("", "Unsqueeze", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {unsqueeze(ctx, in.at(0), required_ints(n, "axes"))};
})
KILN_ONNX_OP("", "Unsqueeze", 13, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    return {unsqueeze(ctx, in.at(0), ctx.constant_ints(in.at(1), "input 1 (axes)"))};
})

KILN_ONNX_OP("", "Expand", 8, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("expand", value{{"dims", to_value(ctx.constant_ints(in.at(1), "input 1 (shape)"))}}, {in.at(0)})};
})

instruction_ref slice(context& ctx, instruction_ref x, const ints& starts, const ints& ends, const ints& axes,
                      const ints& steps) {
    return ctx.add("slice",
                   value{{"axes", to_value(axes)},
                         {"starts", to_value(starts)},
                         {"ends", to_value(ends)},
                         {"steps", to_value(steps)}},
                   {x});
}
KILN_ONNX_OP("", "Slice", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {slice(ctx, in.at(0), required_ints(n, "starts"), required_ints(n, "ends"), n.attr_ints("axes"), {})};
})
// From opset 10 starts, ends and the optional axes and steps are inputs.
KILN_ONNX_OP("", "Slice", 10, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    return {slice(ctx, in.at(0), ctx.constant_ints(in.at(1), "input 1 (starts)"),
                  ctx.constant_ints(in.at(2), "input 2 (ends)"), optional_ints(ctx, in, 3, "input 3 (axes)"),
                  optional_ints(ctx, in, 4, "input 4 (steps)"))};
})

}  // namespace
}  // namespace kiln::onnx_fe
