// The generic pipeline: the target-independent passes every target runs before its own lowering.
#pragma once
#include <functional>
#include <vector>

#include "core/pass.hpp"
#include "core/target.hpp"

namespace kiln {

// The fused regions a target can execute (its fusion policy): a target that cannot run a kind
// of region turns its pass off instead of receiving regions it would have to split again.
struct fusion_policy {
    bool epilogues = true;    // fused_epilogue: its GEMM/convolution library applies bias, activation, residual
    // Which pointwise ops that library can apply in an epilogue (empty: all); see fuse_epilogues.
    std::function<bool(const instruction&)> epilogue_op;
    bool reductions = true;   // fused_reduce: it runs a reduction with its pointwise neighbours as one kernel
    bool pointwise = true;    // pointwise: it generates one kernel per pointwise tree
};

// With opts.optimize off it only converts precision (when asked).
std::vector<pass> generic_passes(const compile_options& opts, const fusion_policy& fusion = {});

}  // namespace kiln
