// The transforms of F(4x4, 3x3) Winograd convolution (winograd.hpp), with the interpolation
// points 0, +-1, +-2 and infinity (Lavin and Gray's matrices): 16 channels per AVX-512 vector,
// the last block masked. A parallel loop over tiles calls a per-tile function that carries the
// target attribute (an OpenMP region's outlined body would not).
#include "targets/cpu/winograd.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace kiln {

namespace {

#define KILN_AVX512 __attribute__((target("avx512f")))

// Rows of B^T applied to six values d0..d5 (one column or row of a patch).
KILN_AVX512 inline void input_rows(const __m512 (&d)[6], __m512 (&r)[6]) {
    const __m512 f2 = _mm512_set1_ps(2), f4 = _mm512_set1_ps(4), f5 = _mm512_set1_ps(5);
    r[0] = _mm512_add_ps(_mm512_fnmadd_ps(f5, d[2], _mm512_mul_ps(f4, d[0])), d[4]);
    r[1] = _mm512_fnmadd_ps(f4, _mm512_add_ps(d[1], d[2]), _mm512_add_ps(d[3], d[4]));
    r[2] = _mm512_fmadd_ps(f4, _mm512_sub_ps(d[1], d[2]), _mm512_sub_ps(d[4], d[3]));
    r[3] = _mm512_fmadd_ps(f2, _mm512_sub_ps(d[3], d[1]), _mm512_sub_ps(d[4], d[2]));
    r[4] = _mm512_fmadd_ps(f2, _mm512_sub_ps(d[1], d[3]), _mm512_sub_ps(d[4], d[2]));
    r[5] = _mm512_add_ps(_mm512_fnmadd_ps(f5, d[3], _mm512_mul_ps(f4, d[1])), d[5]);
}

// Rows of A^T applied to six values s0..s5.
KILN_AVX512 inline void output_rows(const __m512 (&s)[6], __m512 (&o)[4]) {
    const __m512 f2 = _mm512_set1_ps(2), f4 = _mm512_set1_ps(4), f8 = _mm512_set1_ps(8);
    __m512 a = _mm512_add_ps(s[1], s[2]), b = _mm512_sub_ps(s[1], s[2]);
    __m512 c = _mm512_add_ps(s[3], s[4]), d = _mm512_sub_ps(s[3], s[4]);
    o[0] = _mm512_add_ps(_mm512_add_ps(s[0], a), c);
    o[1] = _mm512_fmadd_ps(f2, d, b);
    o[2] = _mm512_fmadd_ps(f4, c, a);
    o[3] = _mm512_add_ps(_mm512_fmadd_ps(f8, d, b), s[5]);
}

KILN_AVX512 inline __mmask16 lanes(std::size_t left) {
    return left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
}

// Tile t (image, row and column of tiles) of the input transform, the chunk's tile `at` of `count`.
KILN_AVX512 void input_tile(const winograd_geometry& g, const float* x, float* v, std::size_t t, std::size_t at,
                            std::size_t count) {
    const std::size_t per_image = g.tiles_h() * g.tiles_w();
    std::size_t img = t / per_image, ty = t % per_image / g.tiles_w(), tx = t % g.tiles_w();
    auto y0 = static_cast<std::ptrdiff_t>(ty * 4) - g.pad_top, x0 = static_cast<std::ptrdiff_t>(tx * 4) - g.pad_left;
    const float* base = x + img * g.h * g.w * g.c;
    bool inside[6][6];
    for (std::ptrdiff_t i = 0; i < 6; ++i)
        for (std::ptrdiff_t j = 0; j < 6; ++j)
            inside[i][j] = y0 + i >= 0 && y0 + i < static_cast<std::ptrdiff_t>(g.h) && x0 + j >= 0 &&
                           x0 + j < static_cast<std::ptrdiff_t>(g.w);
    for (std::size_t c = 0; c < g.c; c += 16) {
        __mmask16 m = lanes(g.c - c);
        __m512 col[6][6];   // B^T d, by column
        for (int j = 0; j < 6; ++j) {
            __m512 d[6];
            for (int i = 0; i < 6; ++i)
                d[i] = inside[i][j] ? _mm512_maskz_loadu_ps(m, base + (static_cast<std::size_t>(y0 + i) * g.w +
                                                                       static_cast<std::size_t>(x0 + j)) * g.c + c)
                                    : _mm512_setzero_ps();
            __m512 r[6];
            input_rows(d, r);
            for (int i = 0; i < 6; ++i) col[j][i] = r[i];
        }
        for (int i = 0; i < 6; ++i) {   // (B^T d) B, row i
            __m512 d[6] = {col[0][i], col[1][i], col[2][i], col[3][i], col[4][i], col[5][i]};
            __m512 r[6];
            input_rows(d, r);
            for (int j = 0; j < 6; ++j) _mm512_mask_storeu_ps(v + ((i * 6 + j) * count + at) * g.c + c, m, r[j]);
        }
    }
}

KILN_AVX512 inline __m512 apply(__m512 v, const winograd_step& s, __mmask16 m, const float* old) {
    switch (s.kind) {
    case winograd_step::relu: {
        __mmask16 neg = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
        return _mm512_mask_mul_ps(v, neg, v, _mm512_set1_ps(s.a));
    }
    // The zero-masked forms: GCC 12 warns that the plain ones' undefined pass-through is read.
    case winograd_step::clip:
        return _mm512_maskz_min_ps(0xffff, _mm512_maskz_max_ps(0xffff, v, _mm512_set1_ps(s.a)), _mm512_set1_ps(s.b));
    case winograd_step::linear: return _mm512_fmadd_ps(v, _mm512_set1_ps(s.a), _mm512_set1_ps(s.b));
    case winograd_step::sum: return _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, old));
    }
    return v;
}

