// GEMMs and convolutions on operands given as device memory with shapes, so that a lone dot,
// gemm or convolution and a fused epilogue's anchor lower the same way.
#pragma once
#include "core/operation.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {

// Computes `op` (dot, gemm or convolution) of `in` into `out` (standard layout).
void lower_contraction(lowering_context& ctx, const instruction& ins, const operation& op,
                       const std::vector<body_operand>& in, const body_operand& out);

// A copy of an operand into standard layout in scratch memory (a step of its own).
body_operand materialize(lowering_context& ctx, const instruction& ins, const body_operand& o);

// A copy kernel of `from` into `to` (same lens, any layouts: a transpose between NCHW and NHWC).
void copy_operand(lowering_context& ctx, const instruction& ins, const body_operand& from, const body_operand& to);

// The cuDNN convolution (convolution.cpp in this folder).
void lower_convolution(lowering_context& ctx, const instruction& ins, const operation& op,
                       const std::vector<body_operand>& in, const body_operand& out);

}  // namespace kiln::gpu
