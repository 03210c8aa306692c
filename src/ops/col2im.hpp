// col2im, as ONNX Col2Im with image_shape and block_shape as attributes. Declared here for typed
// access (lowering); the body and its rules in col2im.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct col2im {
    std::vector<std::int64_t> image_shape;
    std::vector<std::int64_t> block_shape;
    std::vector<std::int64_t> dilations;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
    static constexpr std::string_view name = "col2im";
    auto attributes() {
        return fields(field("image_shape", image_shape), field("block_shape", block_shape),
                      field("dilations", dilations), field("pads", pads), field("strides", strides));
    }

    // The spatial geometry, checked: per dim the image size, block size, dilation, stride, begin
    // pad and the number of block positions.
    struct geometry {
        std::vector<std::int64_t> image, block, dilation, stride, pad, positions;
    };
    geometry plan() const;

    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
