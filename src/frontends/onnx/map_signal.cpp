// ONNX signal ops: DFT onto kiln's dft; STFT composed of a gather of the frames, the window
// product and a dft; HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix, whose
// values depend only on constant inputs, as literals. Inputs that set shapes (dft_length, axis,
// frame_step, frame_length, window sizes) must be constants.
#include <cmath>
#include <numbers>

#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

bool present(context& ctx, const inputs_t& in, std::size_t i) { return i < in.size() && !ctx.is_none(in[i]); }

// The single value of a constant scalar or one-element input.
std::int64_t constant_scalar(context& ctx, instruction_ref i, const std::string& what) {
    auto v = ctx.constant_ints(i, what);
    if (v.size() != 1) fail(what, " has ", v.size(), " elements; expected exactly one");
    return v[0];
}

inputs_t dft(const node_info& n, context& ctx, const inputs_t& in, std::int64_t axis) {
    std::int64_t length = present(ctx, in, 1) ? constant_scalar(ctx, in[1], "input 1 (dft_length)") : 0;
    if (present(ctx, in, 1) && length < 1) fail("input 1 (dft_length) is ", length, "; expected a size >= 1");
    return {ctx.add("dft",
                    value{{"axis", axis},
                          {"inverse", n.attr_int("inverse", 0) != 0},
                          {"onesided", n.attr_int("onesided", 0) != 0},
                          {"length", length}},
                    {in.at(0)})};
}
inputs_t dft_17(const node_info& n, context& ctx, const inputs_t& in) { return dft(n, ctx, in, n.attr_int("axis", 1)); }
KILN_ONNX_OP("", "DFT", 17, dft_17)
// Opset 20 moved axis to an input, default -2 (the last signal dim).
inputs_t dft_20(const node_info& n, context& ctx, const inputs_t& in) {
    return dft(n, ctx, in, present(ctx, in, 2) ? constant_scalar(ctx, in[2], "input 2 (axis)") : -2);
}
KILN_ONNX_OP("", "DFT", 20, dft_20)

// Frames of frame_length values every frame_step along dim 1 of signal [batch, length, 1 or 2],
// each multiplied by the window, then transformed: [batch, frames, bins, 2].
inputs_t stft(const node_info& n, context& ctx, const inputs_t& in) {
    auto signal = in.at(0);
    const shape& s = signal->get_shape();
    if (s.dynamic() || s.ndim() != 3)
        fail("input 0 (signal) is ", to_string(s), "; expected static [batch, length, 1 or 2]");
    std::int64_t step = constant_scalar(ctx, in.at(1), "input 1 (frame_step)");
    bool window = present(ctx, in, 2);
    std::int64_t len = static_cast<std::int64_t>(s.lens()[1]);
    std::int64_t frame = present(ctx, in, 3) ? constant_scalar(ctx, in[3], "input 3 (frame_length)")
                         : window            ? static_cast<std::int64_t>(in[2]->get_shape().elements())
                                             : len;
    if (window && in[2]->get_shape().lens() != std::vector<std::size_t>{static_cast<std::size_t>(frame)})
        fail("input 2 (window) is ", to_string(in[2]->get_shape()), "; expected ", frame, " values (frame_length)");
    if (step < 1) fail("input 1 (frame_step) is ", step, "; expected a step >= 1");
    if (frame < 1 || frame > len) fail("frame_length ", frame, " is not within [1, ", len, "] (the signal length)");
    std::int64_t frames = 1 + (len - frame) / step;
    std::vector<std::int64_t> idx;
    for (std::int64_t f = 0; f < frames; ++f)
        for (std::int64_t j = 0; j < frame; ++j) idx.push_back(f * step + j);
    auto indices = ctx.add_literal(
        literal(shape(dtype::int64, std::vector<std::size_t>{std::size_t(frames), std::size_t(frame)}), idx));
    auto x = ctx.add("gather", value{{"axis", 1}}, {signal, indices});
    if (window) {
        auto w = ctx.add("reshape", value{{"dims", to_value(std::vector<std::int64_t>{frame, 1})}}, {in[2]});
        x = ctx.add("mul", {x, w});
    }
    return {ctx.add("dft", value{{"axis", 2}, {"onesided", n.attr_int("onesided", 1) != 0}, {"length", frame}}, {x})};
}
KILN_ONNX_OP("", "STFT", 17, stft)

