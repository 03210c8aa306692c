// ONNX BitCast onto kiln's bitcast, and CumProd onto cumprod (its axis, an input in ONNX, must be
// a constant).
#include "core/error.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

KILN_ONNX_OP("", "BitCast", 26, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    n.attr("to");  // required: fails naming it when absent
    dtype to = onnx_dtype(static_cast<int>(n.attr_int("to", 0)));
    return {ctx.add("bitcast", value{{"target_type", std::string(dtype_name(to))}}, {in.at(0)})};
})

// The axis is a scalar (or one-element) int32/int64 input.
KILN_ONNX_OP("", "CumProd", 26, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    auto axis = ctx.constant_ints(in.at(1), "input 1 (axis)");
    if (axis.size() != 1) fail("input 1 (axis) has ", axis.size(), " values; expected one");
    return {ctx.add("cumprod",
                    value{{"axis", axis[0]},
                          {"exclusive", n.attr_int("exclusive", 0) != 0},
                          {"reverse", n.attr_int("reverse", 0) != 0}},
                    {in.at(0)})};
})

}  // namespace
}  // namespace kiln::onnx_fe
