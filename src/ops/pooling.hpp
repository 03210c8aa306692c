// Window ops (bodies in pooling.cpp): pooling (average, max, lp) and local response normalization.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/op.hpp"

namespace kiln::ops {

struct pooling {
    static constexpr std::string_view name = "pooling";
    std::string mode = "average";  // "average", "max" or "lpnorm"
    std::vector<std::int64_t> padding;
    std::vector<std::int64_t> stride;
    std::vector<std::int64_t> lengths;  // the kernel
    std::vector<std::int64_t> dilations;
    bool ceil_mode = false;
    bool count_include_pad = false;  // average: divide by the taps in the padded input, not the real ones
    std::int64_t lp_order = 2;
    bool global = false;  // the kernel is the whole spatial extent: one output per channel
    auto attributes() {
        return fields(field("mode", mode), field("padding", padding), field("stride", stride),
                      field("lengths", lengths), field("dilations", dilations), field("ceil_mode", ceil_mode),
                      field("count_include_pad", count_include_pad), field("lp_order", lp_order),
                      field("global", global));
    }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX LRN: y = x / (bias + alpha / size * sum of x^2 over the channels
// [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the tensor) ^ beta.
struct lrn {
    static constexpr std::string_view name = "lrn";
    op_traits traits() const { return {.precision_sensitive = true}; }
    float alpha = 1e-4f;
    float beta = 0.75f;
    float bias = 1.0f;
    std::int64_t size = 1;
    auto attributes() {
        return fields(field("alpha", alpha), field("beta", beta), field("bias", bias), field("size", size));
    }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
