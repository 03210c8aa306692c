// roi_align (ONNX RoiAlign) and max_roi_pool (ONNX MaxRoiPool): pooling over regions of interest.
// Declared here for typed access (lowering); the bodies and their rules in roi_align.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct roi_align {
    std::string mode = "avg";
    std::string coordinate_transformation_mode = "half_pixel";
    std::int64_t output_height = 1;
    std::int64_t output_width = 1;
    std::int64_t sampling_ratio = 0;
    float spatial_scale = 1.0f;
    static constexpr std::string_view name = "roi_align";
    auto attributes() {
        return fields(field("mode", mode), field("coordinate_transformation_mode", coordinate_transformation_mode),
                      field("output_height", output_height), field("output_width", output_width),
                      field("sampling_ratio", sampling_ratio), field("spatial_scale", spatial_scale));
    }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

struct max_roi_pool {
    std::vector<std::int64_t> pooled_shape;
    float spatial_scale = 1.0f;
    static constexpr std::string_view name = "max_roi_pool";
    auto attributes() { return fields(field("pooled_shape", pooled_shape), field("spatial_scale", spatial_scale)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
