// Turns the pointwise part of a fused region's body (pointwise ops, broadcast views of its
// inputs, scalar literals) into one elementwise kernel: each op contributes its scalar_expr (the
// helpers of ops/scalar_helpers.h), convert its element cast; values of float16/bfloat16 ops
// are rounded to their type as ref rounds them. Every value is computed at the output's index,
// operands are read through their strides broadcast to the output's lens.
#pragma once
#include <unordered_map>

#include "core/module.hpp"
#include "targets/gpu/lowering.hpp"

namespace kiln::gpu {

// A value the kernel loads: device memory with its strided shape.
struct body_operand {
    std::byte* ptr = nullptr;
    shape s;
};

// Adds the kernel computing `body`'s returned value into `out` (shape `out_shape`), given the
// operands of its parameters and of any other instruction already computed (a fused epilogue's
// anchor). Throws naming the body instruction it cannot express.
void add_body_kernel(lowering_context& ctx, const instruction& ins, const module& body,
                     std::unordered_map<const instruction*, body_operand> known, std::byte* out, const shape& out_shape);

// The fused instruction's inputs as operands of its body's parameters.
std::unordered_map<const instruction*, body_operand> body_params(lowering_context& ctx, const instruction& ins,
                                                                 const module& body);

}  // namespace kiln::gpu
