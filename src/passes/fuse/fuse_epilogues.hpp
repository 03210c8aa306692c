// fuse_epilogues: replaces a dot, gemm or convolution and the pointwise ops that consume its result
// (bias add, activation, residual add, gelu's tree) by one `fused_epilogue` instruction: the
// epilogue a GEMM or convolution kernel applies before it writes its output. Only ops downstream
// of the contraction join (its inputs' producers are not a GEMM epilogue); the region grows
// backward from the latest such op whose region reaches the contraction, with fuse_pointwise's
// rule: a member's users are all members (the contraction's result included), so the result has
// one output and no cycle. Side inputs (bias, residual) enter as inputs, broadcast views of them
// are copied into the body. Runs before fuse_reduce and fuse_pointwise.
#pragma once
#include <functional>
#include <string_view>

#include "core/module.hpp"

namespace kiln {

struct fuse_epilogues {
    static constexpr std::string_view name = "fuse_epilogues";
    // The target's policy: which pointwise ops its GEMM/convolution library can apply in an
    // epilogue (empty: every fusible pointwise op). An op it rejects, and what follows it, stays
    // outside the region for the pointwise fusion that runs after.
    std::function<bool(const instruction&)> accepts;
    void apply(program& p, module& m) const;
};

}  // namespace kiln
