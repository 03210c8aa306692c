// GEMMs and convolutions on operands given as device memory with shapes, so that a lone dot,
// gemm or convolution and a fused epilogue's anchor lower the same way.
#pragma once
#include <optional>
#include <unordered_map>

#include "core/operation.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {

// Computes `op` (dot, gemm or convolution) of `in` into `out` (standard layout).
void lower_contraction(lowering_context& ctx, const instruction& ins, const operation& op,
                       const std::vector<body_operand>& in, const body_operand& out);

// The memory a fused region's input, or a view of one, is read from (`known`: the operands of the
// body's parameters); none for a value the body computes.
std::optional<body_operand> aliased_operand(const instruction& i,
                                            const std::unordered_map<const instruction*, body_operand>& known);

// A copy of an operand into standard layout in scratch memory (a step of its own).
body_operand materialize(lowering_context& ctx, const instruction& ins, const body_operand& o);

// A copy kernel of `from` into `to` (same lens, any layouts: a transpose between NCHW and NHWC).
void copy_operand(lowering_context& ctx, const instruction& ins, const body_operand& from, const body_operand& to);

// What cuDNN's fused call applies after a convolution: y = act(conv(x) + residual + bias), the
// bias one value per output channel (null: none), the residual in the output's type and layout
// (null: none), act a relu or the identity.
struct conv_epilogue {
    std::byte* bias = nullptr;
    std::byte* residual = nullptr;
    bool relu = false;
};

// The cuDNN convolution (convolution.cpp in this folder). With `epi` (the output then in the
// layout the convolution computes in), the fused call where cuDNN has an engine for it: returns
// whether it computed the epilogue too (else only the convolution, into `out`).
bool lower_convolution(lowering_context& ctx, const instruction& ins, const operation& op,
                       const std::vector<body_operand>& in, const body_operand& out,
                       const conv_epilogue* epi = nullptr);

}  // namespace kiln::gpu
