// Lane kernels: one block per lane (the elements a reduction, softmax or normalisation combines),
// its threads striding over the lane and combining through warp shuffles and shared memory.
#pragma once
#include "kiln_elementwise.cuh"

namespace kiln {

__device__ __forceinline__ float neg_inf_f() { return -__int_as_float(0x7f800000); }

// Every thread gets the combination of all threads' v; smem holds 32 values.
template <class T, class Op>
__device__ T block_reduce(T v, Op op, T identity, T* smem) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
    __syncthreads();   // smem may still be read by a previous reduction
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    v = lane < warps ? smem[lane] : identity;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Every lane of the warp gets the sum of all 32 lanes' v (row kernels: one warp per lane).
template <class T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <class T> __device__ __forceinline__ T max_nan(T a, T b) { return (b > a || b != b) ? b : a; }
template <class T> __device__ __forceinline__ T min_nan(T a, T b) { return (b < a || b != b) ? b : a; }

}  // namespace kiln
