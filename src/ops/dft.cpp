// dft, as ONNX DFT (opset 20 with axis and dft_length as attributes): a discrete Fourier
// transform along `axis` of a signal whose last dim holds one (real) or two (real, imaginary)
// values. length is the transform size n: the signal is cut or zero-padded to it; 0 means the
// axis length, or 2 * (len - 1) for an inverse one-sided transform. Forward one-sided keeps bins
// [0, n / 2]; inverse one-sided reads bins [0, n / 2] of a Hermitian spectrum and gives a real
// signal of n values (last dim 1), as numpy's irfft. Inverse transforms scale by 1 / n. Computed
// directly in double (no FFT): the reference favours clarity.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "ops/dft.hpp"

namespace kiln::ops {
namespace {

using cplx = std::complex<double>;

// e^(sign * 2 pi i j k / n), with j k reduced mod n so that large products stay exact.
cplx twiddle(std::size_t j, std::size_t k, std::size_t n, double sign) {
    double angle = sign * 2 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n);
    return {std::cos(angle), std::sin(angle)};
}

// The output values of one line, from the line's input values (already cut or padded to
// the bins that matter).
std::vector<cplx> transform(const dft& op, const std::vector<cplx>& x, std::size_t n, std::size_t out_len) {
    std::vector<cplx> y(out_len);
    if (!op.inverse) {
        for (std::size_t k = 0; k < out_len; ++k)
            for (std::size_t j = 0; j < x.size(); ++j) y[k] += x[j] * twiddle(j, k, n, -1);
        return y;
    }
    // The full spectrum: given bins, then (one-sided) the conjugates of the mirrored ones.
    std::vector<cplx> spec(n);
    for (std::size_t k = 0; k < n; ++k) {
        if (k < x.size())
            spec[k] = x[k];
        else if (op.onesided && n - k < x.size())
            spec[k] = std::conj(x[n - k]);
    }
    for (std::size_t j = 0; j < out_len; ++j) {
        for (std::size_t k = 0; k < n; ++k) y[j] += spec[k] * twiddle(j, k, n, 1);
        y[j] /= static_cast<double>(n);
    }
    return y;
}

}  // namespace

shape dft::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    check_static(in);
    check_type(in, 0, float_type, "a float type");
    check_rank(in, 0, 2, true);
    auto lens = in[0].lens();
    if (lens.back() != 1 && lens.back() != 2)
        fail("input 0's last dim is ", lens.back(), "; expected 1 (real) or 2 (complex)");
    std::size_t a = signal_axis(lens.size());
    std::size_t n = size(lens[a]);
    lens[a] = onesided && !inverse ? n / 2 + 1 : n;
    lens.back() = onesided && inverse ? 1 : 2;
    return {in[0].type(), lens};
}

std::size_t dft::signal_axis(std::size_t rank) const {
    std::size_t a = normalize_axis(axis, rank);
    if (a == rank - 1) fail("axis=", axis, " is the real/imaginary dim; expected a signal dim");
    return a;
}

std::size_t dft::size(std::size_t len) const {
    if (length < 0) fail("length=", length, "; expected a size >= 1, or 0 for the default");
    if (length > 0) return static_cast<std::size_t>(length);
    std::size_t n = onesided && inverse ? (len == 0 ? 0 : 2 * (len - 1)) : len;
    if (n == 0) fail("a signal of ", len, " values along the axis gives a transform of size 0; give length");
    return n;
}

std::size_t dft::used(std::size_t len) const {
    std::size_t n = size(len);
    return std::min(len, inverse && onesided ? n / 2 + 1 : n);
}

argument dft::compute(const shape& out, std::span<const argument> args) const {
    const shape& xs = args[0].get_shape();
    std::size_t rank = xs.ndim(), a = signal_axis(rank);
    std::size_t n = size(xs.lens()[a]), parts = xs.lens().back();
    std::size_t used = this->used(xs.lens()[a]);
    auto in = to_doubles(args[0]);
    auto lines = xs.lens();
    lines[a] = 1;
    lines.back() = 1;
    std::vector<double> y(out.elements());
    std::size_t out_parts = out.lens().back();
    std::vector<std::size_t> in_std = shape::standard_strides(xs.lens());
    std::vector<std::size_t> out_std = shape::standard_strides(out.lens());
    for_each_index(lines, [&](std::span<const std::size_t> line) {
        std::size_t in_base = 0, out_base = 0;
        for (std::size_t d = 0; d < rank; ++d) in_base += line[d] * in_std[d], out_base += line[d] * out_std[d];
        std::vector<cplx> x(used);
        for (std::size_t j = 0; j < used; ++j) {
            std::size_t p = in_base + j * in_std[a];
            x[j] = {in[p], parts == 2 ? in[p + 1] : 0.0};
        }
        auto v = transform(*this, x, n, out.lens()[a]);
        for (std::size_t k = 0; k < v.size(); ++k) {
            std::size_t p = out_base + k * out_std[a];
            y[p] = v[k].real();
            if (out_parts == 2) y[p + 1] = v[k].imag();
        }
    });
    return from_doubles(out, y);
}
KILN_REGISTER_OP(dft)

}  // namespace kiln::ops
