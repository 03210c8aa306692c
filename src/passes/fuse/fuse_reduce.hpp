// fuse_reduce: replaces each reduction with its pointwise producers and consumers by one
// `fused_reduce` instruction (softmax's max/sub/exp/sum/div, a mean and variance with the
// normalisation after them: one kernel, one pass over the data where a target can). Several
// reductions join one region when they reduce the same axes of inputs of the same rank; the
// broadcast views that carry a reduced value back to the full shape join too. A region grows
// backward from its root like fuse_pointwise's (producers used outside stay outside, so no cycle),
// and regions without a reduction are dropped. Only reductions with an `axes` attribute that
// reduce something (not noop_with_empty_axes, not a rank-0 input) are fused. Runs before fuse_pointwise.
#pragma once
#include <string_view>

#include "core/module.hpp"

namespace kiln {

struct fuse_reduce {
    static constexpr std::string_view name = "fuse_reduce";
    void apply(program& p, module& m) const;
};

}  // namespace kiln
