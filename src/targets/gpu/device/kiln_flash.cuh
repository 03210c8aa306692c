// Flash attention for float16/bfloat16 (sm_80 and later): one block of WARPS warps takes 16 query
// rows per warp of one (batch, head); key/value tiles of BC rows pass through shared memory, the
// warp's scores Q·Kᵀ and its sum P·V run on the tensor cores (mma.sync m16n8k16, fp32
// accumulation), and the softmax is online in fp32 (a running max and sum per row), so the score
// matrix never leaves registers. Tiles arrive by cp.async, the next key/value tile copied while
// the current one is computed where two buffers fit; the output leaves through shared memory as
// whole rows. The generated source gives the problem as a configuration:
//   struct cfg {
//       typedef kiln::half T;      // q, k, v and y (half or bf16)
//       typedef bool M;            // the mask's element type (bool, or T for an additive mask)
//       static constexpr int WARPS, BC, D, DV, MASK;   // MASK: 0 none, 1 additive, 2 bool
//       static constexpr long long B, H, S, HKV, SKV, CAUSAL_OFFSET;
//       static constexpr bool CAUSAL, VEC, YVEC;  // VEC: q, k, v rows are unit-stride and 16-byte
//                                                 // aligned; YVEC: so are y's
//       static constexpr float SCALE, SOFTCAP;
//       static constexpr long long QB, QH, QS, QD, KB, KH, KS, KD, VB, VH, VS, VD, YB, YH, YS, YD,
//                                  MB, MH, MS, MJ;   // element strides (0 where a mask broadcasts)
//   };
// Self-contained PTX (no CUDA headers), like the rest of the device library.
#pragma once
#include "kiln_types.cuh"

namespace kiln {
namespace flash {

__device__ __forceinline__ u32 smem_address(const void* p) {
    u32 a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

// Four 8x8 b16 matrices from shared memory; lanes 8i..8i+7 give matrix i's row addresses.
__device__ __forceinline__ void ldsm_x4(u32 (&r)[4], const u16* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_address(p)));
}
__device__ __forceinline__ void ldsm_x4_trans(u32 (&r)[4], const u16* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_address(p)));
}

