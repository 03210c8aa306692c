// roi_align, as ONNX RoiAlign: for each region of interest (rois [R, 4] as x1, y1, x2, y2 in
// input coordinates times spatial_scale; batch_indices [R] picks the image of X [N, C, H, W]),
// pools an output_height x output_width grid of bins, each from sampling_ratio^2 bilinear
// samples (0: ceil(bin size) per dim), by average or max. Max takes, per sample, the largest of
// the four weighted corners, as ONNX's reference and ONNX Runtime do. half_pixel shifts the
// region by half a pixel; output_half_pixel (opset 10's behaviour) does not, and makes regions
// at least 1x1. max_roi_pool, as ONNX MaxRoiPool, pools whole-pixel bins instead.
#include "ops/roi_align.hpp"

#include <algorithm>
#include <cmath>

namespace kiln::ops {
namespace {

// The four input positions (within one [n, c] plane) and weights of one bilinear sample.
struct sample {
    std::size_t pos[4] = {0, 0, 0, 0};
    double w[4] = {0, 0, 0, 0};
};

// A sample at (y, x) of an h x w plane; points more than one pixel outside give zero weights.
sample bilinear(double y, double x, std::size_t h, std::size_t w) {
    sample s;
    if (y < -1.0 || y > double(h) || x < -1.0 || x > double(w)) return s;
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    auto y0 = static_cast<std::size_t>(y), x0 = static_cast<std::size_t>(x);
    std::size_t y1 = y0 + 1, x1 = x0 + 1;
    if (y0 >= h - 1) y0 = y1 = h - 1, y = double(y0);
    if (x0 >= w - 1) x0 = x1 = w - 1, x = double(x0);
    double ly = y - double(y0), lx = x - double(x0), hy = 1 - ly, hx = 1 - lx;
    s = {{y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1}, {hy * hx, hy * lx, ly * hx, ly * lx}};
    return s;
}

// The sampling of one roi_align (its attributes).
struct roi_sampler {
    const roi_align& op;
    const std::string& mode = op.mode;
    const std::string& coordinate_transformation_mode = op.coordinate_transformation_mode;
    const std::int64_t output_height = op.output_height;
    const std::int64_t output_width = op.output_width;
    const std::int64_t sampling_ratio = op.sampling_ratio;
    const float spatial_scale = op.spatial_scale;

    // The samples of every bin of one region, bin by bin, and the samples per bin.
    std::pair<std::vector<sample>, std::size_t> samples(const double* roi, std::size_t h, std::size_t w) const {
        bool half = coordinate_transformation_mode == "half_pixel";
        double off = half ? 0.5 : 0.0, scale = spatial_scale;
        double x0 = roi[0] * scale - off, y0 = roi[1] * scale - off;
        double rw = roi[2] * scale - off - x0, rh = roi[3] * scale - off - y0;
        if (!half) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
        double bh = rh / double(output_height), bw = rw / double(output_width);
        // ceil of the bin size, as ONNX Runtime: a region of negative size (x2 < x1) has no samples.
        auto grid = [&](double bin) {
            return std::size_t(sampling_ratio > 0 ? double(sampling_ratio) : bin > 0 ? std::ceil(bin) : 0.0);
        };
        std::size_t gh = grid(bh), gw = grid(bw);
        std::vector<sample> out;
        for (std::int64_t ph = 0; ph < output_height; ++ph)
            for (std::int64_t pw = 0; pw < output_width; ++pw)
                for (std::size_t iy = 0; iy < gh; ++iy)
                    for (std::size_t ix = 0; ix < gw; ++ix)
                        out.push_back(bilinear(y0 + double(ph) * bh + (double(iy) + 0.5) * bh / double(gh),
                                               x0 + double(pw) * bw + (double(ix) + 0.5) * bw / double(gw), h, w));
        return {out, gh * gw};
    }

