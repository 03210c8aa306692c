// compress, as ONNX Compress with axis given: the slices along axis where the 1-D bool condition
// is true; a condition shorter than the dim drops the slices past its end. Declared here for typed
// access (lowering); bodies in unique.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct compress {
    std::int64_t axis = 0;
    static constexpr std::string_view name = "compress";
    auto attributes() { return fields(field("axis", axis)); }
    op_traits traits() const { return {.data_dependent = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape&, std::span<const argument> args) const;
};

}  // namespace kiln::ops
