// propagate_constant: evaluates every instruction whose inputs are all constant and replaces it
// with a literal holding its value. shape_of of an input with static dims is constant too, so
// shape arithmetic (Shape -> Gather -> Concat -> Reshape chains) folds away. Each constant is
// evaluated once; a value used by several constants is computed once and shared.
// Views of constants (transpose, broadcast, slice, ...) are left as views: folding them would
// copy or materialise broadcasts for nothing. Ops with side effects are never folded.
#pragma once
#include <string_view>

#include "core/module.hpp"

namespace kiln {

struct propagate_constant {
    static constexpr std::string_view name = "propagate_constant";
    void apply(module& m) const;
};

}  // namespace kiln
