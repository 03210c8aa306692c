// grid_sample's sampling, ops/grid_sample.cpp ported: each grid point gives, per spatial dim, up
// to four taps (an input index and its weight, index -1 outside with zeros padding), computed in
// double step by step as ref does. Mode: 0 linear, 1 nearest, 2 cubic; padding: 0 zeros,
// 1 border, 2 reflection.
#pragma once
#include "kiln_types.cuh"

namespace kiln {

struct grid_taps {
    i64 index[4];
    double weight[4];
    int count;
};

// x mirrored about lo and hi until it lies between them.
__device__ __forceinline__ double grid_reflect(double x, double lo, double hi) {
    const double range = hi - lo;
    if (range <= 0) return lo;
    const bool below = x < lo;
    if (!below && x <= hi) return x;
    const double dx = below ? lo - x : x - hi;
    const double n = trunc(dx / range);
    const double r = dx - n * range;
    const bool even = fmod(n, 2.0) == 0;
    return below == even ? lo + r : hi - r;
}

template <int Mode, int Padding, bool AlignCorners>
struct grid_sampler {
    __device__ static double lo() { return AlignCorners ? 0.0 : -0.5; }
    __device__ static double hi(i64 len) { return AlignCorners ? double(len) - 1 : double(len) - 0.5; }

    // The input index an integer position reads, or -1 for a zero.
    __device__ static i64 pixel(i64 i, i64 len) {
        if (Padding == 0) return i >= 0 && i < len ? i : -1;
        if (Padding == 1) return i < 0 ? 0 : i > len - 1 ? len - 1 : i;
        return static_cast<i64>(grid_reflect(double(i), lo(), hi(len)));
    }

    // Keys' cubic convolution weights (a = -0.75) of the four points around x0 + t.
    __device__ static double near(double d) { return ((-0.75 + 2) * d - (-0.75 + 3)) * d * d + 1; }
    __device__ static double far(double d) { return ((-0.75 * d - 5 * -0.75) * d + 8 * -0.75) * d - 4 * -0.75; }

    __device__ static grid_taps taps(double coord, i64 len) {
        grid_taps r;
        double x = AlignCorners ? (coord + 1) / 2 * (double(len) - 1) : ((coord + 1) * double(len) - 1) / 2;
        if (Mode == 1) x = rint(x);   // ties to even, as PyTorch
        if (x < lo() || x > hi(len)) {
            if (Padding == 1) x = x < 0.0 ? 0.0 : x > double(len) - 1 ? double(len) - 1 : x;
            else if (Padding == 2) x = grid_reflect(x, lo(), hi(len));
        }
        if (Mode == 1) {
            r.count = 1;
            r.index[0] = pixel(static_cast<i64>(x), len);
            r.weight[0] = 1.0;
            return r;
        }
        const double x0 = floor(x), t = x - x0;
        const i64 i0 = static_cast<i64>(x0);
        if (Mode == 0) {
            r.count = 2;
            r.index[0] = pixel(i0, len);
            r.weight[0] = 1 - t;
            r.index[1] = pixel(i0 + 1, len);
            r.weight[1] = t;
            return r;
        }
        r.count = 4;
        const double w[4] = {far(t + 1), near(t), near(1 - t), far(2 - t)};
        for (int k = 0; k < 4; ++k) {
            r.index[k] = pixel(i0 - 1 + k, len);
            r.weight[k] = w[k];
        }
        return r;
    }
};

}  // namespace kiln
