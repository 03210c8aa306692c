// Gathers (bodies in gather.cpp): ONNX Gather, GatherElements and GatherND.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/op.hpp"

namespace kiln::ops {

// out[a..., i..., b...] = data[a..., indices[i...], b...] with `a` the dims before axis.
struct gather {
    std::int64_t axis = 0;
    static constexpr std::string_view name = "gather";
    auto attributes() { return fields(field("axis", axis)); }
    op_traits traits() const { return {.strings = true}; }   // moves elements, never reads them
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// out[i][j][k] = data[indices[i][j][k]][j][k] (axis 0); indices and data have the same rank.
struct gather_elements {
    std::int64_t axis = 0;
    static constexpr std::string_view name = "gather_elements";
    auto attributes() { return fields(field("axis", axis)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// The last indices dim (m) holds index tuples into data dims [b, b + m) after b batch dims that
// data and indices share: out[batch..., i..., rest...] = data[batch..., indices[batch..., i..., :], rest...].
struct gathernd {
    std::int64_t batch_dims = 0;
    static constexpr std::string_view name = "gathernd";
    auto attributes() { return fields(field("batch_dims", batch_dims)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
