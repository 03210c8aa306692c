// convert_precision: turns a float32 module into one that computes in float16 or bfloat16.
//  - float32 literals become literals of the low type (a float32 copy stays only where an op
//    below reads its float32 value);
//  - the module's interface keeps float32: a convert after each float32 parameter and before
//    each float32 output, so callers (and control-flow ops calling submodules) see no change;
//  - every op computes in the low type, except ops whose results depend on long sums or
//    products: reductions (the `reduction` trait: sum, mean, prod, l1, l2, log-sum-exp, ...),
//    softmax/logsoftmax, batch/instance/group norms (their statistics), cumulative sums and the few
//    others listed in convert_precision.cpp. These compute in float32 by construction: their inputs are
//    converted up and their results converted down only for consumers that compute in the low
//    type (a reduction returned by the module or feeding another reduction stays float32).
//  - ops with submodules (if, loop, fused regions) keep float32 inputs: their bodies are modules
//    that this pass converts on their own, keeping their float32 interfaces. So do ops that still
//    declare float32 results when given low inputs (a deferred ONNX node checks its declared
//    types at run time);
//  - a convert into float32 (from integers, say) converts into the low type instead.
// Integer, bool and float64 tensors are untouched. Nothing is clamped afterwards: whatever
// could overflow the low type is computed in float32 in the first place.
//
// Contract for targets: matrix multiplies (dot, gemm), convolutions, pooling and attention
// on float16/bfloat16 operands must accumulate in float32 and round once at the end, and so must
// layernorm and rms_norm, which compute in the low type (their mean, variance or sum of squares
// in float32: a transformer's layer norms then need no converts around them). Ref computes every
// op in double and rounds once, so it meets this.
#pragma once
#include <string_view>

#include "core/module.hpp"
#include "core/target.hpp"

namespace kiln {

struct convert_precision {
    static constexpr std::string_view name = "convert_precision";
    dtype low = dtype::float16;   // float16 or bfloat16
    void apply(module& m) const;
};

// The low type of a compute precision (float16 for fp16, bfloat16 for bf16); throws for fp32.
dtype low_type(compute_precision p);

}  // namespace kiln
