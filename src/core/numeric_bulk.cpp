// Vector loops for float32 -> float16 / bfloat16 (numeric_bulk.hpp). The hardware conversions
// round as ref's encoder does (nearest, ties to even, into subnormals and to Inf), but keep a
// NaN's payload where ref makes every NaN the quiet NaN of its sign: blocks holding a NaN are
// patched from the scalar encoder. bfloat16 has no conversion below AVX-512 BF16 (which flushes
// subnormals), so its rounding is done on the integer bits.
#include "core/numeric_bulk.hpp"

#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/numeric.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define KILN_X86 1
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_epi32(), which its own
// -Wmaybe-uninitialized reports inside the header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#endif

namespace kiln {
namespace {

std::uint16_t half_bits(float v) { return half(static_cast<double>(v)).bits; }

// Adding 0x7FFF plus the lowest kept bit to the float32 bits and truncating rounds to nearest,
// ties to even; a carry moves into the exponent, up to Inf. NaN is set apart first.
std::uint16_t bfloat16_bits(float v) {
    std::uint32_t u = 0;
    std::memcpy(&u, &v, sizeof u);
    if (std::isnan(v)) return static_cast<std::uint16_t>(((u >> 16) & 0x8000) | 0x7FC0);
    return static_cast<std::uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

void half_scalar(const float* x, std::uint16_t* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = half_bits(x[i]);
}

void bfloat16_scalar(const float* x, std::uint16_t* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = bfloat16_bits(x[i]);
}

#ifdef KILN_X86
void patch_nans(const float* x, std::uint16_t* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        if (std::isnan(x[i])) y[i] = half_bits(x[i]);
}

__attribute__((target("avx512f"))) void half_avx512(const float* x, std::uint16_t* y, std::size_t n) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                            _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)) patch_nans(x + i, y + i, 16);
    }
    half_scalar(x + i, y + i, n - i);
}

__attribute__((target("avx2,f16c"))) void half_avx2(const float* x, std::uint16_t* y, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) patch_nans(x + i, y + i, 8);
    }
    half_scalar(x + i, y + i, n - i);
}

__attribute__((target("avx512f"))) void bfloat16_avx512(const float* x, std::uint16_t* y, std::size_t n) {
    const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7FFF);
    const __m512i sign = _mm512_set1_epi32(0x8000), quiet = _mm512_set1_epi32(0x7FC0);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
        __m512i high = _mm512_srli_epi32(_mm512_castps_si512(v), 16);
        __m512i sum = _mm512_add_epi32(_mm512_castps_si512(v), _mm512_add_epi32(bias, _mm512_and_si512(high, one)));
        __m512i nan = _mm512_or_si512(_mm512_and_si512(high, sign), quiet);
        __m512i r = _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_srli_epi32(sum, 16), nan);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm512_cvtepi32_epi16(r));
    }
    bfloat16_scalar(x + i, y + i, n - i);
}

__attribute__((target("avx2"))) void bfloat16_avx2(const float* x, std::uint16_t* y, std::size_t n) {
    const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7FFF);
    const __m256i sign = _mm256_set1_epi32(0x8000), quiet = _mm256_set1_epi32(0x7FC0);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256i high = _mm256_srli_epi32(_mm256_castps_si256(v), 16);
        __m256i sum = _mm256_add_epi32(_mm256_castps_si256(v), _mm256_add_epi32(bias, _mm256_and_si256(high, one)));
        __m256i nan = _mm256_or_si256(_mm256_and_si256(high, sign), quiet);
        __m256i r = _mm256_blendv_epi8(_mm256_srli_epi32(sum, 16), nan, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
        // packus narrows within each 128-bit half; the permute brings the two halves' results together.
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_castsi256_si128(packed));
    }
    bfloat16_scalar(x + i, y + i, n - i);
}
#endif

void check_level(simd_level level) {
    if (static_cast<int>(level) > static_cast<int>(best_simd_level()))
        fail("float conversion: this CPU lacks the instructions of SIMD level ", static_cast<int>(level));
}

}  // namespace

simd_level best_simd_level() {
#ifdef KILN_X86
    static const simd_level best = [] {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f")) return simd_level::avx512;
        // F16C from cpuid: clang 14's __builtin_cpu_supports has no "f16c".
        unsigned a = 0, b = 0, c = 0, d = 0;
        bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
        if (__builtin_cpu_supports("avx2") && f16c) return simd_level::avx2;
        return simd_level::scalar;
    }();
    return best;
#else
    return simd_level::scalar;
#endif
}

void floats_to_half(const float* x, std::uint16_t* y, std::size_t n, simd_level level) {
    check_level(level);
#ifdef KILN_X86
    if (level == simd_level::avx512) return half_avx512(x, y, n);
    if (level == simd_level::avx2) return half_avx2(x, y, n);
#endif
    half_scalar(x, y, n);
}

void floats_to_bfloat16(const float* x, std::uint16_t* y, std::size_t n, simd_level level) {
    check_level(level);
#ifdef KILN_X86
    if (level == simd_level::avx512) return bfloat16_avx512(x, y, n);
    if (level == simd_level::avx2) return bfloat16_avx2(x, y, n);
#endif
    bfloat16_scalar(x, y, n);
}

}  // namespace kiln
