// Linear quantization: quantizelinear and dequantizelinear (ONNX QuantizeLinear and
// DequantizeLinear). Declared here for typed access (lowering); bodies and the rules in
// quantize.cpp. Inputs x, scale and an optional zero point of the scale's shape. The scale is one
// value (per tensor), a 1-D tensor of x's length along `axis` (per axis), or, with block_size > 0,
// a tensor of x's rank whose `axis` dim is ceil(x_len / block_size) (blocked: each scale covers
// block_size consecutive elements there).
#pragma once
#include <optional>
#include <utility>

#include "ops/common.hpp"

namespace kiln::ops {

// Where x's element at a multi-index finds its scale and zero point.
struct scale_map {
    enum { per_tensor, per_axis, blocked } kind = per_tensor;
    std::size_t axis = 0;
    std::size_t block = 1;

    // Row-major linear index into the (standard) scale for x's multi-index `xi`.
    std::size_t index(const shape& scale, std::span<const std::size_t> xi) const {
        if (kind == per_tensor) return 0;
        if (kind == per_axis) return xi[axis];
        std::size_t k = 0;
        for (std::size_t d = 0; d < xi.size(); ++d) k = k * scale.lens()[d] + (d == axis ? xi[d] / block : xi[d]);
        return k;
    }
};

// Checks the inputs' counts and shapes (not x's or the zero point's type) and says how scales map.
scale_map check_scales(std::span<const shape> in, std::int64_t axis, std::int64_t block_size);

struct quantizelinear {
    static constexpr std::string_view name = "quantizelinear";
    op_traits traits() const { return {.precision_sensitive = true}; }
    std::int64_t axis = 1;
    std::int64_t block_size = 0;
    dtype target_type = dtype::uint8;
    bool saturate = true;
    auto attributes() {
        return fields(field("axis", axis), field("block_size", block_size), field("target_type", target_type),
                      field("saturate", saturate));
    }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;

    // The small float targets: the fp8 formats (e8m0, a scale format, excepted) and fp4e2m1.
    static bool is_float_target(dtype t);
    // The integer targets' ranges; none for the float ones (and for types quantizelinear does not produce).
    static std::optional<std::pair<double, double>> range_of(dtype t);

private:
    argument store(const shape& out, const std::vector<double>& y) const;
};

struct dequantizelinear {
    static constexpr std::string_view name = "dequantizelinear";
    std::int64_t axis = 1;
    std::int64_t block_size = 0;
    auto attributes() { return fields(field("axis", axis), field("block_size", block_size)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
