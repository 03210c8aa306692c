// deform_conv, as ONNX DeformConv. Declared here for typed access (lowering); the body and its
// rules in deform_conv.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct deform_conv {
    std::vector<std::int64_t> dilations;
    std::int64_t group = 1;
    std::vector<std::int64_t> kernel_shape;
    std::int64_t offset_group = 1;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
    static constexpr std::string_view name = "deform_conv";
    auto attributes() {
        return fields(field("dilations", dilations), field("group", group), field("kernel_shape", kernel_shape),
                      field("offset_group", offset_group), field("pads", pads), field("strides", strides));
    }

    // Attribute v, or n copies of def when it is empty (checked to have n values otherwise).
    static std::vector<std::int64_t> list(const std::vector<std::int64_t>& v, const char* attr, std::size_t n,
                                          std::int64_t def);
    // The kernel lens (checked against W's) and the output's spatial lens.
    std::pair<std::vector<std::size_t>, std::vector<std::size_t>> geometry(const shape& x, const shape& w) const;
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;

private:
    // X[plane] at a fractional position: n-linear over the 2^r corners, zero outside.
    static double interpolate(const double* plane, const std::vector<std::size_t>& lens, const std::vector<double>& p);
    std::vector<double> im2col(std::span<const argument> args, const std::vector<std::size_t>& k,
                               const std::vector<std::size_t>& spatial_out) const;
};

}  // namespace kiln::ops
