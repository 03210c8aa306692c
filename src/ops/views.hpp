// Views and layout ops (bodies in views.cpp): reshape, flatten, transpose, broadcasts, squeeze,
// unsqueeze and slice are views of their input where strides allow; contiguous copies. None reads
// an element's value, so all take string tensors too (trait `strings`).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/op.hpp"

namespace kiln::ops {

// ONNX Reshape: -1 infers one dim from the element count; 0 copies the input's dim at that
// position unless allowzero, where 0 is a real size.
struct reshape {
    std::vector<std::int64_t> dims;
    bool allowzero = false;
    static constexpr std::string_view name = "reshape";
    auto attributes() { return fields(field("dims", dims), field("allowzero", allowzero)); }
    int output_alias(std::span<const shape> in) const;
    op_traits traits() const { return {.strings = true}; }   // moves elements, never reads them
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX Flatten: dims before `axis` become the rows, the rest the columns.
struct flatten {
    std::int64_t axis = 1;
    static constexpr std::string_view name = "flatten";
    auto attributes() { return fields(field("axis", axis)); }
    int output_alias(std::span<const shape> in) const;
    op_traits traits() const { return {.strings = true}; }   // moves elements, never reads them
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX Transpose: output dim i is input dim permutation[i]; an empty permutation reverses the dims.
struct transpose {
    std::vector<std::int64_t> permutation;
    static constexpr std::string_view name = "transpose";
    auto attributes() { return fields(field("permutation", permutation)); }
    op_traits traits() const { return {.output_alias = 0, .strings = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// MIGraphX broadcast: input dims line up with out_lens[axis], out_lens[axis + 1], ...; every other
// output dim (and input dims of size 1) repeat with stride 0.
struct broadcast {
    std::int64_t axis = 0;
    std::vector<std::int64_t> out_lens;
    static constexpr std::string_view name = "broadcast";
    auto attributes() { return fields(field("axis", axis), field("out_lens", out_lens)); }
    op_traits traits() const { return {.output_alias = 0, .broadcast_view = true, .strings = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// numpy broadcast of the input to exactly out_lens (the input's dims align to the right).
struct multibroadcast {
    std::vector<std::int64_t> out_lens;
    static constexpr std::string_view name = "multibroadcast";
    auto attributes() { return fields(field("out_lens", out_lens)); }
    op_traits traits() const { return {.output_alias = 0, .broadcast_view = true, .strings = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX Expand: the output lens are the numpy broadcast of the input's lens and `dims`, so a 1 in
// dims keeps the input's dim.
struct expand {
    std::vector<std::int64_t> dims;
    static constexpr std::string_view name = "expand";
    auto attributes() { return fields(field("dims", dims)); }
    op_traits traits() const { return {.output_alias = 0, .broadcast_view = true, .strings = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX Squeeze: removes the listed dims, which must be 1; no axes removes every dim of size 1.
struct squeeze {
    std::vector<std::int64_t> axes;
    static constexpr std::string_view name = "squeeze";
    auto attributes() { return fields(field("axes", axes)); }
    op_traits traits() const { return {.output_alias = 0, .strings = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX Unsqueeze (opset 13): inserts dims of size 1 at `axes`, counted in the output's rank.
struct unsqueeze {
    std::vector<std::int64_t> axes;
    static constexpr std::string_view name = "unsqueeze";
    auto attributes() { return fields(field("axes", axes)); }
    op_traits traits() const { return {.output_alias = 0, .strings = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// The elements one axis of a slice keeps: start, start + step, ... (len of them).
struct slice_range {
    std::int64_t start = 0;
    std::int64_t step = 1;
    std::size_t len = 0;
};

// ONNX Slice with starts/ends/axes/steps as attributes (no axes: the first dims; no steps: 1).
// Positive steps give a view; negative steps copy, as strides cannot be negative.
struct slice {
    std::vector<std::int64_t> axes;
    std::vector<std::int64_t> starts;
    std::vector<std::int64_t> ends;
    std::vector<std::int64_t> steps;
    static constexpr std::string_view name = "slice";
    auto attributes() {
        return fields(field("axes", axes), field("starts", starts), field("ends", ends), field("steps", steps));
    }
    int output_alias(std::span<const shape> in) const;
    op_traits traits() const { return {.strings = true}; }   // moves elements, never reads them
    static bool forward(const std::vector<slice_range>& rs);
    // One range per input dim; throws on inconsistent attributes.
    std::vector<slice_range> ranges(const shape& x) const;
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// A copy in standard layout.
struct contiguous {
    static constexpr std::string_view name = "contiguous";
    op_traits traits() const { return {.strings = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape&, std::span<const argument> args) const;
};

struct identity {
    static constexpr std::string_view name = "identity";
    op_traits traits() const { return {.output_alias = 0, .strings = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