// c += a (16x16, row major) * b (16x8, column major), fp32 accumulation.
template <class T> struct mma;
template <> struct mma<half> {
    static __device__ __forceinline__ void run(float (&c)[4], const u32 (&a)[4], u32 b0, u32 b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
    // Two floats as the type's pair, lo in the low half (round to nearest even).
    static __device__ __forceinline__ u32 pack(float lo, float hi) {
        u32 r;
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
    }
};
template <> struct mma<bf16> {
    static __device__ __forceinline__ void run(float (&c)[4], const u32 (&a)[4], u32 b0, u32 b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
    static __device__ __forceinline__ u32 pack(float lo, float hi) {
        u32 r;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
    }
};

// Rows [first, first + ROWS) of a [rows, W] operand (row stride RS, column stride CS) into shared
// memory with pitch P by THREADS threads; rows at or past `limit` are zeros (tails). VEC: 16-byte
// cp.async copies that land in the background (cp_wait, then a barrier, before reading them);
// otherwise element by element, landed when the call returns.
template <int ROWS, int W, int P, bool VEC, long long RS, long long CS, int THREADS, class T>
__device__ __forceinline__ void load_rows(u16* dst, const T* src, int first, int limit) {
    const u16* s = reinterpret_cast<const u16*>(src);
    if constexpr (VEC) {
        constexpr int CH = W / 8;
#pragma unroll
        for (int it = 0; it < (ROWS * CH + THREADS - 1) / THREADS; ++it) {
            const int c = threadIdx.x + it * THREADS, r = c / CH, col = (c % CH) * 8;
            if (ROWS * CH % THREADS != 0 && c >= ROWS * CH) break;
            const bool in = first + r < limit;
            // A row past the end copies no bytes (zero fill) from a valid address.
            const u16* from = s + (in ? static_cast<long long>(first + r) * RS : 0) + col;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                         :: "r"(smem_address(dst + r * P + col)), "l"(from), "r"(in ? 16 : 0) : "memory");
        }
    } else {
        for (int c = threadIdx.x; c < ROWS * W; c += THREADS) {
            const int r = c / W, col = c % W;
            dst[r * P + col] = first + r < limit ? s[static_cast<long long>(first + r) * RS + col * CS] : u16(0);
        }
    }
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most N of this thread's committed groups are still in flight.
template <int N> __device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory"); }

template <class C>
__device__ __forceinline__ void attention(typename C::T* __restrict__ y, const typename C::T* __restrict__ q,
                                          const typename C::T* __restrict__ k, const typename C::T* __restrict__ v,
                                          const typename C::M* __restrict__ mask) {
    typedef typename C::T T;
    typedef mma<T> op;
    constexpr int BR = 16 * C::WARPS, BC = C::BC, D = C::D, DV = C::DV, THREADS = 32 * C::WARPS;
    // Rows padded by 16 bytes: ldmatrix's eight row addresses then fall in distinct banks.
    constexpr int QP = D + 8, KP = D + 8, VP = DV + 8;
    // Two key/value buffers where they fit the 48 KiB of static shared memory with q's tile: the
    // next tile's copies then run while this one is computed.
    constexpr int STAGES = (BR * QP + 2 * BC * (KP + VP)) * 2 <= 48 * 1024 ? 2 : 1;
    constexpr long long TILES = (C::S + BR - 1) / BR, GROUP = C::H / C::HKV;
    const float NEG_INF = -__int_as_float(0x7f800000);
    constexpr float LOG2E = 1.4426950408889634f;
    __shared__ __align__(16) u16 sq[BR * QP];
    __shared__ __align__(16) u16 sk[STAGES][BC * KP];
    __shared__ __align__(16) u16 sv[STAGES][BC * VP];

    // The heaviest causal tiles (the last query rows) first.
    const int tile = static_cast<int>(TILES - 1 - blockIdx.x % TILES);
    const long long bh = blockIdx.x / TILES, h = bh % C::H, b = bh / C::H, kvh = h / GROUP;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
    const int row0 = tile * BR;
    const T* qb = q + b * C::QB + h * C::QH;
    const T* kb = k + b * C::KB + kvh * C::KH;
    const T* vb = v + b * C::VB + kvh * C::VH;

    int keys = static_cast<int>(C::SKV);
    if (C::CAUSAL) {   // no key past the block's last row's limit
        const long long last = (row0 + BR < C::S ? row0 + BR : C::S) - 1 + C::CAUSAL_OFFSET + 1;
        keys = last < keys ? static_cast<int>(last > 0 ? last : 0) : keys;
    }
    auto load_keys = [&](int kt, int stage) {
        load_rows<BC, D, KP, C::VEC, C::KS, C::KD, THREADS>(sk[stage], kb, kt, C::SKV);
        load_rows<BC, DV, VP, C::VEC, C::VS, C::VD, THREADS>(sv[stage], vb, kt, C::SKV);
    };
    // q's tile and the first key/value tile in flight together.
    load_rows<BR, D, QP, C::VEC, C::QS, C::QD, THREADS>(sq, qb, row0, C::S);
    if (keys > 0) load_keys(0, 0);
    cp_commit();

    // This thread's two query rows: g and g + 8 of the warp's sixteen.
    const int rows[2] = {row0 + warp * 16 + g, row0 + warp * 16 + g + 8};
    // Rows past the end read row S - 1's mask (their results are not stored).
    const long long mask_rows[2] = {rows[0] < C::S ? rows[0] : C::S - 1, rows[1] < C::S ? rows[1] : C::S - 1};
    u32 qf[D / 16][4];
    float o[DV / 8][4];
#pragma unroll
    for (int n = 0; n < DV / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float top[2] = {NEG_INF, NEG_INF}, sum[2] = {0.0f, 0.0f};

    for (int kt = 0, t = 0; kt < keys; kt += BC, ++t) {
        const int stage = STAGES == 2 ? static_cast<int>(t % 2) : 0;
        if (STAGES == 2 && kt + BC < keys) {   // the next tile into the other buffer
            load_keys(kt + BC, stage ^ 1);
            cp_commit();
            cp_wait<1>();
        } else {
            cp_wait<0>();
        }
        __syncthreads();   // every thread's copies of this tile (and q's) landed
        // A warp whose sixteen rows are all past the end (the last query tile's) only helps copy.
        if (row0 + warp * 16 < C::S) {
            if (kt == 0) {
#pragma unroll
                for (int kk = 0; kk < D / 16; ++kk)
                    ldsm_x4(qf[kk], sq + (warp * 16 + lane % 16) * QP + kk * 16 + (lane / 16) * 8);
            }
            const u16* ks = sk[stage];
            const u16* vs = sv[stage];

            // The mask's values first, so that their loads overlap the tensor-core work.
            float bias[C::MASK != 0 ? BC / 8 : 1][4];
            if constexpr (C::MASK != 0) {
#pragma unroll
                for (int n = 0; n < BC / 8; ++n)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        int j = kt + n * 8 + t4 * 2 + e % 2;
                        j = j < C::SKV ? j : static_cast<int>(C::SKV - 1);   // tail keys are cut below
                        const auto m = mask[b * C::MB + h * C::MH + mask_rows[e / 2] * C::MS + j * C::MJ];
                        if constexpr (C::MASK == 2) bias[n][e] = m ? 0.0f : NEG_INF;
                        else bias[n][e] = static_cast<float>(load(m));
                    }
            }

            float s[BC / 8][4];
#pragma unroll
            for (int n = 0; n < BC / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
                for (int np = 0; np < BC / 16; ++np) {
                    u32 f[4];
                    ldsm_x4(f, ks + (np * 16 + lane % 8 + (lane / 16) * 8) * KP + kk * 16 + ((lane / 8) % 2) * 8);
                    op::run(s[2 * np], qf[kk], f[0], f[1]);
                    op::run(s[2 * np + 1], qf[kk], f[2], f[3]);
                }

            // Logits (scale, softcap, mask, causal limit, tail keys), then the online softmax per row.
            float tile_top[2] = {NEG_INF, NEG_INF};
#pragma unroll
            for (int n = 0; n < BC / 8; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int r = e / 2;
                    const int i = rows[r], j = kt + n * 8 + t4 * 2 + e % 2;
                    // In base 2 (times log2 e), so that each probability is one exp2 of a difference.
                    float x;
                    if constexpr (C::SOFTCAP > 0) x = C::SOFTCAP * LOG2E * tanhf(s[n][e] * (C::SCALE / C::SOFTCAP));
                    else x = s[n][e] * (C::SCALE * LOG2E);
                    if constexpr (C::MASK != 0) x = fmaf(bias[n][e], LOG2E, x);
                    if (j >= C::SKV || (C::CAUSAL && j > i + C::CAUSAL_OFFSET)) x = NEG_INF;
                    s[n][e] = x;
                    tile_top[r] = fmaxf(tile_top[r], x);
                }
            float base[2];
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                tile_top[r] = fmaxf(tile_top[r], __shfl_xor_sync(0xffffffffu, tile_top[r], 1));
                tile_top[r] = fmaxf(tile_top[r], __shfl_xor_sync(0xffffffffu, tile_top[r], 2));
                const float next = fmaxf(top[r], tile_top[r]);
                base[r] = next == NEG_INF ? 0.0f : next;   // a row with no key yet keeps zeros
                const float alpha = exp2f(top[r] - base[r]);
                top[r] = next;
                sum[r] *= alpha;
#pragma unroll
                for (int n = 0; n < DV / 8; ++n) {
                    o[n][2 * r] *= alpha;
                    o[n][2 * r + 1] *= alpha;
                }
            }
#pragma unroll
            for (int n = 0; n < BC / 8; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    s[n][e] = exp2f(s[n][e] - base[e / 2]);
                    sum[e / 2] += s[n][e];
                }

            // P·V: the score accumulators of two key octets are the A operand of sixteen keys.
#pragma unroll
            for (int kc = 0; kc < BC / 16; ++kc) {
                const u32 a[4] = {op::pack(s[2 * kc][0], s[2 * kc][1]), op::pack(s[2 * kc][2], s[2 * kc][3]),
                                  op::pack(s[2 * kc + 1][0], s[2 * kc + 1][1]),
                                  op::pack(s[2 * kc + 1][2], s[2 * kc + 1][3])};
#pragma unroll
                for (int np = 0; np < DV / 16; ++np) {
                    u32 f[4];
                    ldsm_x4_trans(f, vs + (kc * 16 + lane % 8 + ((lane / 8) % 2) * 8) * VP + np * 16 + (lane / 16) * 8);
                    op::run(o[2 * np], a, f[0], f[1]);
                    op::run(o[2 * np + 1], a, f[2], f[3]);
                }
            }
        }
        __syncthreads();   // this tile's buffer is consumed before it is refilled
        if (STAGES == 1 && kt + BC < keys) {
            load_keys(kt + BC, 0);
            cp_commit();
        }
    }
    cp_wait<0>();   // nothing left in flight (a block without keys loaded q only)
    __syncthreads();   // and every thread's copies of q landed (the rows below reuse its tile)
    if (row0 + warp * 16 >= C::S) return;

    T* yb = y + b * C::YB + h * C::YH;
    float inv[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        float total = sum[r];
        total += __shfl_xor_sync(0xffffffffu, total, 1);
        total += __shfl_xor_sync(0xffffffffu, total, 2);
        inv[r] = total > 0.0f ? 1.0f / total : 0.0f;
    }
    if constexpr (C::YVEC && DV <= D) {
        // The warp's sixteen rows through its own rows of q's tile (read at the first key tile
        // only), then out as whole rows in 16-byte stores instead of 4-byte pieces.
        u16* staged = sq + warp * 16 * QP;
#pragma unroll
        for (int r = 0; r < 2; ++r)
#pragma unroll
            for (int n = 0; n < DV / 8; ++n)
                *reinterpret_cast<u32*>(staged + (g + 8 * r) * QP + n * 8 + t4 * 2) =
                    op::pack(o[n][2 * r] * inv[r], o[n][2 * r + 1] * inv[r]);
        __syncwarp();
        constexpr int CH = DV / 8;   // 16-byte pieces per row
#pragma unroll
        for (int c = lane; c < 16 * CH; c += 32) {
            const int r = c / CH, col = (c % CH) * 8, row = row0 + warp * 16 + r;
            u32 x0, x1, x2, x3;
            asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                         : "=r"(x0), "=r"(x1), "=r"(x2), "=r"(x3)
                         : "r"(smem_address(staged + r * QP + col))
                         : "memory");
            if (row < C::S)
                asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
                             :: "l"(yb + row * C::YS + col), "r"(x0), "r"(x1), "r"(x2), "r"(x3) : "memory");
        }
        return;
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        if (rows[r] >= C::S) continue;
#pragma unroll
        for (int n = 0; n < DV / 8; ++n) {
            T* out = yb + rows[r] * C::YS + (n * 8 + t4 * 2) * C::YD;
            if constexpr (C::YD == 1 && C::YS % 2 == 0 && C::YH % 2 == 0 && C::YB % 2 == 0) {
                *reinterpret_cast<u32*>(out) = op::pack(o[n][2 * r] * inv[r], o[n][2 * r + 1] * inv[r]);
            } else {
                store(out[0], o[n][2 * r] * inv[r]);
                store(out[C::YD], o[n][2 * r + 1] * inv[r]);
            }
        }
    }
}

}  // namespace flash
}  // namespace kiln
