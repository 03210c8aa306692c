// Linear quantization: quantizelinear and dequantizelinear (ONNX QuantizeLinear and
// DequantizeLinear). Inputs x, scale and an optional zero point of the scale's shape. The scale
// is one value (a scalar or a single element: per tensor), a 1-D tensor of x's length along
// `axis` (per axis), or, with block_size > 0, a tensor of x's rank whose `axis` dim is
// ceil(x_len / block_size) (blocked: each scale covers block_size consecutive elements there).
// `axis` is only checked when a scale depends on it.
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "ops/quantize.hpp"

namespace kiln::ops {

scale_map check_scales(std::span<const shape> in, std::int64_t axis, std::int64_t block_size) {
    check_input_count(in, 2, 3);
    check_static(in);
    check_type(in, 1, float_type, "a float type");
    const shape& x = in[0];
    const shape& s = in[1];
    if (in.size() == 3 && in[2].lens() != s.lens() && !(in[2].elements() == 1 && s.elements() == 1))
        fail("input 2 (zero point) has lens ", lens_to_string(in[2].lens()), "; expected ", lens_to_string(s.lens()),
             " like input 1 (scale)");
    if (block_size < 0) fail("block_size=", block_size, "; expected >= 0");
    scale_map m;
    if (block_size == 0) {
        if (s.ndim() > 1)
            fail("input 1 (scale) has ", s.ndim(), " dims; expected a scalar or 1-D (per axis) when block_size=0");
        if (s.elements() == 1) return m;
        m.kind = scale_map::per_axis;
        m.axis = normalize_axis(axis, x.ndim());
        if (s.lens()[0] != x.lens()[m.axis])
            fail("input 1 (scale) has ", s.lens()[0], " values; expected ", x.lens()[m.axis], " (input 0's dim ",
                 m.axis, ")");
        return m;
    }
    m.kind = scale_map::blocked;
    m.axis = normalize_axis(axis, x.ndim());
    m.block = static_cast<std::size_t>(block_size);
    if (s.ndim() != x.ndim())
        fail("input 1 (scale) has ", s.ndim(), " dims; expected ", x.ndim(),
             " like input 0 for block_size=", block_size);
    for (std::size_t d = 0; d < x.ndim(); ++d) {
        std::size_t want = d == m.axis ? (x.lens()[d] + m.block - 1) / m.block : x.lens()[d];
        if (s.lens()[d] != want)
            fail("input 1 (scale) has lens ", lens_to_string(s.lens()), "; expected ", want, " in dim ", d,
                 d == m.axis ? cat(" (ceil of input 0's ", x.lens()[d], " / block_size=", block_size, ")")
                             : std::string(" like input 0"));
    }
    return m;
}

namespace {

// v rounded to T's precision (and range), as a double.
template <class T>
double to_precision(double v) {
    return cast<double>(cast<T>(v));
}
using rounding = double (*)(double);
rounding rounding_of(dtype t) {
    return visit_type(t, [](auto v) -> rounding { return &to_precision<decltype(v)>; });
}

// Calls f(i, xi) for every element of x in row-major order: i its linear index, xi its multi-index.
template <class F>
void for_each_element(const shape& x, F&& f) {
    std::size_t i = 0;
    for_each_index(x.lens(), [&](std::span<const std::size_t> xi) { f(i++, xi); });
}

}  // namespace

// y = saturate(round(x / scale) + zero_point): round half to even, then clamp to the target
// type's range. The division happens in the scale's type (x is first rounded to it), as ONNX
// specifies; ONNX's `precision` attribute is a conversion of both before this op. A NaN quotient
// gives the zero point (as CUDA's float-to-int conversion gives 0). fp8 targets take
// x / scale + zero_point rounded to nearest even; `saturate` (default) clamps values past the
// largest finite value (and +-Inf) to it, otherwise they become Inf (e5m2) or NaN (the others).
// fp4e2m1 targets round the same way and always saturate.
shape quantizelinear::compute_shape(std::span<const shape> in) const {
    check_scales(in, axis, block_size);
    check_type(in, 0, numeric_type, "a numeric type");
    if (!range_of(target_type) && !is_float_target(target_type))
        fail("target_type=", dtype_name(target_type),
             "; expected int8, uint8, int16, uint16, int4, uint4, int2, uint2, an fp8 type or fp4e2m1");
    if (in.size() == 3 && in[2].type() != target_type)
        fail("input 2 (zero point) is ", dtype_name(in[2].type()),
             "; expected target_type=", dtype_name(target_type));
    return {target_type, in[0].lens()};
}

argument quantizelinear::compute(const shape& out, std::span<const argument> args) const {
    std::vector<shape> shapes;
    for (const auto& a : args) shapes.push_back(a.get_shape());
    scale_map m = check_scales(shapes, axis, block_size);
    const shape& ss = shapes[1];
    std::vector<double> x = to_doubles(args[0]), s = to_doubles(args[1]);
    std::vector<double> zp = args.size() == 3 ? to_doubles(args[2]) : std::vector<double>(s.size(), 0.0);
    rounding in_scale_type = rounding_of(ss.type());
    auto range = range_of(target_type);
    std::vector<double> y(x.size());
    for_each_element(out, [&](std::size_t i, std::span<const std::size_t> xi) {
        std::size_t k = m.index(ss, xi);
        double q = in_scale_type(in_scale_type(x[i]) / s[k]);
        if (!range) {
            y[i] = q + zp[k];
        } else {
            double v = std::isnan(q) ? zp[k] : std::nearbyint(q) + zp[k];
            y[i] = std::clamp(v, range->first, range->second);
        }
    });
    return store(out, y);
}

bool quantizelinear::is_float_target(dtype t) {
    return t == dtype::fp8e4m3fn || t == dtype::fp8e5m2 || t == dtype::fp8e4m3fnuz || t == dtype::fp8e5m2fnuz ||
           t == dtype::fp4e2m1;
}

std::optional<std::pair<double, double>> quantizelinear::range_of(dtype t) {
    switch (t) {
        case dtype::int8:
            return std::pair{-128.0, 127.0};
        case dtype::uint8:
            return std::pair{0.0, 255.0};
        case dtype::int16:
            return std::pair{-32768.0, 32767.0};
        case dtype::uint16:
            return std::pair{0.0, 65535.0};
        case dtype::int4:
            return std::pair{-8.0, 7.0};
        case dtype::uint4:
            return std::pair{0.0, 15.0};
        case dtype::int2:
            return std::pair{-2.0, 1.0};
        case dtype::uint2:
            return std::pair{0.0, 3.0};
        default:
            return std::nullopt;
    }
}

// The values written to out's type; they are already in range except for the float targets.
// An fp4e2m1 target arrives widened to float32 (the interpreter packs it afterwards), so its
// values are rounded to fp4 here; fp4e2m1 always saturates.
argument quantizelinear::store(const shape& out, const std::vector<double>& y) const {
    argument r(out);
    visit_type(out.type(), [&](auto t) {
        using T = decltype(t);
        T* p = r.as<T>();
        for (std::size_t i = 0; i < y.size(); ++i) {
            if constexpr (std::is_same_v<T, fp8e4m3fn> || std::is_same_v<T, fp8e5m2> ||
                          std::is_same_v<T, fp8e4m3fnuz> || std::is_same_v<T, fp8e5m2fnuz>)
                p[i] = T(y[i], saturate);
            else if (target_type == dtype::fp4e2m1)
                p[i] = cast<T>(fp4e2m1_from_nibble(fp4e2m1_to_nibble(y[i])));
            else
                p[i] = cast<T>(y[i]);
        }
    });
    return r;
}
KILN_REGISTER_OP(quantizelinear)

// y = (x - zero_point) * scale, in the scale's type, which is the output type: x - zero_point
// (exact) is rounded to it and the product rounded once. ONNX's output_dtype is a conversion of
// the scale before this op.
shape dequantizelinear::compute_shape(std::span<const shape> in) const {
    check_scales(in, axis, block_size);
    dtype t = in[0].type();
    if (!is_integral(t) && !quantizelinear::is_float_target(t))
        fail("input 0 is ", dtype_name(t), "; expected an integer, fp8 or fp4e2m1 type");
    if (in.size() == 3 && in[2].type() != t)
        fail("input 2 (zero point) is ", dtype_name(in[2].type()), "; expected ", dtype_name(t), " like input 0");
    return {in[1].type(), in[0].lens()};
}

argument dequantizelinear::compute(const shape& out, std::span<const argument> args) const {
    std::vector<shape> shapes;
    for (const auto& a : args) shapes.push_back(a.get_shape());
    scale_map m = check_scales(shapes, axis, block_size);
    std::vector<double> x = to_doubles(args[0]), s = to_doubles(args[1]);
    std::vector<double> zp = args.size() == 3 ? to_doubles(args[2]) : std::vector<double>(s.size(), 0.0);
    rounding in_out_type = rounding_of(out.type());
    std::vector<double> y(x.size());
    for_each_element(out, [&](std::size_t i, std::span<const std::size_t> xi) {
        std::size_t k = m.index(shapes[1], xi);
        y[i] = in_out_type(x[i] - zp[k]) * s[k];
    });
    return from_doubles(out, y);
}
KILN_REGISTER_OP(dequantizelinear)

}  // namespace kiln::ops
