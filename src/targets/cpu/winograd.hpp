// Winograd F(4x4, 3x3) convolution for the cpu target (float32, channels-last): each 4x4 output
// tile of a 3x3 stride-1 convolution is A^T [(G g G^T) . (B^T d B)] A over its 6x6 input patch,
// so the 36 element-wise products become 36 GEMMs [tiles x C] x [C x K] (oneDNN's batched
// matmul, onednn_kernels.cpp) between an input and an output transform (here, AVX-512). That is
// 4x fewer multiply-adds than the direct convolution; the transforms are streaming passes.
#pragma once
#include <cstddef>
#include <vector>

namespace kiln {

// A convolution's sizes: input [n, h, w, c] and output [n, oh, ow, k], both channels-last; the
// output's (0, 0) reads the input from (-pad_top, -pad_left).
struct winograd_geometry {
    std::size_t n = 0, h = 0, w = 0, c = 0;
    std::size_t k = 0, oh = 0, ow = 0;
    std::ptrdiff_t pad_top = 0, pad_left = 0;

    std::size_t tiles_h() const { return (oh + 3) / 4; }
    std::size_t tiles_w() const { return (ow + 3) / 4; }
    std::size_t tiles() const { return n * tiles_h() * tiles_w(); }
};

// One step of the output's epilogue, after the bias, in order: relu (a: the negative slope),
// clip to [a, b], linear a * v + b, or sum (adds the value the output held before the call).
struct winograd_step {
    enum kind_t { relu, clip, linear, sum } kind = relu;
    float a = 0, b = 0;
};

// Whether this CPU runs the transforms (AVX-512F, checked at run time).
bool winograd_available();

// The transformed weights u [36][c][k] of w [k][c][3][3] (row-major), computed in double.
void winograd_weights(const float* w, std::size_t k, std::size_t c, float* u);

// Tiles [first, first + count) are a chunk: its buffers hold count tiles (the GEMMs' batch of 36
// runs per chunk, so that they stay in cache at large batch sizes).

// v [36][count][c]: the transformed 6x6 input patch of each output tile (zeros outside the input).
void winograd_input(const winograd_geometry& g, const float* x, std::size_t first, std::size_t count, float* v);

// y from m [36][count][k] (the GEMMs' result): the inverse transform, plus bias (may be null),
// then the steps; only the output's own positions are written.
void winograd_output(const winograd_geometry& g, const float* m, const float* bias,
                     const std::vector<winograd_step>& steps, std::size_t first, std::size_t count, float* y);

}  // namespace kiln
