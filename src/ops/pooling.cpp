// Pooling over spatial windows (ONNX AveragePool, MaxPool, LpPool and their Global forms) and
// local response normalization across channels (ONNX LRN). Input [N, C, spatial...]; computed
// in double and rounded once per output element.
#include "ops/pooling.hpp"

#include <cmath>
#include <limits>

#include "ops/window.hpp"

namespace kiln::ops {
namespace {

// Max pooling also takes int8/uint8 (as ONNX MaxPool does); their values are exact in double.
bool max_pool_type(dtype t) { return is_float(t) || t == dtype::int8 || t == dtype::uint8; }

// What one window saw: taps on real elements, taps on padding within the padded input, and
// the running max, sum and sum of |x|^p of the real elements.
struct window_acc {
    std::size_t real = 0, padded = 0;
    double max = -std::numeric_limits<double>::infinity(), sum = 0, lp_sum = 0;
};

// The window and kernel of pooling `op` for input lens x; checks its attributes against the rank.
std::pair<window, std::vector<std::size_t>> geometry(const pooling& op, const std::vector<std::size_t>& x) {
    std::size_t dims = x.size() - 2;
    if (op.global) {
        if (!op.lengths.empty() || !op.padding.empty() || !op.stride.empty() || !op.dilations.empty())
            fail("global pooling takes no lengths, padding, stride or dilations");
        return {window::make(dims, {}, {}, {}), {x.begin() + 2, x.end()}};
    }
    if (op.lengths.empty())
        fail("lengths is empty; expected the kernel length of each of the ", dims, " spatial dims");
    return {window::make(dims, op.padding, op.stride, op.dilations, "stride", "dilations"),
            spatial_attr("lengths", op.lengths, dims, 1, 1)};
}

// Visits the taps of the window at output index yi (dims N, C, spatial...).
window_acc gather(const pooling& op, const std::vector<double>& x, const shape& xs, const window& win,
                  const std::vector<std::size_t>& kernel, std::span<const std::size_t> yi) {
    window_acc acc;
    std::vector<std::size_t> xi(yi.begin(), yi.end());
    for_each_index(kernel, [&](std::span<const std::size_t> t) {
        bool real = true, in_padded = true;
        for (std::size_t d = 0; d < kernel.size(); ++d) {
            std::ptrdiff_t p = win.position(d, yi[d + 2], t[d]);
            auto n = static_cast<std::ptrdiff_t>(xs.lens()[d + 2]);
            real = real && p >= 0 && p < n;
            in_padded = in_padded && p < n + static_cast<std::ptrdiff_t>(win.pad_end[d]);
            if (real) xi[d + 2] = static_cast<std::size_t>(p);
        }
        if (!real) {
            acc.padded += in_padded;
            return;
        }
        double v = x[xs.index(xi)];
        ++acc.real;
        if (std::isnan(v) || v > acc.max) acc.max = v;   // NaN propagates, as ONNX MaxPool has it
        acc.sum += v;
        acc.lp_sum += std::pow(std::abs(v), static_cast<double>(op.lp_order));
    });
    return acc;
}

}  // namespace

shape pooling::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    check_static(in);
    check_rank(in, 0, 3, true);
    if (mode == "max")
        check_type(in, 0, max_pool_type, "a float type, int8 or uint8");
    else if (mode == "average" || mode == "lpnorm")
        check_type(in, 0, float_type, "a float type");
    else
        fail("mode='", mode, "'; expected average, max or lpnorm");
    if (mode == "lpnorm" && lp_order < 1) fail("lp_order=", lp_order, "; expected >= 1");
    const auto& x = in[0].lens();
    auto [win, kernel] = geometry(*this, x);
    std::vector<std::size_t> out{x[0], x[1]};
    for (std::size_t d = 0; d < kernel.size(); ++d)
        out.push_back(win.output_len(d, x[d + 2], kernel[d], ceil_mode));
    return {in[0].type(), out};
}

argument pooling::compute(const shape& out, std::span<const argument> args) const {
    shape xs = args[0].get_shape().as_standard();
    std::vector<double> x = to_doubles(args[0]);
    // Not a structured binding: the lambda captures both (clang before 16 cannot).
    auto geo = geometry(*this, xs.lens());
    const window& win = geo.first;
    const std::vector<std::size_t>& kernel = geo.second;
    std::vector<double> y;
    y.reserve(out.elements());
    for_each_index(out.lens(), [&](std::span<const std::size_t> yi) {
        window_acc a = gather(*this, x, xs, win, kernel, yi);
        if (mode == "max")
            y.push_back(a.max);
        else if (mode == "lpnorm")
            y.push_back(std::pow(a.lp_sum, 1.0 / static_cast<double>(lp_order)));
        else
            y.push_back(a.sum / static_cast<double>(a.real + (count_include_pad ? a.padded : 0)));
    });
    return from_doubles(out, y);
}
KILN_REGISTER_OP(pooling)

shape lrn::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    check_static(in);
    check_type(in, 0, float_type, "a float type");
    check_rank(in, 0, 2, true);
    if (size < 1) fail("size=", size, "; expected >= 1");
    return in[0].as_standard();
}

argument lrn::compute(const shape& out, std::span<const argument> args) const {
    shape xs = args[0].get_shape().as_standard();
    std::vector<double> x = to_doubles(args[0]);
    auto before = static_cast<std::ptrdiff_t>((size - 1) / 2), after = static_cast<std::ptrdiff_t>(size / 2);
    auto channels = static_cast<std::ptrdiff_t>(xs.lens()[1]);
    std::vector<double> y;
    y.reserve(out.elements());
    std::vector<std::size_t> ni;
    for_each_index(xs.lens(), [&](std::span<const std::size_t> xi) {
        ni.assign(xi.begin(), xi.end());
        auto c = static_cast<std::ptrdiff_t>(xi[1]);
        double sq = 0;
        for (auto k = std::max<std::ptrdiff_t>(0, c - before); k <= std::min(channels - 1, c + after); ++k) {
            ni[1] = static_cast<std::size_t>(k);
            double v = x[xs.index(ni)];
            sq += v * v;
        }
        double v = x[xs.index(xi)];
        y.push_back(v / std::pow(double(bias) + double(alpha) / double(size) * sq, double(beta)));
    });
    return from_doubles(out, y);
}
KILN_REGISTER_OP(lrn)

}  // namespace kiln::ops
