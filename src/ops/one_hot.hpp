// one_hot (ONNX OneHot with depth as an attribute). Declared here for typed access (lowering);
// the body in generate.cpp. Inputs indices (any numeric type; floats truncate to int64) and
// values [off, on]. The output inserts a dim of size depth at axis (in [-rank-1, rank]) and holds
// `on` where the index along it equals indices. Negative indices count from depth; indices
// outside [-depth, depth) give a line of `off` (ONNX OneHot semantics, not an error).
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct one_hot {
    std::int64_t depth = 0;
    std::int64_t axis = -1;
    static constexpr std::string_view name = "one_hot";
    auto attributes() { return fields(field("depth", depth), field("axis", axis)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
