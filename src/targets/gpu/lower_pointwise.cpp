// Pointwise regions (the `pointwise` fused op) and lone pointwise ops: one generated
// elementwise kernel each (body_kernel.hpp).
#include "ops/fused.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

const gpu_lowering_registrar region{{
    "pointwise region (one generated kernel)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::pointwise>() != nullptr; },
    [](lowering_context& ctx, const instruction& ins) {
        const module& body = *ins.module_inputs().at(0);
        add_body_kernel(ctx, ins, body, body_params(ctx, ins, body), ctx.address(ins), ins.get_shape());
    },
}};

// A lone op is a region of one: its body is made here, for the generator only.
const gpu_lowering_registrar single{{
    "pointwise op (one generated kernel)",
    [](const instruction& ins) { return ins.get_operator().traits().pointwise && ins.module_inputs().empty(); },
    [](lowering_context& ctx, const instruction& ins) {
        module body("pointwise_op");
        std::vector<instruction_ref> params;
        std::unordered_map<const instruction*, body_operand> known;
        for (std::size_t i = 0; i < ins.inputs().size(); ++i) {
            const instruction& in = *ins.inputs()[i];
            params.push_back(body.add_parameter("x" + std::to_string(i), in.get_shape()));
            known[&*params.back()] = {ctx.address(in), in.get_shape()};
        }
        body.add_return({body.add_instruction(ins.get_operator(), params)});
        add_body_kernel(ctx, ins, body, known, ctx.address(ins), ins.get_shape());
    },
}};

}  // namespace
}  // namespace kiln::gpu
