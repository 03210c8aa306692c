#include "passes/pipeline.hpp"

#include "passes/common_subexpression.hpp"
#include "passes/dead_code.hpp"
#include "passes/propagate_constant.hpp"

namespace kiln {

std::vector<pass> generic_passes(const compile_options& opts) {
    if (!opts.optimize) return {};
    return {
        propagate_constant{},              // fold constants and shape arithmetic from the frontend
        eliminate_common_subexpression{},  // exporters repeat subgraphs and constants
        eliminate_dead_code{},
    };
}

}  // namespace kiln
