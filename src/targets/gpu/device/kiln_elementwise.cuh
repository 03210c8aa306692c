// Elementwise kernels: one thread per output element (grid-stride), its coordinates from the
// output's lens and each operand's offset from that operand's strides, all baked in by the
// generator (elementwise.cpp) as compile-time constants, so NVRTC folds the index arithmetic.
#pragma once
#include "kiln_small_types.cuh"

namespace kiln {

// Offset of row-major element `i` of lens L in a tensor with strides S (rank R).
template <int R>
struct layout {
    index_t lens[R > 0 ? R : 1];
    index_t strides[R > 0 ? R : 1];
    __device__ __forceinline__ index_t offset(index_t i) const {
        index_t off = 0;
#pragma unroll
        for (int d = R - 1; d >= 0; --d) {
            index_t c = i % lens[d];
            i /= lens[d];
            off += c * strides[d];
        }
        return off;
    }
};

// A layout whose coordinate d is divided by div[d] first: blocked quantization scales, each
// covering div[d] consecutive elements of dim d.
template <int R>
struct block_layout {
    index_t lens[R > 0 ? R : 1];
    index_t strides[R > 0 ? R : 1];
    index_t div[R > 0 ? R : 1];
    __device__ __forceinline__ index_t offset(index_t i) const {
        index_t off = 0;
#pragma unroll
        for (int d = R - 1; d >= 0; --d) {
            index_t c = i % lens[d];
            i /= lens[d];
            off += c / div[d] * strides[d];
        }
        return off;
    }
};

// V consecutive elements moved as one load or store (the generator's vector path: 8 to 16 bytes
// per access keep enough bytes in flight for DRAM's bandwidth, where one 2-byte access per thread
// reaches a third of it).
template <class T, int V>
struct alignas(sizeof(T) * V) vec {
    T v[V];
};

__device__ __forceinline__ index_t global_thread() { return static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ index_t grid_threads() { return static_cast<index_t>(gridDim.x) * blockDim.x; }

}  // namespace kiln
