// Normalizations with ONNX semantics. Each works on row-major double copies of its inputs
// (statistics in double, which covers ONNX's stash_type=float32) and rounds once to x's type.
// Variances are population variances (divided by the group size).
#include "ops/normalization.hpp"

#include <cmath>

#include "ops/reduce_util.hpp"

namespace kiln::ops {
namespace {

struct moments {
    double mean = 0;
    double var = 0;
};

moments moments_of(std::span<const double> x) {
    moments m;
    for (double v : x) m.mean += v;
    m.mean /= static_cast<double>(x.size());
    for (double v : x) m.var += (v - m.mean) * (v - m.mean);
    m.var /= static_cast<double>(x.size());
    return m;
}

// Row-major values of `a` broadcast to `lens` (its lens already checked to broadcast).
std::vector<double> broadcast_values(const argument& a, std::span<const std::size_t> lens) {
    return to_doubles(a.view(broadcast_to(a.get_shape(), lens)));
}

bool any_dynamic(std::span<const shape> in) {
    for (const auto& s : in)
        if (s.dynamic()) return true;
    return false;
}

// Throws unless input i is 1-d with one value per channel (dim 1 of input 0).
void check_per_channel(std::span<const shape> in, std::size_t i, const char* what) {
    std::size_t c = in[0].lens()[1];
    if (in[i].lens() != std::vector<std::size_t>{c})
        fail("input ", i, " (", what, ") has lens ", lens_to_string(in[i].lens()), "; expected {", c,
             "}, one value per channel of input 0 ", lens_to_string(in[0].lens()));
}

// Shape checks shared by the ops whose parameters hold one value per channel: input 0 is
// N x C x ..., the others are {C}. Returns the output shape (that of input 0).
shape per_channel_shape(std::span<const shape> in, std::span<const char* const> names) {
    check_input_count(in, names.size() + 1);
    for (std::size_t i = 0; i < in.size(); ++i) check_type(in, i, float_type, "a float type");
    check_rank(in, 0, 2, true);
    if (!any_dynamic(in))
        for (std::size_t i = 1; i < in.size(); ++i) check_per_channel(in, i, names[i - 1]);
    return {in[0].type(), in[0].dims()};
}

// Product of lens from dim `first` on: the elements of one channel of one batch item when first = 2.
std::size_t inner_elements(std::span<const std::size_t> lens, std::size_t first) {
    return elements_of(lens.subspan(first));
}

// Throws unless input i has the type of input j (i, j > 0, named by names[i - 1] and names[j - 1]).
void check_pair_type(std::span<const shape> in, std::size_t i, std::size_t j, std::span<const char* const> names) {
    if (in[i].type() != in[j].type())
        fail("input ", i, " (", names[i - 1], ") is ", dtype_name(in[i].type()), " but input ", j, " (",
             names[j - 1], ") is ", dtype_name(in[j].type()), "; they must have the same type");
}

}  // namespace

shape batch_norm_inference::compute_shape(std::span<const shape> in) const {
    static constexpr const char* names[] = {"scale", "bias", "mean", "var"};
    shape out = per_channel_shape(in, names);
    // ONNX lets scale/bias and mean/var have their own float types.
    check_pair_type(in, 2, 1, names);
    check_pair_type(in, 4, 3, names);
    return out;
}

argument batch_norm_inference::compute(const shape& out, std::span<const argument> args) const {
    auto x = to_doubles(args[0]);
    auto scale = to_doubles(args[1]), bias = to_doubles(args[2]);
    auto mean = to_doubles(args[3]), var = to_doubles(args[4]);
    std::size_t channels = out.lens()[1], inner = inner_elements(out.lens(), 2);
    for (std::size_t i = 0; i < x.size(); ++i) {
        std::size_t c = i / inner % channels;
        x[i] = (x[i] - mean[c]) / std::sqrt(var[c] + epsilon) * scale[c] + bias[c];
    }
    return from_doubles(out, x);
}
KILN_REGISTER_OP(batch_norm_inference)

namespace {

// Standardizes x in place in consecutive groups of `group` elements, then applies the
// per-channel scale and bias; channel c covers `inner` consecutive elements.
void standardize_groups(std::vector<double>& x, std::size_t group, std::size_t inner, std::span<const double> scale,
                        std::span<const double> bias, double epsilon) {
    for (std::size_t first = 0; first < x.size(); first += group) {
        std::span<double> g(x.data() + first, group);
        moments m = moments_of(g);
        double inv = 1 / std::sqrt(m.var + epsilon);
        for (std::size_t j = 0; j < group; ++j) {
            std::size_t c = (first + j) / inner % scale.size();
            g[j] = (g[j] - m.mean) * inv * scale[c] + bias[c];
        }
    }
}

}  // namespace

shape instancenorm::compute_shape(std::span<const shape> in) const {
    static constexpr const char* names[] = {"scale", "bias"};
    shape out = per_channel_shape(in, names);
    check_same_type(in);
    return out;
}

argument instancenorm::compute(const shape& out, std::span<const argument> args) const {
    auto x = to_doubles(args[0]);
    std::size_t inner = inner_elements(out.lens(), 2);
    if (inner > 0) standardize_groups(x, inner, inner, to_doubles(args[1]), to_doubles(args[2]), epsilon);
    return from_doubles(out, x);
}
KILN_REGISTER_OP(instancenorm)

shape group_norm::compute_shape(std::span<const shape> in) const {
    static constexpr const char* names[] = {"scale", "bias"};
    shape out = per_channel_shape(in, names);
    check_same_type(in);
    auto channel = in[0].dims()[1];
    if (num_groups <= 0 || (channel.is_fixed() && channel.min % static_cast<std::size_t>(num_groups) != 0))
        fail("num_groups=", num_groups, " does not divide the ", to_string(channel), " channels of input 0");
    return out;
}

argument group_norm::compute(const shape& out, std::span<const argument> args) const {
    auto x = to_doubles(args[0]);
    std::size_t inner = inner_elements(out.lens(), 2);
    std::size_t group = out.lens()[1] / static_cast<std::size_t>(num_groups) * inner;
    if (group > 0) standardize_groups(x, group, inner, to_doubles(args[1]), to_doubles(args[2]), epsilon);
    return from_doubles(out, x);
}
KILN_REGISTER_OP(group_norm)

namespace {

// Shape checks of layernorm and rms_norm: input 0 is x, the others broadcast (one way) to it.
shape normalized_shape(std::span<const shape> in, std::span<const char* const> names, std::int64_t axis) {
    for (std::size_t i = 0; i < in.size(); ++i) check_type(in, i, float_type, "a float type");
    check_same_type(in);
    normalize_axis(axis, in[0].ndim());
    if (!any_dynamic(in))
        for (std::size_t i = 1; i < in.size(); ++i) check_broadcasts_to(in, i, in[0].lens(), names[i - 1]);
    return {in[0].type(), in[0].dims()};
}

}  // namespace

shape layernorm::compute_shape(std::span<const shape> in) const {
    static constexpr const char* names[] = {"scale", "bias"};
    check_input_count(in, 2, 3);
    return normalized_shape(in, names, axis);
}

argument layernorm::compute(const shape& out, std::span<const argument> args) const {
    auto x = to_doubles(args[0]);
    auto scale = broadcast_values(args[1], out.lens());
    auto bias = args.size() > 2 ? broadcast_values(args[2], out.lens()) : std::vector<double>(x.size(), 0.0);
    std::size_t row = inner_elements(out.lens(), normalize_axis(axis, out.ndim()));
    for (std::size_t first = 0; row > 0 && first < x.size(); first += row) {
        moments m = moments_of(std::span<const double>(x.data() + first, row));
        double inv = 1 / std::sqrt(m.var + epsilon);
        for (std::size_t i = first; i < first + row; ++i) x[i] = (x[i] - m.mean) * inv * scale[i] + bias[i];
    }
    return from_doubles(out, x);
}
KILN_REGISTER_OP(layernorm)

shape rms_norm::compute_shape(std::span<const shape> in) const {
    static constexpr const char* names[] = {"scale"};
    check_input_count(in, 2);
    return normalized_shape(in, names, axis);
}

argument rms_norm::compute(const shape& out, std::span<const argument> args) const {
    auto x = to_doubles(args[0]);
    auto scale = broadcast_values(args[1], out.lens());
    std::size_t row = inner_elements(out.lens(), normalize_axis(axis, out.ndim()));
    for (std::size_t first = 0; row > 0 && first < x.size(); first += row) {
        double ss = 0;
        for (std::size_t i = first; i < first + row; ++i) ss += x[i] * x[i];
        double inv = 1 / std::sqrt(ss / static_cast<double>(row) + epsilon);
        for (std::size_t i = first; i < first + row; ++i) x[i] = x[i] * inv * scale[i];
    }
    return from_doubles(out, x);
}
KILN_REGISTER_OP(rms_norm)

namespace {

// Calls f(values) with the row-major positions of x grouped along `axes`, f changing them in place.
template <class F>
void for_each_group(std::vector<double>& x, const shape& s, std::span<const std::size_t> axes, F&& f) {
    auto g = group_offsets(s.as_standard(), axes);
    std::vector<double> v(g.rel.size());
    for (auto base : g.bases) {
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = x[base + g.rel[i]];
        f(v);
        for (std::size_t i = 0; i < v.size(); ++i) x[base + g.rel[i]] = v[i];
    }
}

}  // namespace

shape lp_normalization::compute_shape(std::span<const shape> in) const {
    if (p != 1 && p != 2) fail("p=", p, "; expected 1 or 2");
    return along_axis_shape(in, axis, float_type, "a float type");
}

argument lp_normalization::compute(const shape& out, std::span<const argument> args) const {
    auto x = to_doubles(args[0]);
    std::size_t axes[] = {normalize_axis(axis, out.ndim())};
    for_each_group(x, out, axes, [&](std::vector<double>& v) {
        double norm = 0;
        for (double e : v) norm += p == 1 ? std::abs(e) : e * e;
        if (p == 2) norm = std::sqrt(norm);
        for (double& e : v) e = norm == 0 ? 0 : e / norm;
    });
    return from_doubles(out, x);
}
KILN_REGISTER_OP(lp_normalization)

shape mean_variance_normalization::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    check_type(in, 0, float_type, "a float type");
    normalize_axes(axes, in[0].ndim());
    return {in[0].type(), in[0].dims()};
}

argument mean_variance_normalization::compute(const shape& out, std::span<const argument> args) const {
    auto x = to_doubles(args[0]);
    auto ax = normalize_axes(axes, out.ndim());
    for_each_group(x, out, ax, [](std::vector<double>& v) {
        if (v.empty()) return;
        moments m = moments_of(v);
        for (double& e : v) e = (e - m.mean) / (std::sqrt(m.var) + 1e-9);
    });
    return from_doubles(out, x);
}
KILN_REGISTER_OP(mean_variance_normalization)

}  // namespace kiln::ops
