// Reshapes that cannot be views (their input is not laid out row-major) materialise: a copy
// whose element i is the input's element i in row-major order. The same for contiguous.
#include "ops/views.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

bool is_reshape_copy(const instruction& ins) {
    const auto& op = ins.get_operator();
    return op.get_if<ops::reshape>() || op.get_if<ops::flatten>() || op.get_if<ops::squeeze>() ||
           op.get_if<ops::unsqueeze>() || op.get_if<ops::contiguous>();
}

const gpu_lowering_registrar copy_lowering{{
    "reshape copy (generated kernel)",
    is_reshape_copy,
    [](lowering_context& ctx, const instruction& ins) {
        const shape& in = ins.inputs()[0]->get_shape();
        // The input keeps its own lens: the generator reads it at row-major index i.
        elementwise_spec spec{{in}, ins.get_shape(), "const auto y = x0;"};
        ctx.add_kernel(ins, make_elementwise_kernel(spec, ctx.where(ins)), elementwise_launch(spec),
                       {ctx.address(ins), ctx.address(*ins.inputs()[0])});
    },
}};

}  // namespace
}  // namespace kiln::gpu
