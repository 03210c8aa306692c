// Convolution and its transpose (bodies in convolution.cpp): ONNX Conv and ConvTranspose without
// bias. Any number of spatial dims; input [N, C, spatial...].
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/op.hpp"

namespace kiln::ops {

// ONNX Conv: weights [M, C/group, k...]; output channel m sees the input channels of group
// m / (M/group).
struct convolution {
    static constexpr std::string_view name = "convolution";
    op_traits traits() const { return {.contraction = true}; }
    std::vector<std::int64_t> padding;
    std::vector<std::int64_t> stride;
    std::vector<std::int64_t> dilation;
    std::int64_t group = 1;
    auto attributes() {
        return fields(field("padding", padding), field("stride", stride), field("dilation", dilation),
                      field("group", group));
    }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX ConvTranspose: weights [C, M/group, k...]. Each input element scatters its products
// into the output; the output length per dim is
// stride * (n - 1) + output_padding + dilated kernel - padding begin - padding end.
struct deconvolution {
    static constexpr std::string_view name = "deconvolution";
    std::vector<std::int64_t> padding;
    std::vector<std::int64_t> stride;
    std::vector<std::int64_t> dilation;
    std::vector<std::int64_t> output_padding;
    std::int64_t group = 1;
    auto attributes() {
        return fields(field("padding", padding), field("stride", stride), field("dilation", dilation),
                      field("output_padding", output_padding), field("group", group));
    }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
