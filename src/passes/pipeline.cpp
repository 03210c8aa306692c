#include "passes/pipeline.hpp"

#include "passes/common_subexpression.hpp"
#include "passes/convert_precision.hpp"
#include "passes/dead_code.hpp"
#include "passes/propagate_constant.hpp"

namespace kiln {

std::vector<pass> generic_passes(const compile_options& opts) {
    std::vector<pass> passes;
    if (opts.optimize) {
        passes = {
            propagate_constant{},              // fold constants and shape arithmetic from the frontend
            eliminate_common_subexpression{},  // exporters repeat subgraphs and constants
            eliminate_dead_code{},
        };
    }
    // After folding (constants fold in float32, only the folded literals are converted) and before
    // any fusion (fused regions' bodies keep the types they were fused with).
    if (opts.precision != compute_precision::fp32) passes.push_back(convert_precision{low_type(opts.precision)});
    return passes;
}

}  // namespace kiln
