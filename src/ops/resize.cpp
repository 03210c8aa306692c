// resize, as ONNX Resize (opset 19), with the output size given by the attribute out_lens or
// scales (one per dim; given both, out_lens are the lengths and scales the coordinate transform's
// scales, as keep_aspect_ratio_policy makes them) and ONNX's roi as an attribute (tf_crop_and_resize
// only). Each output element is a weighted sum of input elements: nearest takes one, linear and
// cubic are n-linear/n-cubic over every dim. align_corners and pytorch_half_pixel read the spec's
// length_resized as the spec defines it (length_original * scale, fractional when a scale does
// not give a whole length), as ONNX's reference evaluator and its backend data do.
// tf_crop_and_resize, whose output length the spec computes over the crop box (the reference
// does not), keeps the integer output length.
#include "ops/resize.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "ops/common.hpp"

namespace kiln::ops {
namespace {

void check_one_of(const std::string& v, const char* attr, std::initializer_list<std::string_view> allowed) {
    std::string list;
    for (auto a : allowed) {
        if (v == a) return;
        list += (list.empty() ? "" : ", ") + std::string(a);
    }
    fail(attr, "='", v, "'; expected one of ", list);
}

// The cubic convolution kernel of Keys (1981) at distance d, written as ONNX's reference does.
double cubic_weight(double d, double a) {
    d = std::abs(d);
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0;
}

}  // namespace

bool resize::crop() const { return coordinate_transformation_mode == "tf_crop_and_resize"; }

void resize::check_attributes(std::size_t rank) const {
    check_one_of(mode, "mode", {"nearest", "linear", "cubic"});
    check_one_of(coordinate_transformation_mode, "coordinate_transformation_mode",
                 {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                  "tf_crop_and_resize"});
    check_one_of(nearest_mode, "nearest_mode", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
    if (out_lens.empty() && scales.empty()) fail("give out_lens, scales or both");
    if (!out_lens.empty() && out_lens.size() != rank)
        fail("out_lens has ", out_lens.size(), " values; expected ", rank, " (one per dim)");
    if (!scales.empty() && scales.size() != rank)
        fail("scales has ", scales.size(), " values; expected ", rank, " (one per dim)");
    for (std::size_t d = 0; d < rank; ++d) {
        if (!out_lens.empty() && out_lens[d] < 0) fail("out_lens[", d, "]=", out_lens[d], "; expected a size >= 0");
        if (!scales.empty() && !(scales[d] > 0)) fail("scales[", d, "]=", scales[d], "; expected a scale > 0");
    }
    if (crop() && roi.size() != 2 * rank)
        fail("roi has ", roi.size(), " values; tf_crop_and_resize expects ", 2 * rank, " (starts, then ends)");
    if (!crop() && !roi.empty()) fail("roi is given but only tf_crop_and_resize uses it");
}

std::size_t resize::out_len(std::size_t d, std::size_t in) const {
    if (!out_lens.empty()) return static_cast<std::size_t>(out_lens[d]);
    double box = crop() ? roi[d + scales.size()] - roi[d] : 1.0;
    return static_cast<std::size_t>(std::max(std::floor(static_cast<double>(in) * box * scales[d]), 0.0));
}

shape resize::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    check_static(in);
    check_type(in, 0, numeric_type, "a numeric type");
    check_rank(in, 0, 1, true);
    check_attributes(in[0].ndim());
    std::vector<std::size_t> lens;
    for (std::size_t d = 0; d < in[0].ndim(); ++d) {
        lens.push_back(out_len(d, in[0].lens()[d]));
        if (in[0].lens()[d] == 0 && lens.back() > 0) fail("dim ", d, " has size 0; there is nothing to resize");
    }
    return {in[0].type(), lens};
}

double resize::coordinate(std::size_t y, std::size_t d, std::size_t in, std::size_t out) const {
    double scale = scales.empty() ? static_cast<double>(out) / static_cast<double>(in) : scales[d];
    double yd = static_cast<double>(y), ind = static_cast<double>(in), outd = static_cast<double>(out);
    // The spec's length_resized, which it defines through scale = length_resized / length_original:
    // with scales given it is in * scale, fractional when the output length was rounded down.
    double resized = scales.empty() ? outd : ind * scale;
    const std::string& m = coordinate_transformation_mode;
    if (m == "asymmetric") return yd / scale;
    if (m == "align_corners") return resized == 1 ? 0.0 : yd * (ind - 1) / (resized - 1);
    if (m == "pytorch_half_pixel") return resized > 1 ? (yd + 0.5) / scale - 0.5 : 0.0;
    if (m == "half_pixel_symmetric") {
        // Centres the sampled region when the output length was rounded down from in * scale.
        double offset = ind / 2 * (1 - outd / (scale * ind));
        return offset + (yd + 0.5) / scale - 0.5;
    }
    if (crop()) {
        double start = roi[d], end = roi[d + roi.size() / 2];
        if (out == 1) return 0.5 * (start + end) * (ind - 1);
        return yd * (end - start) * (ind - 1) / (outd - 1) + start * (ind - 1);
    }
    return (yd + 0.5) / scale - 0.5;  // half_pixel
}

std::vector<resize::tap> resize::taps_at(double x) const {
    auto i = static_cast<std::int64_t>(std::floor(x));
    double r = x - std::floor(x);
    if (mode == "nearest") {
        bool up = nearest_mode == "round_prefer_floor"  ? r > 0.5
                  : nearest_mode == "round_prefer_ceil" ? r >= 0.5
                  : nearest_mode == "ceil"              ? r > 0
                                                        : false;
        return {{i + (up ? 1 : 0), 1.0}};
    }
    if (mode == "linear") return {{i, 1 - r}, {i + 1, r}};
    double a = cubic_coeff_a;
    return {{i - 1, cubic_weight(r + 1, a)},
            {i, cubic_weight(r, a)},
            {i + 1, cubic_weight(1 - r, a)},
            {i + 2, cubic_weight(2 - r, a)}};
}

std::vector<resize::tap> resize::antialias_taps(double x, double scale) const {
    double support = mode == "linear" ? 1 : 2;  // the kernel's half width at scale 1
    auto n = static_cast<std::int64_t>(2 - 2 * (std::floor(-support / scale) + 1));
    auto i = static_cast<std::int64_t>(std::floor(x));
    std::int64_t first = x == std::floor(x) ? i - n / 2 : i - n / 2 + 1;
    std::vector<tap> taps;
    double sum = 0;
    for (std::int64_t m = first; m < first + n; ++m) {
        double t = (static_cast<double>(m) - x) * scale;
        double w = mode == "linear" ? std::max(0.0, 1 - std::abs(t)) : cubic_weight(t, cubic_coeff_a);
        taps.push_back({m, w});
        sum += w;
    }
    for (auto& t : taps) t.weight /= sum;
    return taps;
}

bool resize::identity(std::size_t d, std::size_t in, std::size_t out) const {
    bool unit_scale = scales.empty() || scales[d] == 1.0f;
    bool whole = !crop() || (roi[d] == 0 && roi[d + roi.size() / 2] == 1);
    return in == out && unit_scale && whole;
}

resize::dim_plan resize::plan(std::size_t d, std::size_t in, std::size_t out) const {
    dim_plan p{std::vector<std::vector<tap>>(out), std::vector<bool>(out, false)};
    auto last = static_cast<std::int64_t>(in) - 1;
    for (std::size_t y = 0; y < out; ++y) {
        if (identity(d, in, out)) {
            p.taps[y] = {{static_cast<std::int64_t>(y), 1.0}};
            continue;
        }
        double x = coordinate(y, d, in, out);
        p.extrapolated[y] = crop() && (x < 0 || x > static_cast<double>(last));
        double scale = scales.empty() ? static_cast<double>(out) / static_cast<double>(in) : scales[d];
        auto taps = antialias && mode != "nearest" && scale < 1 ? antialias_taps(x, scale) : taps_at(x);
        if (exclude_outside) {  // drop taps outside the input and renormalise the rest
            double sum = 0;
            for (auto& t : taps) sum += (t.weight = (t.index < 0 || t.index > last) ? 0.0 : t.weight);
            if (sum != 0)
                for (auto& t : taps) t.weight /= sum;
        }
        for (auto& t : taps) t.index = std::clamp<std::int64_t>(t.index, 0, last);
        p.taps[y] = std::move(taps);
    }
    return p;
}

argument resize::compute(const shape& out, std::span<const argument> args) const {
    const shape& xs = args[0].get_shape();
    std::vector<dim_plan> plans;
    for (std::size_t d = 0; d < xs.ndim(); ++d) plans.push_back(plan(d, xs.lens()[d], out.lens()[d]));
    argument r(out);
    visit_type(xs.type(), [&](auto t) {
        using T = decltype(t);
        T* y = r.as<T>();
        std::size_t k = 0;
        for_each_index(out.lens(), [&](std::span<const std::size_t> o) {
            double v = blend<T>(args[0], plans, o);
            y[k++] = cast<T>(is_float_v<T> ? v : std::nearbyint(v));  // integers round half to even
        });
    });
    return r;
}

template <class T>
double resize::blend(const argument& x, const std::vector<dim_plan>& plans, std::span<const std::size_t> o) const {
    std::vector<std::size_t> counts;
    for (std::size_t d = 0; d < plans.size(); ++d) {
        if (plans[d].extrapolated[o[d]]) return extrapolation_value;
        counts.push_back(plans[d].taps[o[d]].size());
    }
    const shape& xs = x.get_shape();
    std::vector<std::size_t> idx(plans.size());
    double sum = 0;
    for_each_index(counts, [&](std::span<const std::size_t> pick) {
        double w = 1;
        for (std::size_t d = 0; d < plans.size(); ++d) {
            const tap& t = plans[d].taps[o[d]][pick[d]];
            w *= t.weight;
            idx[d] = static_cast<std::size_t>(t.index);
        }
        sum += w * cast<double>(x.as<T>()[xs.index(idx)]);
    });
    return sum;
}
KILN_REGISTER_OP(resize)

}  // namespace kiln::ops
