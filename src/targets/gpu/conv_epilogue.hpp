// A convolution's fused epilogue as one cuDNN call: y = relu(conv(x) + bias + residual), the adds
// and the relu each optional, through cudnnConvolutionBiasActivationForward, so that no generated
// kernel reads and writes the output again. What cuDNN does not fuse (another activation, a
// broadcasting add, an output in another layout), has no engine for, or runs slower fused (a
// grouped convolution: no depthwise kernel) stays the convolution then one generated kernel; the
// compile report counts both, with the reasons.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {

// How cuDNN's fused call computes a fused epilogue's body after its convolution `anchor`.
struct conv_epilogue_match {
    const instruction* bias = nullptr;       // the body's value added as the bias, or null
    const instruction* residual = nullptr;   // the body's value added as the residual, or null
    bool relu = false;
    std::string why_not;   // empty: the whole body; else why not, in the compile report's words
};

// The body after an ungrouped convolution, in any order: adds of a bias (one value per output channel, of
// the output's type) and of a residual (the output's shape, type and layout), each at most once,
// then a relu, last. `out` is the layout of the region's output, which must be the one the
// convolution computes in; `known` the operands of the body's parameters (body_params).
conv_epilogue_match match_conv_epilogue(const module& body, const instruction& anchor, const shape& out,
                                        const std::unordered_map<const instruction*, body_operand>& known);

// Lowers the fused epilogue `ins` whose contraction is the convolution `anchor` (operands `in`)
// when its body matches: cuDNN's fused call, or where cuDNN has no engine for it the convolution
// into the output and one kernel for the rest. Returns false, lowering nothing, when the body does
// not match. Either way the reason is counted in ctx.conv_epilogues.
bool lower_conv_epilogue(lowering_context& ctx, const instruction& ins, const module& body, const instruction& anchor,
                         const std::vector<body_operand>& in, std::unordered_map<const instruction*, body_operand>& known);

// The compile report's line from ctx.conv_epilogues ("" without convolution epilogues).
std::string conv_epilogue_note(const std::unordered_map<std::string, std::size_t>& counts);

}  // namespace kiln::gpu
