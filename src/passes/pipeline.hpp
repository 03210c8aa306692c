// The generic pipeline: the target-independent passes every target runs before its own lowering.
#pragma once
#include <vector>

#include "core/pass.hpp"
#include "core/target.hpp"

namespace kiln {

// With opts.optimize off it only converts precision (when asked); the ref target runs this.
std::vector<pass> generic_passes(const compile_options& opts);

}  // namespace kiln
