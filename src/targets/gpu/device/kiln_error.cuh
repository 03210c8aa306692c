// Run-time checks in generated kernels. Generated code cannot throw, so a kernel that can meet bad
// data (an index out of range, an integer division by zero, 0 to a negative integer power) takes its instruction's error slot
// as its last parameter and records the first failure there with kiln::raise; it then writes
// something harmless (never reads or writes out of bounds) and goes on. After each run the
// executable reads every slot back at once (error_flags.hpp) and throws naming the instruction.
// Self-contained: NVRTC compiles it without the CUDA headers.
#pragma once
#include "kiln_types.cuh"

namespace kiln {

// Matches gpu::error_slot on the host: the first failure's code, then what it was about.
struct error_slot {
    u32 code;          // 0: no failure
    u32 pad;
    i64 value;         // the bad value (the index)
    u64 position;      // where in its tensor (the indices element, row-major)
};

enum error_code : u32 {
    error_index_out_of_range = 1,   // value: the index; position: its element in the indices
    error_division_by_zero = 2,     // value: which op of the kernel; position: the element
    error_zero_to_negative_power = 3,   // value: the exponent; position: the element
};

// Records a failure unless one is recorded already (the first thread wins; the others' are the
// same kind of mistake in the same instruction).
__device__ __forceinline__ void raise(error_slot* slot, u32 code, i64 value, u64 position) {
    if (atomicCAS(&slot->code, 0u, code) == 0u) {
        slot->value = value;
        slot->position = position;
    }
}

// Index k of a dim of n elements (negative counts from the end) as a position in [0, n); -1 when
// k is outside [-n, n), recorded then with `position`, k's element in the indices (row-major).
__device__ __forceinline__ i64 checked_index(i64 k, i64 n, error_slot* slot, u64 position) {
    if (k < -n || k >= n) {
        raise(slot, error_index_out_of_range, k, position);
        return -1;
    }
    return k < 0 ? k + n : k;
}

// The divisor of an integer div or mod, recording a zero (value: which checked op of the kernel,
// position: the element); the scalar helper then gives 0 for that element.
template <class C> __device__ __forceinline__ C checked_divisor(C b, error_slot* slot, i64 op, u64 position) {
    if (b == C(0)) raise(slot, error_division_by_zero, op, position);
    return b;
}

// The base of an integer pow, recording 0 raised to a negative exponent (value: the exponent,
// position: the element); the scalar helper then gives 0 for that element.
template <class C, class E>
__device__ __forceinline__ C checked_power_base(C a, E b, error_slot* slot, u64 position) {
    if (a == C(0) && b < E(0)) raise(slot, error_zero_to_negative_power, static_cast<i64>(b), position);
    return a;
}

}  // namespace kiln
