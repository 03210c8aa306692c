// grid_sample, as ONNX GridSample (opset 20 mode names: linear, nearest, cubic): samples X
// [N, C, D1..Dr] at the points of grid [N, H1..Hr, r], giving [N, C, H1..Hr]. Grid points are
// normalised to [-1, 1] and list the innermost dim first (grid[..., 0] indexes Dr). Out-of-range
// points follow padding_mode: zeros (read as 0), border (clamped) or reflection (mirrored about
// the borders). Declared here for typed access (lowering); the body in grid_sample.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct grid_sample {
    std::string mode = "linear";
    std::string padding_mode = "zeros";
    bool align_corners = false;
    static constexpr std::string_view name = "grid_sample";
    auto attributes() {
        return fields(field("mode", mode), field("padding_mode", padding_mode), field("align_corners", align_corners));
    }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
