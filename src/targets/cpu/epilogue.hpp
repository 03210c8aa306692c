// Reads a contraction (convolution, dot, gemm) and the pointwise tail of its fused_epilogue as
// oneDNN post-ops: a per-channel add becomes the convolution's bias, a same-shape add a sum
// post-op (the residual), a broadcast operand a binary post-op, a constant scalar operand an
// eltwise_linear, activations eltwise post-ops. Ops are read typed; a tail step oneDNN cannot
// express means no region (the reference runs the instruction).
#pragma once
#include <optional>
#include <vector>

#include "core/module.hpp"

namespace kiln {

// An operand read from the kernel's arguments (arg >= 0) or a constant.
struct region_operand {
    int arg = -1;
    const argument* constant = nullptr;
};

struct epilogue_step {
    enum kind_t { eltwise, binary, sum } kind = eltwise;
    int alg = 0;                 // dnnl::algorithm
    float alpha = 0, beta = 0;   // eltwise parameters
    shape operand;               // binary: its lens (1 where broadcast) and strides in memory
    int arg = -1;                // binary, sum: the argument it reads (-1: constant)
    const argument* constant = nullptr;
};

struct epilogue_plan {
    std::optional<region_operand> bias;   // convolution bias (per output channel, contiguous)
    std::vector<epilogue_step> steps;
    int sum_arg = -1;                     // the argument a sum post-op accumulates onto
    shape sum_shape;
};

struct contraction_region {
    const instruction* ins = nullptr;           // the instruction the kernel computes
    const instruction* contraction = nullptr;   // the instruction itself, or the one in its body
    shape out;                                  // the instruction's result
    std::vector<region_operand> inputs;         // the contraction's inputs
    std::vector<shape> shapes;                  // their shapes in memory
    epilogue_plan epilogue;

    int arg(std::size_t i) const { return inputs.at(i).arg; }
    const argument* constant(std::size_t i) const { return inputs.at(i).constant; }
    const shape& input_shape(std::size_t i) const { return shapes.at(i); }
};

// Whether a pointwise op may join a GEMM/convolution epilogue on cpu (the fusion policy's
// epilogue_op): an activation oneDNN has as an eltwise post-op, clip, or add/mul/max/min, which
// post-ops express whichever input the contraction's value is. Others go to pointwise regions.
bool onednn_post_op(const instruction& ins);

// A contraction, or a fused_epilogue whose tail oneDNN expresses; none otherwise.
std::optional<contraction_region> find_contraction_region(const instruction& ins);

}  // namespace kiln
