// fuse_pointwise: replaces each maximal tree of pointwise ops with one `pointwise` instruction
// whose submodule computes it (one kernel instead of one per op). A region grows backward from its
// root (see fusion_region.hpp): a pointwise producer joins when all its users are in the region;
// one used outside stays outside and feeds the region as an input (never duplicated), which also
// keeps the result acyclic. Multi-input regions read each input once; scalar and small literals
// and broadcast views (multibroadcast, broadcast) are copied into the body, and binary ops keep
// their implicit numpy broadcasting there. A lone pointwise op becomes a one-op region too, so a
// target only generates code for `pointwise`. Assumes fused_reduce and fused_epilogue regions were
// formed first (they claim the pointwise ops around reductions and GEMMs/convolutions).
#pragma once
#include <string_view>

#include "core/module.hpp"

namespace kiln {

struct fuse_pointwise {
    static constexpr std::string_view name = "fuse_pointwise";
    void apply(program& p, module& m) const;
};

}  // namespace kiln
