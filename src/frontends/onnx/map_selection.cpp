// ONNX Unique and Compress, onto kiln's data-dependent ops of the same names. Without an axis
// they work on the flattened input: the op along axis 0 of the input reshaped to 1-D.
#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

instruction_ref flattened(context& ctx, instruction_ref x) {
    return ctx.add("reshape", value{{"dims", to_value(std::vector<std::int64_t>{-1})}}, {x});
}

inputs_t unique(const node_info& n, context& ctx, const inputs_t& in) {
    auto x = in.at(0);
    std::int64_t axis = n.attr_int("axis", 0);
    if (!n.has_attr("axis")) x = flattened(ctx, x);
    auto t = ctx.add("unique", value{{"axis", axis}, {"sorted", n.attr_int("sorted", 1) != 0}}, {x});
    inputs_t out;
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(n.output_count()); ++i)
        out.push_back(ctx.add("get_tuple_elem", value{{"index", i}}, {t}));
    return out;
}
KILN_ONNX_OP("", "Unique", 11, unique)

inputs_t compress(const node_info& n, context& ctx, const inputs_t& in) {
    auto x = in.at(0);
    if (!n.has_attr("axis")) x = flattened(ctx, x);
    return {ctx.add("compress", value{{"axis", n.attr_int("axis", 0)}}, {x, in.at(1)})};
}
KILN_ONNX_OP("", "Compress", 9, compress)

}  // namespace
}  // namespace kiln::onnx_fe
