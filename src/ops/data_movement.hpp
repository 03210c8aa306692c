// Data movement that copies (bodies in data_movement.cpp): concat, split, tuple elements, tile,
// reverse, trilu, pad, depth/space rearrangements.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/op.hpp"

namespace kiln::ops {

// ONNX Concat: inputs agree on every dim but `axis`, along which they are joined in order.
struct concat {
    std::int64_t axis = 0;
    static constexpr std::string_view name = "concat";
    auto attributes() { return fields(field("axis", axis)); }
    op_traits traits() const { return {.strings = true}; }   // moves elements, never reads them
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX Split: pieces of `sizes` along axis, or num_outputs pieces of ceil(dim / num_outputs) with
// a smaller last one. The output is a tuple of views of the input.
struct split {
    std::int64_t axis = 0;
    std::vector<std::int64_t> sizes;
    std::int64_t num_outputs = 0;
    static constexpr std::string_view name = "split";
    auto attributes() { return fields(field("axis", axis), field("sizes", sizes), field("num_outputs", num_outputs)); }
    op_traits traits() const { return {.output_alias = 0}; }
    std::vector<std::size_t> piece_lens(std::size_t dim) const;
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// Element `index` of a tuple (the result of a multi-output op such as split).
struct get_tuple_elem {
    std::int64_t index = 0;
    static constexpr std::string_view name = "get_tuple_elem";
    auto attributes() { return fields(field("index", index)); }
    op_traits traits() const { return {.output_alias = 0, .strings = true}; }   // string_split's outputs
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape&, std::span<const argument> args) const;
};

// ONNX Tile: the input repeated repeats[d] times along each dim d.
struct tile {
    std::vector<std::int64_t> repeats;
    static constexpr std::string_view name = "tile";
    auto attributes() { return fields(field("repeats", repeats)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// Reverses the order of elements along each of `axes`.
struct reverse {
    std::vector<std::int64_t> axes;
    static constexpr std::string_view name = "reverse";
    auto attributes() { return fields(field("axes", axes)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims and
// zeroes the rest.
struct trilu {
    bool upper = true;
    std::int64_t k = 0;
    static constexpr std::string_view name = "trilu";
    auto attributes() { return fields(field("upper", upper), field("k", k)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX Pad: pads lists every dim's begin pad, then every dim's end pad. Negative pads crop first
// (as ONNX Runtime does), then `mode` fills the added elements: constant `value`, edge (nearest
// element), reflect (mirror without the edge, as numpy) or wrap (periodic).
struct pad {
    std::vector<std::int64_t> pads;
    std::string mode = "constant";
    double value = 0;
    static constexpr std::string_view name = "pad";
    auto attributes() { return fields(field("pads", pads), field("mode", mode), field("value", value)); }
    // Per dim: elements cropped at the start, elements kept, elements added before them.
    struct dim_plan {
        std::size_t crop, kept, before, out;
    };
    std::vector<dim_plan> plan(const shape& x) const;
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
    static void fill(const argument& r, double v);
};

// ONNX DepthToSpace: moves blocks of channels into blocksize x blocksize spatial blocks. DCR
// takes the block offset from the channel's high part, CRD from its low part.
struct depth_to_space {
    std::int64_t blocksize = 1;
    std::string mode = "DCR";
    static constexpr std::string_view name = "depth_to_space";
    auto attributes() { return fields(field("blocksize", blocksize), field("mode", mode)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX SpaceToDepth: the inverse of depth_to_space in DCR mode.
struct space_to_depth {
    std::int64_t blocksize = 1;
    static constexpr std::string_view name = "space_to_depth";
    auto attributes() { return fields(field("blocksize", blocksize)); }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
