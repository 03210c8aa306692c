#include "passes/pipeline.hpp"

#include "passes/common_subexpression.hpp"
#include "passes/dead_code.hpp"
#include "passes/fuse_epilogues.hpp"
#include "passes/fuse_pointwise.hpp"
#include "passes/fuse_reduce.hpp"
#include "passes/propagate_constant.hpp"
#include "passes/recognize_patterns.hpp"

namespace kiln {

std::vector<pass> generic_passes(const compile_options& opts) {
    if (!opts.optimize) return {};
    return {
        propagate_constant{},              // fold constants and shape arithmetic from the frontend
        eliminate_common_subexpression{},  // exporters repeat subgraphs and constants
        recognize_patterns{},              // layernorm, gelu, silu, softmax, attention written out by exporters
        eliminate_dead_code{},
        fuse_epilogues{},                  // dot/gemm/convolution + bias, activation, residual: one kernel
        fuse_reduce{},                     // reductions with their pointwise producers and consumers
        fuse_pointwise{},                  // what is left of pointwise trees, one kernel each
    };
}

}  // namespace kiln
