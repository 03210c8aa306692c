// fold_batch_norm: batch_norm_inference with literal parameters after a convolution, gemm or dot
// with literal weights (or after such an op plus a constant bias, as the ONNX frontend emits Conv
// with B) becomes a per-channel scale and shift, y * f + (bias - mean * f) with
// f = scale / sqrt(var + epsilon), and the scale folds into the weights: the batch norm costs
// nothing at run time. The shift stays an add on a constant (gemm takes it as its C). Results
// agree within float rounding (f and the scaled weights are rounded to the weights' type).
// A batch norm on anything else is left alone.
#pragma once
#include <string_view>

#include "core/module.hpp"

namespace kiln {

struct fold_batch_norm {
    static constexpr std::string_view name = "fold_batch_norm";
    void apply(module& m) const;
};

}  // namespace kiln
