// Element types of generated kernels: storage types as kiln lays them out in memory, and the
// compute type each is loaded into (float for float16/bfloat16, the type itself otherwise).
// Self-contained: NVRTC compiles it without the CUDA headers.
#pragma once

namespace kiln {

typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned long long index_t;

struct half { u16 bits; };
struct bf16 { u16 bits; };

__device__ __forceinline__ float to_float(half h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    return f;
}
__device__ __forceinline__ float to_float(bf16 b) { return __uint_as_float(static_cast<u32>(b.bits) << 16); }

template <class T> struct compute_of { typedef T type; };
template <> struct compute_of<half> { typedef float type; };
template <> struct compute_of<bf16> { typedef float type; };

template <class T> __device__ __forceinline__ typename compute_of<T>::type load(const T& x) { return x; }
__device__ __forceinline__ float load(const half& x) { return to_float(x); }
__device__ __forceinline__ float load(const bf16& x) { return to_float(x); }

// Round to nearest even, as the host conversions do.
template <class T> struct storer {
    template <class C> __device__ __forceinline__ static T from(C c) { return static_cast<T>(c); }
};
template <> struct storer<half> {
    template <class C> __device__ __forceinline__ static half from(C c) {
        half h;
        float f = static_cast<float>(c);
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
        return h;
    }
};
template <> struct storer<bf16> {
    template <class C> __device__ __forceinline__ static bf16 from(C c) {
        bf16 b;
        float f = static_cast<float>(c);
        u32 u = __float_as_uint(f);
        if ((u & 0x7fffffffu) > 0x7f800000u) b.bits = static_cast<u16>((u >> 16) | 0x40);   // NaN stays NaN
        else b.bits = static_cast<u16>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        return b;
    }
};
template <> struct storer<bool> {
    template <class C> __device__ __forceinline__ static bool from(C c) { return c != C(0); }
};
template <class T, class C> __device__ __forceinline__ void store(T& out, C c) { out = storer<T>::from(c); }

}  // namespace kiln
