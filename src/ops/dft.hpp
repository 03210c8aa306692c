// dft, as ONNX DFT (opset 20 with axis and dft_length as attributes). Declared here for typed
// access (lowering); the body and its rules in dft.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct dft {
    std::int64_t axis = -2;
    bool inverse = false;
    bool onesided = false;
    std::int64_t length = 0;
    static constexpr std::string_view name = "dft";
    op_traits traits() const { return {.precision_sensitive = true}; }
    auto attributes() {
        return fields(field("axis", axis), field("inverse", inverse), field("onesided", onesided),
                      field("length", length));
    }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;

    // The signal dim of an input of `rank` dims (not the last, which holds real and imaginary).
    std::size_t signal_axis(std::size_t rank) const;
    // The transform size n for a signal of `len` values along the axis.
    std::size_t size(std::size_t len) const;
    // How many input values along the axis the transform reads: an inverse one-sided transform
    // reads bins [0, n / 2] only (numpy's irfft).
    std::size_t used(std::size_t len) const;
};

}  // namespace kiln::ops
