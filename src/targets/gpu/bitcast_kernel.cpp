// bitcast where it copies (a view otherwise): the input's memory is read as if it held the target
// type (int4 <-> uint4, and the other packed types, re-extend their bits), or, for a bool target,
// as bytes, a nonzero one becoming true. One elementwise kernel.
#include "ops/bitcast.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

void lower_bitcast(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::bitcast>();
    const shape& x = ins.inputs()[0]->get_shape();
    elementwise_spec spec;
    spec.output = ins.get_shape();
    const bool to_bool = op.target_type == dtype::bool_;
    spec.inputs = {shape(to_bool ? dtype::uint8 : op.target_type, x.lens(), x.strides())};
    spec.body = to_bool ? "const bool y = x0 != 0;" : "const auto y = x0;";
    ctx.add_kernel(ins, make_elementwise_kernel(spec, ctx.where(ins)), elementwise_launch(spec.output.elements()),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0])});
}

const gpu_lowering_registrar bitcast_lowering{{
    "bitcast that copies (one generated elementwise kernel)",
    [](const instruction& ins) {
        const auto* op = ins.get_operator().get_if<ops::bitcast>();
        return op && op->copies() && ins.get_shape().standard();
    },
    lower_bitcast,
    false,
    true,
}};

}  // namespace
}  // namespace kiln::gpu
