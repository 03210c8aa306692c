// Normalisations (bodies in normalization.cpp): batch, instance, group, layer, RMS, Lp and
// mean-variance normalization. Statistics are computed in double.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/op.hpp"

namespace kiln::ops {

// y = (x - mean) / sqrt(var + epsilon) * scale + bias with per-channel statistics given as inputs.
struct batch_norm_inference {
    static constexpr std::string_view name = "batch_norm_inference";
    op_traits traits() const { return {.precision_sensitive = true}; }
    float epsilon = 1e-5f;
    auto attributes() { return fields(field("epsilon", epsilon)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// Statistics over the spatial dims of each (batch item, channel).
struct instancenorm {
    static constexpr std::string_view name = "instancenorm";
    op_traits traits() const { return {.precision_sensitive = true}; }
    float epsilon = 1e-5f;
    auto attributes() { return fields(field("epsilon", epsilon)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX GroupNormalization (opset 21): statistics over each group of C / num_groups channels
// with their spatial dims; scale and bias hold one value per channel.
struct group_norm {
    static constexpr std::string_view name = "group_norm";
    op_traits traits() const { return {.precision_sensitive = true}; }
    std::int64_t num_groups = 1;
    float epsilon = 1e-5f;
    auto attributes() { return fields(field("num_groups", num_groups), field("epsilon", epsilon)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX LayerNormalization (opset 17), output Y only: x standardized over dims axis..end, then
// y = normalized * scale + bias. Not precision sensitive: on float16/bfloat16 operands every
// target computes the mean and variance in float32 or wider (ref in double) and rounds y once, so
// fp16/bf16 programs keep it in their type (no converts around it; the residual add before it
// stays in a GEMM's epilogue).
struct layernorm {
    static constexpr std::string_view name = "layernorm";
    std::int64_t axis = -1;
    float epsilon = 1e-5f;
    auto attributes() { return fields(field("axis", axis), field("epsilon", epsilon)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX RMSNormalization (opset 23): y = x / sqrt(mean(x^2 over dims axis..end) + epsilon) * scale.
// Like layernorm, computes its sum of squares in float32 or wider on float16/bfloat16 operands.
struct rms_norm {
    static constexpr std::string_view name = "rms_norm";
    std::int64_t axis = -1;
    float epsilon = 1e-5f;
    auto attributes() { return fields(field("axis", axis), field("epsilon", epsilon)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX LpNormalization: x divided by its p-norm along `axis`; a zero vector stays zero (as the
// ONNX reference and ONNX Runtime do).
struct lp_normalization {
    static constexpr std::string_view name = "lp_normalization";
    op_traits traits() const { return {.precision_sensitive = true}; }
    std::int64_t axis = -1;
    std::int64_t p = 2;
    auto attributes() { return fields(field("axis", axis), field("p", p)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX MeanVarianceNormalization: (x - mean) / (sqrt(var) + 1e-9) over `axes`; the 1e-9 is
// the constant of ONNX's function body (the op has no epsilon attribute).
struct mean_variance_normalization {
    static constexpr std::string_view name = "mean_variance_normalization";
    op_traits traits() const { return {.precision_sensitive = true}; }
    std::vector<std::int64_t> axes = {0, 2, 3};
    auto attributes() { return fields(field("axes", axes)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