// A window of `size` values w(n / N) from constant input 0, N = size (periodic) or size - 1;
// a window of one value is [1], as PyTorch's.
op_mapping window(double (*w)(double)) {
    return [w](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
        std::int64_t size = constant_scalar(ctx, in.at(0), "input 0 (size)");
        if (size < 0) fail("input 0 (size) is ", size, "; expected a size >= 0");
        double period = static_cast<double>(n.attr_int("periodic", 1) != 0 ? size : size - 1);
        std::vector<double> v;
        for (std::int64_t i = 0; i < size; ++i) v.push_back(size == 1 ? 1.0 : w(static_cast<double>(i) / period));
        dtype t = onnx_dtype(static_cast<int>(n.attr_int("output_datatype", 1)));
        return {ctx.add_literal(literal(shape(t, std::vector<std::size_t>{v.size()}), v))};
    };
}
constexpr double two_pi = 2 * std::numbers::pi;
KILN_ONNX_OP("", "HannWindow", 17, window([](double x) { return 0.5 - 0.5 * std::cos(two_pi * x); }))
KILN_ONNX_OP("", "HammingWindow", 17, window([](double x) { return 25.0 / 46 - 21.0 / 46 * std::cos(two_pi * x); }))
KILN_ONNX_OP("", "BlackmanWindow", 17,
             window([](double x) { return 0.42 - 0.5 * std::cos(two_pi * x) + 0.08 * std::cos(2 * two_pi * x); }))

// Triangular filters mapping the dft_length / 2 + 1 bins of a one-sided spectrum to num_mel_bins
// mel bands: [bins, num_mel_bins]. The band edges are num_mel_bins + 2 points evenly spaced in
// mel (step (high - low) / (num_mel_bins + 2), as ONNX's reference), converted to bin indices.
std::vector<double> mel_filters(std::int64_t mels, std::int64_t dft_length, double rate, double lo, double hi) {
    // Written as ONNX's reference writes them, so that edges on a bin boundary round alike.
    auto to_mel = [](double hz) { return 2595 * std::log1p(hz / 700) / std::log(10.0); };
    double low = to_mel(lo), step = (to_mel(hi) - low) / static_cast<double>(mels + 2);
    auto bins = static_cast<std::size_t>(dft_length / 2 + 1);
    std::vector<std::int64_t> edge;
    for (std::int64_t i = 0; i < mels + 2; ++i) {
        double hz = 700 * std::expm1((static_cast<double>(i) * step + low) / 2595 * std::log(10.0));
        edge.push_back(static_cast<std::int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / rate)));
        if (edge.back() < 0 || edge.back() >= static_cast<std::int64_t>(bins))
            fail("mel band edge ", i, " falls on bin ", edge.back(), ", outside the ", bins,
                 " spectrogram bins; check the edge frequencies against sample_rate");
    }
    auto m = static_cast<std::size_t>(mels);
    std::vector<double> w(bins * m, 0.0);
    for (std::size_t i = 0; i < m; ++i) {
        std::int64_t l = edge[i], c = edge[i + 1], h = edge[i + 2];
        auto at = [&](std::int64_t j) -> double& { return w[static_cast<std::size_t>(j) * m + i]; };
        if (c == l) at(c) = 1;
        for (std::int64_t j = l; c > l && j <= c; ++j) at(j) = double(j - l) / double(c - l);
        for (std::int64_t j = c; j < h; ++j) at(j) = double(h - j) / double(h - c);
    }
    return w;
}
inputs_t mel_weight_matrix(const node_info& n, context& ctx, const inputs_t& in) {
    std::int64_t mels = constant_scalar(ctx, in.at(0), "input 0 (num_mel_bins)");
    std::int64_t dft_length = constant_scalar(ctx, in.at(1), "input 1 (dft_length)");
    auto one = [&](std::size_t i, const char* what) {
        auto v = ctx.constant_doubles(in.at(i), what);
        if (v.size() != 1) fail(what, " has ", v.size(), " elements; expected exactly one");
        return v[0];
    };
    double rate = one(2, "input 2 (sample_rate)"), lo = one(3, "input 3 (lower_edge_hertz)");
    double hi = one(4, "input 4 (upper_edge_hertz)");
    if (mels < 1 || dft_length < 1 || !(rate > 0))
        fail("num_mel_bins, dft_length and sample_rate must be positive (got ", mels, ", ", dft_length, ", ", rate,
             ")");
    if (!(lo >= 0 && lo < hi)) fail("expected 0 <= lower_edge_hertz < upper_edge_hertz (got ", lo, ", ", hi, ")");
    auto w = mel_filters(mels, dft_length, rate, lo, hi);
    dtype t = onnx_dtype(static_cast<int>(n.attr_int("output_datatype", 1)));
    shape s(t, std::vector<std::size_t>{std::size_t(dft_length / 2 + 1), std::size_t(mels)});
    return {ctx.add_literal(literal(s, w))};
}
KILN_ONNX_OP("", "MelWeightMatrix", 17, mel_weight_matrix)

}  // namespace
}  // namespace kiln::onnx_fe
