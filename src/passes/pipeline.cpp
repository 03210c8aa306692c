#include "passes/pipeline.hpp"

#include "passes/common_subexpression.hpp"
#include "passes/dead_code.hpp"
#include "passes/fold_batch_norm.hpp"
#include "passes/propagate_constant.hpp"
#include "passes/simplify_algebra.hpp"
#include "passes/simplify_reshapes.hpp"

namespace kiln {

std::vector<pass> generic_passes(const compile_options& opts) {
    if (!opts.optimize) return {};
    return {
        propagate_constant{},              // fold constants and shape arithmetic from the frontend
        simplify_reshapes{},               // collapse view chains, cancel transpose pairs, drop copies
        simplify_algebra{},                // identities, constant reassociation, scales into weights
        fold_batch_norm{},                 // batch norms after convolution/gemm/dot into their weights
        propagate_constant{},              // fold what the rewrites left constant
        eliminate_common_subexpression{},  // exporters repeat subgraphs and constants
        eliminate_dead_code{},
    };
}

}  // namespace kiln
