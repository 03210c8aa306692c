// Run-time checks in generated kernels. Generated code cannot throw, so a kernel that can meet bad
// data (an index out of range, an integer division by zero) takes its instruction's error slot
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
    error_division_by_zero = 2,     // position: the output element
};

// Records a failure unless one is recorded already (the first thread wins; the others' are the
// same kind of mistake in the same instruction).
__device__ __forceinline__ void raise(error_slot* slot, u32 code, i64 value, u64 position) {
    if (atomicCAS(&slot->code, 0u, code) == 0u) {
        slot->value = value;
        slot->position = position;
    }
}

}  // namespace kiln
