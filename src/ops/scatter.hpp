// Scatters, as ONNX ScatterElements and ScatterND (bodies in scatter.cpp): the output is a copy
// of data with the elements that indices address replaced by (or combined by `reduction` with)
// updates. Updates are applied in row-major order, so with reduction none the last duplicate wins.
#pragma once
#include <cstdint>
#include <string>

#include "core/op.hpp"

namespace kiln::ops {

// out[indices[i][j]][j] = updates[i][j] (axis 0); indices and updates have data's rank and the
// same lens, which off the axis must not exceed data's.
struct scatter_elements {
    std::int64_t axis = 0;
    std::string reduction = "none";
    static constexpr std::string_view name = "scatter_elements";
    auto attributes() { return fields(field("axis", axis), field("reduction", reduction)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// The last indices dim (k) holds index tuples into data's first k dims; updates has lens
// indices.lens[:-1] + data.lens[k:]: out[indices[i..., :], rest...] = updates[i..., rest...].
struct scatternd {
    std::string reduction = "none";
    static constexpr std::string_view name = "scatternd";
    auto attributes() { return fields(field("reduction", reduction)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
