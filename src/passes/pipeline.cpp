#include "passes/pipeline.hpp"

#include "passes/simplify/common_subexpression.hpp"
#include "passes/convert_precision.hpp"
#include "passes/simplify/dead_code.hpp"
#include "passes/simplify/fold_batch_norm.hpp"
#include "passes/fuse/fuse_epilogues.hpp"
#include "passes/fuse/fuse_pointwise.hpp"
#include "passes/fuse/fuse_reduce.hpp"
#include "passes/simplify/propagate_constant.hpp"
#include "passes/recognize/recognize_patterns.hpp"
#include "passes/simplify/simplify_algebra.hpp"
#include "passes/simplify/simplify_reshapes.hpp"

namespace kiln {

std::vector<pass> generic_passes(const compile_options& opts, const fusion_policy& fusion) {
    std::vector<pass> passes;
    if (opts.optimize) {
        passes = {
            propagate_constant{},              // fold constants and shape arithmetic from the frontend
            simplify_reshapes{},               // collapse view chains, cancel transpose pairs, drop copies
            simplify_algebra{},                // identities, constant reassociation, scales into weights
            fold_batch_norm{},                 // batch norms after convolution/gemm/dot into their weights
            propagate_constant{},              // fold what the rewrites left constant
            eliminate_common_subexpression{},  // exporters repeat subgraphs and constants
            recognize_patterns{},              // layernorm, gelu, silu, softmax, attention written out by exporters
            eliminate_dead_code{},
        };
    }
    // After folding and recognition (constants fold in float32, and a recognised layernorm or softmax
    // stays float32 as one op), before any fusion (fused bodies keep the types they were fused with).
    if (opts.precision != compute_precision::fp32) passes.push_back(convert_precision{low_type(opts.precision)});
    if (opts.optimize) {
        if (fusion.epilogues) passes.push_back(fuse_epilogues{fusion.epilogue_op});   // dot/gemm/convolution + bias, activation, residual
        if (fusion.reductions) passes.push_back(fuse_reduce{});     // reductions with their pointwise producers and consumers
        if (fusion.pointwise) passes.push_back(fuse_pointwise{});   // what is left of pointwise trees, one kernel each
    }
    return passes;
}

}  // namespace kiln
