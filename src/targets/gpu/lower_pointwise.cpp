// Pointwise regions (the `pointwise` fused op) and lone pointwise ops: one generated
// elementwise kernel each (body_kernel.hpp).
#include "ops/convert.hpp"
#include "ops/fused.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

bool small(const shape& s) {
    switch (s.type()) {
        case dtype::fp8e4m3fn: case dtype::fp8e5m2: case dtype::fp8e4m3fnuz: case dtype::fp8e5m2fnuz:
        case dtype::fp8e8m0: return true;
        default: return is_packed(s.type());
    }
}

// The small types (fp8, fp8e8m0, packed) reach the generator only through converts (ONNX Cast):
// ops computing in them round as ref's element types do, which the kernels do not mirror yet.
bool small_values_converted(const instruction& b) {
    if (b.get_operator().get_if<ops::convert>()) return true;
    std::vector<shape> in;
    for (auto i : b.inputs()) in.push_back(i->get_shape());
    if (b.is_param() || b.is_literal() || b.is_return() || b.get_operator().output_alias(in) >= 0) return true;
    if (small(b.get_shape())) return false;
    for (const auto& s : in)
        if (small(s)) return false;
    return true;
}

const gpu_lowering_registrar region{{
    "pointwise region (one generated kernel)",
    [](const instruction& ins) {
        if (!ins.get_operator().get_if<ops::pointwise>()) return false;
        for (const auto& b : *ins.module_inputs().at(0))
            if (!small_values_converted(b)) return false;
        return true;
    },
    [](lowering_context& ctx, const instruction& ins) {
        const module& body = *ins.module_inputs().at(0);
        add_body_kernel(ctx, ins, body, body_params(ctx, ins, body), ctx.address(ins), ctx.layout(ins));
    },
    false,
    true,
    true,
    true,
}};

// A lone op is a region of one: its body is made here, for the generator only.
const gpu_lowering_registrar single{{
    "pointwise op (one generated kernel)",
    [](const instruction& ins) {
        return ins.get_operator().traits().pointwise && ins.module_inputs().empty() && small_values_converted(ins);
    },
    [](lowering_context& ctx, const instruction& ins) {
        module body("pointwise_op");
        std::vector<instruction_ref> params;
        std::unordered_map<const instruction*, body_operand> known;
        for (std::size_t i = 0; i < ins.inputs().size(); ++i) {
            const instruction& in = *ins.inputs()[i];
            params.push_back(body.add_parameter("x" + std::to_string(i), in.get_shape()));
            known[&*params.back()] = {ctx.address(in), ctx.layout(in)};
        }
        body.add_return({body.add_instruction(ins.get_operator(), params)});
        add_body_kernel(ctx, ins, body, known, ctx.address(ins), ctx.layout(ins));
    },
    false,
    true,
    true,
    true,
}};

}  // namespace
}  // namespace kiln::gpu
