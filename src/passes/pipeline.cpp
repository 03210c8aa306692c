#include "passes/pipeline.hpp"

#include "passes/common_subexpression.hpp"
#include "passes/dead_code.hpp"
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
    };
}

}  // namespace kiln
