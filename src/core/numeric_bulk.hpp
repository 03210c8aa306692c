// Bulk float32 -> float16 / bfloat16 conversion, vectorised where the CPU can (chosen at run
// time), giving exactly the bits of half(double(x)) and bfloat16(double(x)) (numeric.hpp): round
// to nearest, ties to even; overflow to +-Inf; NaN to the quiet NaN of its sign (payload dropped).
#pragma once
#include <cstddef>
#include <cstdint>

namespace kiln {

enum class simd_level {
    scalar,
    avx2,     // AVX2 and F16C
    avx512,   // AVX-512F
};
// The best level this CPU runs.
simd_level best_simd_level();

// y[i] = the float16 (bfloat16) bits of x[i], for i < n. `level` above best_simd_level() is an error.
void floats_to_half(const float* x, std::uint16_t* y, std::size_t n, simd_level level = best_simd_level());
void floats_to_bfloat16(const float* x, std::uint16_t* y, std::size_t n, simd_level level = best_simd_level());

}  // namespace kiln
