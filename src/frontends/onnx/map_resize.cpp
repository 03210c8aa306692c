// ONNX Resize and Upsample onto kiln's resize, which takes the output size (out_lens or scales,
// one per dim) and roi as attributes: scales, sizes and roi must be constants. Resize 18's axes
// and keep_aspect_ratio_policy are resolved here into per-dim values.
#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/nn_common.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

// The kiln resize attributes that the ONNX inputs decide.
struct resize_size {
    std::vector<std::int64_t> out_lens;
    std::vector<float> scales;
    std::vector<double> roi;
};

// An input given as an empty tensor (how opset 11 leaves out roi or scales) counts as absent.
bool given(context& ctx, const inputs_t& in, std::size_t i) {
    if (!present(ctx, in, i)) return false;
    const shape& s = in[i]->get_shape();
    return s.dynamic() || s.elements() > 0;
}

// The dims that scales, sizes and roi list: Resize 18's axes (negative ones count from the
// rank), else every dim in order.
std::vector<std::size_t> resized_axes(const node_info& n, std::size_t rank) {
    auto r = static_cast<std::int64_t>(rank);
    std::vector<std::size_t> axes;
    std::set<std::int64_t> seen;
    for (auto a : n.attr_ints("axes")) {
        if (a < -r || a >= r) fail("axes has ", a, "; expected a dim in [", -r, ", ", r - 1, "]");
        if (!seen.insert(a < 0 ? a + r : a).second) fail("axes lists dim ", a, " twice");
        axes.push_back(static_cast<std::size_t>(a < 0 ? a + r : a));
    }
    if (!n.has_attr("axes"))
        for (std::size_t d = 0; d < rank; ++d) axes.push_back(d);
    return axes;
}

// Values given for `axes` spread over every dim; the others keep `fill`.
template <class T>
std::vector<T> spread(const std::vector<T>& v, const std::vector<std::size_t>& axes, std::vector<T> fill,
                      const char* what) {
    if (v.size() != axes.size())
        fail(what, " has ", v.size(), " values; expected ", axes.size(), " (one per resized dim)");
    for (std::size_t i = 0; i < axes.size(); ++i) fill[axes[i]] = v[i];
    return fill;
}

// keep_aspect_ratio_policy not_larger/not_smaller: one scale for every resized dim (the least or
// greatest of sizes / input), output lengths rounded half up from it. kiln's resize takes the
// lengths, and the scale for the coordinate transform where the lengths alone do not give it.
void keep_aspect_ratio(const std::string& policy, const std::vector<std::size_t>& lens,
                       const std::vector<std::size_t>& axes, resize_size& r) {
    double scale = policy == "not_larger" ? INFINITY : 0;
    for (auto d : axes) {
        double s = static_cast<double>(r.out_lens[d]) / static_cast<double>(lens[d]);
        scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
    }
    bool lens_exact = true;
    for (auto d : axes) {
        auto in = static_cast<double>(lens[d]);
        r.out_lens[d] = static_cast<std::int64_t>(scale * in + 0.5);
        lens_exact = lens_exact && static_cast<double>(r.out_lens[d]) / in == scale;
    }
    if (lens_exact) return;
    r.scales.assign(lens.size(), 1.0f);
    for (auto d : axes) r.scales[d] = static_cast<float>(scale);
}

// scales (input 2) or sizes (input 3), and roi (input 1) when the mode crops, of Resize 11+.
resize_size read_size(const node_info& n, context& ctx, const inputs_t& in, const std::string& coord) {
    const shape& x = in.at(0)->get_shape();
    if (x.dynamic()) fail("input 0 has a dynamic shape ", to_string(x), "; kiln's resize needs its dims");
    auto axes = resized_axes(n, x.ndim());
    bool has_scales = given(ctx, in, 2), has_sizes = given(ctx, in, 3);
    if (has_scales == has_sizes) fail("give exactly one of input 2 (scales) and input 3 (sizes)");
    resize_size r;
    if (has_scales) {
        auto s = ctx.constant_doubles(in[2], "input 2 (scales)");
        r.scales = spread(std::vector<float>(s.begin(), s.end()), axes, std::vector<float>(x.ndim(), 1.0f), "scales");
    } else {
        std::vector<std::int64_t> lens(x.lens().begin(), x.lens().end());
        r.out_lens = spread(ctx.constant_ints(in[3], "input 3 (sizes)"), axes, lens, "sizes");
        std::string policy = n.attr_string("keep_aspect_ratio_policy", "stretch");
        if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
            fail("keep_aspect_ratio_policy '", policy, "' is not one of stretch, not_larger, not_smaller");
        if (policy != "stretch") keep_aspect_ratio(policy, x.lens(), axes, r);
    }
    if (coord == "tf_crop_and_resize") {
        if (!given(ctx, in, 1)) fail("coordinate_transformation_mode tf_crop_and_resize needs input 1 (roi)");
        auto roi = ctx.constant_doubles(in[1], "input 1 (roi)");
        if (roi.size() != 2 * axes.size())
            fail("input 1 (roi) has ", roi.size(), " values; expected ", 2 * axes.size(), " (starts, then ends)");
        std::size_t k = axes.size();
        auto starts = spread(std::vector<double>(roi.begin(), roi.begin() + static_cast<std::ptrdiff_t>(k)), axes,
                             std::vector<double>(x.ndim(), 0.0), "roi starts");
        auto ends = spread(std::vector<double>(roi.begin() + static_cast<std::ptrdiff_t>(k), roi.end()), axes,
                           std::vector<double>(x.ndim(), 1.0), "roi ends");
        r.roi = starts;
        r.roi.insert(r.roi.end(), ends.begin(), ends.end());
    }
    return r;
}

