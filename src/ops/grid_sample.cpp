// grid_sample, as ONNX GridSample (opset 20 mode names: linear, nearest, cubic): samples X
// [N, C, D1..Dr] at the points of grid [N, H1..Hr, r], giving [N, C, H1..Hr]. Grid points are
// normalised to [-1, 1] and list the innermost dim first (grid[..., 0] indexes Dr). Out-of-range
// points follow padding_mode: zeros (read as 0), border (clamped) or reflection (mirrored about
// the borders). Coordinates compute in double, as ONNX's reference evaluator does step by step.
#include <algorithm>
#include <cmath>

#include "ops/grid_sample.hpp"

namespace kiln::ops {
namespace {

// One input index along a dim and its weight; index -1 is a point outside (zeros padding).
struct tap {
    std::int64_t index;
    double weight;
};

// Keys' cubic convolution weights (a = -0.75) of the four points around x0 + t, t in [0, 1).
std::vector<double> cubic_weights(double t) {
    constexpr double a = -0.75;
    auto near = [&](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
    auto far = [&](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
    return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

// The sampling rules of one grid_sample (its attributes).
struct sampler {
    const grid_sample& op;
    const std::string& mode = op.mode;
    const std::string& padding_mode = op.padding_mode;
    const bool align_corners = op.align_corners;

    // The border coordinates of a dim of length len: pixel centres or pixel edges.
    double lo() const { return align_corners ? 0.0 : -0.5; }
    double hi(std::size_t len) const { return align_corners ? double(len) - 1 : double(len) - 0.5; }

    // x mirrored about lo and hi until it lies between them.
    static double reflect(double x, double lo, double hi) {
        double range = hi - lo;
        if (range <= 0) return lo;
        bool below = x < lo;
        if (!below && x <= hi) return x;
        double dx = below ? lo - x : x - hi;
        double n = std::trunc(dx / range);
        double r = dx - n * range;
        bool even = std::fmod(n, 2.0) == 0;
        return below == even ? lo + r : hi - r;
    }

    // The input index an integer position reads, or -1 for a zero.
    std::int64_t pixel(std::int64_t i, std::size_t len) const {
        auto n = static_cast<std::int64_t>(len);
        if (padding_mode == "zeros") return i >= 0 && i < n ? i : -1;
        if (padding_mode == "border") return std::clamp<std::int64_t>(i, 0, n - 1);
        return static_cast<std::int64_t>(reflect(double(i), lo(), hi(len)));
    }

    // The taps of one normalised coordinate along a dim of length len.
    std::vector<tap> taps(double coord, std::size_t len) const {
        double x = align_corners ? (coord + 1) / 2 * (double(len) - 1) : ((coord + 1) * double(len) - 1) / 2;
        if (mode == "nearest") x = std::nearbyint(x);  // ties to even, as PyTorch
        if (x < lo() || x > hi(len)) {
            if (padding_mode == "border")
                x = std::clamp(x, 0.0, double(len) - 1);
            else if (padding_mode == "reflection")
                x = reflect(x, lo(), hi(len));
        }
        if (mode == "nearest") return {{pixel(static_cast<std::int64_t>(x), len), 1.0}};
        double x0 = std::floor(x);
        double t = x - x0;
        auto i0 = static_cast<std::int64_t>(x0);
        if (mode == "linear") return {{pixel(i0, len), 1 - t}, {pixel(i0 + 1, len), t}};
        auto w = cubic_weights(t);
        std::vector<tap> out;
        for (std::int64_t k = 0; k < 4; ++k) out.push_back({pixel(i0 - 1 + k, len), w[static_cast<std::size_t>(k)]});
        return out;
    }

    // Element offsets (within one [n, c] plane) and weights of the points that one grid point
    // reads: the product of its per-dim taps, leaving out points outside (they read 0).
    std::vector<tap> plane_taps(const shape& xs, const std::vector<double>& coords) const {
        std::size_t r = coords.size();
        std::vector<tap> all{{0, 1.0}};
        for (std::size_t d = 0; d < r; ++d) {
            std::size_t len = xs.lens()[d + 2];
            std::vector<tap> next;
            for (const tap& t : taps(coords[r - 1 - d], len))
                for (const tap& a : all)
                    if (t.index >= 0)
                        next.push_back(
                            {a.index + t.index * static_cast<std::int64_t>(xs.strides()[d + 2]), a.weight * t.weight});
            all = std::move(next);
        }
        return all;
    }

};

}  // namespace

shape grid_sample::compute_shape(std::span<const shape> in) const {
    if (mode != "linear" && mode != "nearest" && mode != "cubic")
        fail("mode='", mode, "'; expected one of linear, nearest, cubic");
    if (padding_mode != "zeros" && padding_mode != "border" && padding_mode != "reflection")
        fail("padding_mode='", padding_mode, "'; expected one of zeros, border, reflection");
    check_input_count(in, 2);
    check_static(in);
    check_type(in, 0, numeric_type, "a numeric type");
    check_type(in, 1, float_type, "a float type");
    check_rank(in, 0, 3, true);
    const auto& x = in[0].lens();
    const auto& g = in[1].lens();
    std::size_t r = x.size() - 2;
    check_rank(in, 1, r + 2);
    if (g[0] != x[0]) fail("grid batch ", g[0], " differs from input batch ", x[0]);
    if (g.back() != r) fail("grid's last dim is ", g.back(), "; expected ", r, " (one coordinate per spatial dim)");
    std::vector<std::size_t> lens{x[0], x[1]};
    lens.insert(lens.end(), g.begin() + 1, g.end() - 1);
    return {in[0].type(), lens};
}

argument grid_sample::compute(const shape& out, std::span<const argument> args) const {
    const shape& xs = args[0].get_shape();
    const shape& gs = args[1].get_shape();
    auto grid = to_doubles(args[1]);
    std::size_t r = xs.ndim() - 2, batch = xs.lens()[0], channels = xs.lens()[1];
    std::size_t points = gs.elements() / (batch * r);
    argument y(out);
    visit_type(xs.type(), [&](auto t) {
        using T = decltype(t);
        const T* x = args[0].as<T>();
        T* dst = y.as<T>();
        for (std::size_t n = 0; n < batch; ++n)
            for (std::size_t p = 0; p < points; ++p) {
                auto first = grid.begin() + static_cast<std::ptrdiff_t>((n * points + p) * r);
                auto ts = sampler{*this}.plane_taps(xs, std::vector<double>(first, first + static_cast<std::ptrdiff_t>(r)));
                for (std::size_t c = 0; c < channels; ++c) {
                    std::size_t base = n * xs.strides()[0] + c * xs.strides()[1];
                    double acc = 0;
                    for (const tap& k : ts)
                        acc += k.weight * cast<double>(x[base + static_cast<std::size_t>(k.index)]);
                    dst[(n * channels + c) * points + p] = cast<T>(acc);
                }
            }
    });
    return y;
}
KILN_REGISTER_OP(grid_sample)

}  // namespace kiln::ops