    // One bin's value from its samples over one plane.
    double pool(const sample* s, std::size_t count, const std::vector<double>& x, std::size_t base) const {
        double acc = 0;
        for (std::size_t k = 0; k < count; ++k) {
            double v[4];
            for (int j = 0; j < 4; ++j) v[j] = s[k].w[j] * x[base + s[k].pos[j]];
            if (mode == "avg")
                acc += v[0] + v[1] + v[2] + v[3];
            else
                acc = std::max(k == 0 ? v[0] : acc, *std::max_element(v, v + 4));
        }
        return mode == "avg" ? acc / double(std::max<std::size_t>(count, 1)) : acc;
    }
};

// The pixel range [begin, end) of bin p of `bins` over a region [start, start + len) of a
// dim of size n.
std::pair<std::int64_t, std::int64_t> bin(std::int64_t p, std::int64_t bins, std::int64_t start, std::int64_t len,
                                          std::int64_t n) {
    double size = double(len) / double(bins);
    auto lo = std::int64_t(std::floor(double(p) * size)) + start;
    auto hi = std::int64_t(std::ceil(double(p + 1) * size)) + start;
    return {std::clamp<std::int64_t>(lo, 0, n), std::clamp<std::int64_t>(hi, 0, n)};
}

}  // namespace

shape roi_align::compute_shape(std::span<const shape> in) const {
    if (mode != "avg" && mode != "max") fail("mode='", mode, "'; expected avg or max");
    if (coordinate_transformation_mode != "half_pixel" && coordinate_transformation_mode != "output_half_pixel")
        fail("coordinate_transformation_mode='", coordinate_transformation_mode,
             "'; expected half_pixel or output_half_pixel");
    if (output_height < 1 || output_width < 1) fail("output_height and output_width must be >= 1");
    if (sampling_ratio < 0) fail("sampling_ratio=", sampling_ratio, "; expected >= 0");
    check_input_count(in, 3);
    check_static(in);
    check_type(in, 0, float_type, "a float type");
    check_type(in, 1, float_type, "a float type");
    check_type(in, 2, integer_type, "an integer type (batch indices)");
    check_rank(in, 0, 4);
    check_rank(in, 1, 2);
    check_rank(in, 2, 1);
    if (in[0].lens()[2] == 0 || in[0].lens()[3] == 0) fail("input 0 has an empty spatial dim; expected H, W >= 1");
    std::size_t r = in[1].lens()[0];
    if (in[1].lens()[1] != 4) fail("rois' last dim is ", in[1].lens()[1], "; expected 4 (x1, y1, x2, y2)");
    if (in[2].lens()[0] != r) fail("batch_indices has ", in[2].lens()[0], " values; expected ", r, " (one per roi)");
    return {in[0].type(),
            std::vector<std::size_t>{r, in[0].lens()[1], std::size_t(output_height), std::size_t(output_width)}};
}

argument roi_align::compute(const shape& out, std::span<const argument> args) const {
    const auto& xl = args[0].get_shape().lens();
    std::size_t batch = xl[0], channels = xl[1], h = xl[2], w = xl[3];
    auto x = to_doubles(args[0]);
    auto rois = to_doubles(args[1]);
    auto idx = to_int64s(args[2]);
    roi_sampler sampler{*this};
    std::size_t bins = std::size_t(output_height * output_width);
    std::vector<double> y(out.elements());
    for (std::size_t n = 0; n < idx.size(); ++n) {
        if (idx[n] < 0 || std::size_t(idx[n]) >= batch)
            fail("batch_indices[", n, "]=", idx[n], " is out of range for a batch of ", batch);
        auto [ss, per_bin] = sampler.samples(&rois[n * 4], h, w);
        for (std::size_t c = 0; c < channels; ++c) {
            std::size_t base = (std::size_t(idx[n]) * channels + c) * h * w;
            for (std::size_t b = 0; b < bins; ++b)
                y[(n * channels + c) * bins + b] = sampler.pool(ss.data() + b * per_bin, per_bin, x, base);
        }
    }
    return from_doubles(out, y);
}
KILN_REGISTER_OP(roi_align)

// max_roi_pool, as ONNX MaxRoiPool (Caffe's ROI pooling): rois [R, 5] as (batch index, x1, y1,
// x2, y2); each region, its corners scaled by spatial_scale and rounded (half away from zero),
// splits into pooled_shape bins of whole pixels whose maximum is taken (0 for an empty bin).
shape max_roi_pool::compute_shape(std::span<const shape> in) const {
    if (pooled_shape.size() != 2 || pooled_shape[0] < 1 || pooled_shape[1] < 1)
        fail("pooled_shape has ", pooled_shape.size(), " values; expected two sizes >= 1 (height, width)");
    check_input_count(in, 2);
    check_static(in);
    check_same_type(in);
    check_type(in, 0, float_type, "a float type");
    check_rank(in, 0, 4);
    check_rank(in, 1, 2);
    if (in[1].lens()[1] != 5) fail("rois' last dim is ", in[1].lens()[1], "; expected 5 (batch, x1, y1, x2, y2)");
    return {in[0].type(), std::vector<std::size_t>{in[1].lens()[0], in[0].lens()[1], std::size_t(pooled_shape[0]),
                                                   std::size_t(pooled_shape[1])}};
}

argument max_roi_pool::compute(const shape& out, std::span<const argument> args) const {
    const auto& xl = args[0].get_shape().lens();
    auto batch = std::int64_t(xl[0]), h = std::int64_t(xl[2]), w = std::int64_t(xl[3]);
    std::size_t channels = xl[1];
    auto x = to_doubles(args[0]);
    auto rois = to_doubles(args[1]);
    std::vector<double> y(out.elements());
    std::size_t k = 0;
    for (std::size_t n = 0; n < out.lens()[0]; ++n) {
        const double* roi = &rois[n * 5];
        auto b = std::int64_t(roi[0]);
        if (b < 0 || b >= batch) fail("roi ", n, " has batch index ", roi[0], "; the batch has ", batch);
        auto at = [&](int i) { return std::int64_t(std::round(roi[i] * spatial_scale)); };
        std::int64_t x1 = at(1), y1 = at(2), rw = std::max<std::int64_t>(at(3) - x1 + 1, 1);
        std::int64_t rh = std::max<std::int64_t>(at(4) - y1 + 1, 1);
        for (std::size_t c = 0; c < channels; ++c) {
            const double* plane = &x[(std::size_t(b) * channels + c) * std::size_t(h * w)];
            for (std::int64_t ph = 0; ph < pooled_shape[0]; ++ph)
                for (std::int64_t pw = 0; pw < pooled_shape[1]; ++pw) {
                    auto [h0, h1] = bin(ph, pooled_shape[0], y1, rh, h);
                    auto [w0, w1] = bin(pw, pooled_shape[1], x1, rw, w);
                    double m = h0 < h1 && w0 < w1 ? -INFINITY : 0;
                    for (std::int64_t i = h0; i < h1; ++i)
                        for (std::int64_t j = w0; j < w1; ++j) m = std::max(m, plane[i * w + j]);
                    y[k++] = m;
                }
        }
    }
    return from_doubles(out, y);
}
KILN_REGISTER_OP(max_roi_pool)

}  // namespace kiln::ops