instruction_ref add_resize(context& ctx, instruction_ref x, const resize_size& r, value attrs) {
    if (!r.out_lens.empty()) attrs.set("out_lens", to_value(r.out_lens));
    if (!r.scales.empty()) attrs.set("scales", to_value(r.scales));
    if (!r.roi.empty()) attrs.set("roi", to_value(r.roi));
    return ctx.add("resize", attrs, {x});
}

// Resize 11 on. tf_half_pixel_for_nn (opset 11 and 12) samples at (y + 0.5) / scale, half a
// pixel right of half_pixel; with nearest_mode floor that is half_pixel with round_prefer_ceil.
inputs_t resize_11(const node_info& n, context& ctx, const inputs_t& in) {
    std::string mode = n.attr_string("mode", "nearest");
    bool antialias = n.attr_int("antialias", 0) != 0;
    if (antialias && mode == "nearest") fail("antialias=1 applies to modes linear and cubic, not nearest");
    std::string coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
    std::string nearest = n.attr_string("nearest_mode", "round_prefer_floor");
    if (coord == "tf_half_pixel_for_nn") {
        if (mode != "nearest" || nearest != "floor")
            fail("tf_half_pixel_for_nn is supported with mode nearest and nearest_mode floor only; got mode ", mode,
                 ", nearest_mode ", nearest);
        coord = "half_pixel";
        nearest = "round_prefer_ceil";
    }
    value attrs{{"mode", mode},
                {"coordinate_transformation_mode", coord},
                {"nearest_mode", nearest},
                {"cubic_coeff_a", n.attr_float("cubic_coeff_a", -0.75f)},
                {"exclude_outside", n.attr_int("exclude_outside", 0) != 0},
                {"extrapolation_value", n.attr_float("extrapolation_value", 0.0f)}};
    if (antialias) attrs.set("antialias", true);
    return {add_resize(ctx, in.at(0), read_size(n, ctx, in, coord), std::move(attrs))};
}
KILN_ONNX_OP("", "Resize", 11, resize_11)

// Resize 10 and Upsample predate coordinate_transformation_mode: they sample at y / scale, and
// nearest takes the element below (as ONNX's version converter maps them to Resize 11).
instruction_ref resize_asymmetric(const node_info& n, context& ctx, instruction_ref x, std::vector<float> scales) {
    std::string mode = n.attr_string("mode", "nearest");
    if (mode != "nearest" && mode != "linear") fail("mode '", mode, "' is not one of nearest, linear");
    value attrs{{"mode", mode}, {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}};
    return add_resize(ctx, x, {.out_lens = {}, .scales = std::move(scales), .roi = {}}, std::move(attrs));
}

std::vector<float> constant_scales(context& ctx, instruction_ref s) {
    auto v = ctx.constant_doubles(s, "input 1 (scales)");
    return {v.begin(), v.end()};
}

KILN_ONNX_OP("", "Resize", 10, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {resize_asymmetric(n, ctx, in.at(0), constant_scales(ctx, in.at(1)))};
})
KILN_ONNX_OP("", "Upsample", 7, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    if (!n.has_attr("scales")) fail("required attribute 'scales' is missing");
    return {resize_asymmetric(n, ctx, in.at(0), n.attr_floats("scales"))};
})
KILN_ONNX_OP("", "Upsample", 9, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {resize_asymmetric(n, ctx, in.at(0), constant_scales(ctx, in.at(1)))};
})

}  // namespace
}  // namespace kiln::onnx_fe