// Tile t of the output transform and epilogue, the chunk's tile `at` of `count`.
KILN_AVX512 void output_tile(const winograd_geometry& g, const float* mm, const float* bias,
                             const std::vector<winograd_step>& steps, float* y, std::size_t t, std::size_t at,
                             std::size_t count) {
    const std::size_t per_image = g.tiles_h() * g.tiles_w();
    std::size_t img = t / per_image, ty = t % per_image / g.tiles_w(), tx = t % g.tiles_w();
    std::size_t rows = std::min<std::size_t>(4, g.oh - ty * 4), cols = std::min<std::size_t>(4, g.ow - tx * 4);
    float* out = y + ((img * g.oh + ty * 4) * g.ow + tx * 4) * g.k;
    for (std::size_t k = 0; k < g.k; k += 16) {
        __mmask16 m = lanes(g.k - k);
        __m512 col[6][4];   // A^T s, by column
        for (int j = 0; j < 6; ++j) {
            __m512 s[6];
            for (int i = 0; i < 6; ++i) s[i] = _mm512_maskz_loadu_ps(m, mm + ((i * 6 + j) * count + at) * g.k + k);
            __m512 o[4];
            output_rows(s, o);
            for (int i = 0; i < 4; ++i) col[j][i] = o[i];
        }
        __m512 b = bias ? _mm512_maskz_loadu_ps(m, bias + k) : _mm512_setzero_ps();
        for (std::size_t i = 0; i < rows; ++i) {
            __m512 s[6] = {col[0][i], col[1][i], col[2][i], col[3][i], col[4][i], col[5][i]};
            __m512 o[4];
            output_rows(s, o);
            for (std::size_t j = 0; j < cols; ++j) {
                float* at = out + (i * g.ow + j) * g.k + k;
                __m512 r = _mm512_add_ps(o[j], b);
                for (const auto& st : steps) r = apply(r, st, m, at);
                _mm512_mask_storeu_ps(at, m, r);
            }
        }
    }
}

}  // namespace

bool winograd_available() { return __builtin_cpu_supports("avx512f"); }

void winograd_weights(const float* w, std::size_t k, std::size_t c, float* u) {
    static const double G[6][3] = {{0.25, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                   {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
    for (std::size_t ko = 0; ko < k; ++ko)
        for (std::size_t ci = 0; ci < c; ++ci) {
            const float* g = w + (ko * c + ci) * 9;
            double t[6][3];   // G g
            for (int i = 0; i < 6; ++i)
                for (int j = 0; j < 3; ++j) t[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
            for (int i = 0; i < 6; ++i)
                for (int j = 0; j < 6; ++j)
                    u[((i * 6 + j) * c + ci) * k + ko] =
                        static_cast<float>(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
        }
}

void winograd_input(const winograd_geometry& g, const float* x, std::size_t first, std::size_t count, float* v) {
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < static_cast<std::int64_t>(count); ++t)
        input_tile(g, x, v, first + static_cast<std::size_t>(t), static_cast<std::size_t>(t), count);
}

void winograd_output(const winograd_geometry& g, const float* m, const float* bias,
                     const std::vector<winograd_step>& steps, std::size_t first, std::size_t count, float* y) {
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < static_cast<std::int64_t>(count); ++t)
        output_tile(g, m, bias, steps, y, first + static_cast<std::size_t>(t), static_cast<std::size_t>(t), count);
}

}  // namespace kiln
