// resize (body in resize.cpp): ONNX Resize.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/op.hpp"

namespace kiln::ops {

struct resize {
    std::vector<std::int64_t> out_lens;
    std::vector<float> scales;
    std::string mode = "nearest";
    std::string coordinate_transformation_mode = "half_pixel";
    std::string nearest_mode = "round_prefer_floor";
    float cubic_coeff_a = -0.75f;
    bool exclude_outside = false;
    float extrapolation_value = 0.0f;
    std::vector<double> roi;  // starts then ends, one per dim, in fractions of the input
    bool antialias = false;   // linear and cubic downsampling widen the kernel by 1 / scale
    static constexpr std::string_view name = "resize";
    auto attributes() {
        return fields(field("out_lens", out_lens), field("scales", scales), field("mode", mode),
                      field("coordinate_transformation_mode", coordinate_transformation_mode),
                      field("nearest_mode", nearest_mode), field("cubic_coeff_a", cubic_coeff_a),
                      field("exclude_outside", exclude_outside), field("extrapolation_value", extrapolation_value),
                      field("roi", roi), field("antialias", antialias));
    }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;

    // Public for targets that run the same per-dim sampling plan on a device (the gpu's resize).
    struct tap {
        std::int64_t index;  // may fall outside the input; clamped to its edge when read
        double weight;
    };

    // How one dim's output indices sample the input: the taps of each output index, and whether
    // it falls outside the crop box (tf_crop_and_resize), which gives extrapolation_value.
    struct dim_plan {
        std::vector<std::vector<tap>> taps;
        std::vector<bool> extrapolated;
    };
    // Dim d's plan for an input of length `in` resized to `out`.
    dim_plan plan(std::size_t d, std::size_t in, std::size_t out) const;

private:
    bool crop() const;
    void check_attributes(std::size_t rank) const;
    std::size_t out_len(std::size_t d, std::size_t in) const;
    // The input coordinate that output index y maps to along dim d (ONNX's x_original).
    double coordinate(std::size_t y, std::size_t d, std::size_t in, std::size_t out) const;
    // Taps around input coordinate x; at an integer x the element there has weight 1, any others 0.
    std::vector<tap> taps_at(double x) const;
    // Antialiased taps for a downsampling `scale` < 1: the kernel stretched by 1 / scale over the
    // input indices nearest to x (ties to the smaller ones), normalised to sum 1.
    std::vector<tap> antialias_taps(double x, double scale) const;
    // A dim that keeps its length at scale 1 (and the whole crop box) maps each index to itself.
    // ONNX's reference skips such dims, so zero-weight taps never multiply an infinity there.
    bool identity(std::size_t d, std::size_t in, std::size_t out) const;
    // The output element at o: the sum over every combination of one tap per dim of the product
    // of their weights times the input element they address.
    template <class T>
    double blend(const argument& x, const std::vector<dim_plan>& plans, std::span<const std::size_t> o) const;
};

}  // namespace kiln::ops
