// float32 attention as one fused kernel: softmax(softcap(scale q kᵀ) + bias) v computed tile by
// tile with an online softmax, so the scores of a query tile never leave L1 and no [Sq, Skv]
// matrix is written. A task is one batch entry, one query head and a run of query tiles; it
// packs the keys its rows see once, then for each tile and block of keys computes the scores,
// adds the bias (the mask, the causal limit) and folds the block into running row maxima, sums
// and outputs (rescaled by exp(old max - new max)), all in float32. Key panels that cannot
// count are skipped (query_tile says when). The inner loops are compiled for AVX-512, AVX2 or
// the baseline, chosen from the CPU's features at run time; the tasks run on the program's
// OpenMP pool.
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "ops/attention.hpp"
#include "targets/cpu/kernels.hpp"

namespace kiln {
namespace {

// Keys per block: a score row of the tile is 8 AVX-512 vectors, computed as panels of 64 keys (4
// vectors, x 4 rows: 16 accumulators). 128 keys a block halve the per-row softmax steps against
// 64 (with the sums kept by lane: the BERT-like encoder's attention alone 0.12 -> 0.09 ms at 1
// thread).
constexpr std::size_t block_keys = 128;
constexpr std::size_t panel_keys = 64;
constexpr std::size_t tile_rows = 32;    // query rows per task: kᵀ and v blocks are reused over them
constexpr float neg_inf = -std::numeric_limits<float>::infinity();
constexpr std::size_t row_group = 4;     // rows whose products share each load of kᵀ or v

// 16 floats: one AVX-512 register, two AVX2 ones, four SSE ones (the compiler lowers the vector
// extension to what the function's target has). Accumulators of this type stay in registers,
// where the `omp simd` loops kept each output row in memory and waited on store forwarding.
constexpr std::size_t lanes = 16;
typedef float vec16 __attribute__((vector_size(64)));

// The same, at a float's alignment: loads and stores of rows at any offset (GCC and Clang let a
// vector of float alias float).
typedef float vec16_unaligned __attribute__((vector_size(64), aligned(4)));

// Lanes summed (or maximised) pairwise: 15 operations, 4 deep.
[[gnu::always_inline]] inline float lane_sum(float* t) {
#pragma GCC unroll 4
    for (std::size_t w = lanes / 2; w >= 1; w /= 2)
#pragma GCC unroll 8
        for (std::size_t l = 0; l < w; ++l) t[l] += t[l + w];
    return t[0];
}
[[gnu::always_inline]] inline float lane_max(float* t) {
#pragma GCC unroll 4
    for (std::size_t w = lanes / 2; w >= 1; w /= 2)
#pragma GCC unroll 8
        for (std::size_t l = 0; l < w; ++l) t[l] = t[l] > t[l + w] ? t[l] : t[l + w];
    return t[0];
}

// Element strides of a 4-dim operand (0 where it broadcasts) and its base pointer.
struct operand4 {
    std::size_t s[4] = {0, 0, 0, 0};
};

operand4 strides4(const shape& sh) {
    operand4 o;
    std::size_t lead = 4 - sh.ndim();
    for (std::size_t d = 0; d < sh.ndim(); ++d)
        o.s[lead + d] = sh.lens()[d] == 1 ? 0 : sh.strides()[d];
    return o;
}

// What every task reads: the sizes, strides and attributes, fixed when the kernel is built.
struct attention_plan {
    std::size_t batch = 0, heads = 0, group = 1, queries = 0, keys = 0, d = 0, dv = 0;
    operand4 q, k, v, y, mask;
    bool has_mask = false, bool_mask = false, causal = false;
    std::int64_t causal_offset = 0;
    float scale = 1, softcap = 0;
    std::size_t tiles_per_head = 0, chunks_per_head = 1;   // query tiles of 32 rows; tasks per head
    std::size_t dv_padded() const { return (dv + lanes - 1) / lanes * lanes; }
    std::size_t padded_keys() const { return (keys + block_keys - 1) / block_keys * block_keys; }
    // A query tile's buffers (query_tile), then every key packed and the panels' largest key
    // norms (pack_keys).
    std::size_t tile_floats() const {
        return tile_rows * (d + 2 * block_keys + dv_padded() + lanes + 3);
    }
    std::size_t scratch_floats() const {
        return tile_floats() + padded_keys() * (d + dv_padded()) + padded_keys() / panel_keys;
    }
};

struct attention_args {
    const float *q, *k, *v;
    const void* mask;
    float* y;
};

// exp(x) for x <= 0 (every argument here is a score minus its row maximum, or -inf), to ~2 ulp:
// Cephes' polynomial on x - n ln2, times 2^n built in the exponent bits; 0 below -87 (and for
// -inf), NaN for NaN. Plain arithmetic, so that it vectorises inside the simd loops (libm's expf
// does not without -ffast-math).
[[gnu::always_inline]] inline float exp_nonpositive(float x_in) {
    bool tiny = !(x_in >= -87.0f);   // NaN too: the arithmetic below runs on a number
    float x = tiny ? -87.0f : x_in;
    // n = round(x / ln2) by the 1.5 * 2^23 trick (std::floor does not vectorise here).
    constexpr float round_big = 12582912.0f;
    float n = (x * 1.44269504088896341f + round_big) - round_big;
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    float two_n = std::bit_cast<float>((static_cast<std::int32_t>(n) + 127) << 23);
    float e = tiny ? 0.0f : p * two_n;
    return x_in != x_in ? x_in : e;   // a NaN score gives NaN, as the reference
}

// sc[r][0, 64) = q[r] · kᵀ over a panel of 64 keys (kt: [d][block_keys] from the panel's first
// key), R rows at a time: R x 4 accumulators, each load of kᵀ shared by the R rows.
template <std::size_t R>
[[gnu::always_inline]] inline void score_rows(const float* qp, const float* kt, float* sc, std::size_t d) {
    vec16 acc[R][4] = {};
    for (std::size_t c = 0; c < d; ++c) {
        vec16 k[4];
#pragma GCC unroll 4
        for (std::size_t t = 0; t < 4; ++t) k[t] = *reinterpret_cast<const vec16_unaligned*>(kt + c * block_keys + t * lanes);
#pragma GCC unroll 4
        for (std::size_t r = 0; r < R; ++r) {
            float q = qp[r * d + c];
#pragma GCC unroll 4
            for (std::size_t t = 0; t < 4; ++t) acc[r][t] += k[t] * q;
        }
    }
#pragma GCC unroll 4
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (std::size_t t = 0; t < 4; ++t) *reinterpret_cast<vec16_unaligned*>(sc + r * block_keys + t * lanes) = acc[r][t];
}
static_assert(panel_keys == 4 * lanes && block_keys % panel_keys == 0);

// Panel p of the block (keys [64 p, 64 p + 64)) for every row of the tile.
[[gnu::always_inline]] inline void score_panel(const float* qp, const float* kt, float* sc, std::size_t rows, std::size_t d,
                                               std::size_t p) {
    std::size_t j = p * panel_keys, r = 0;
    for (; r + row_group <= rows; r += row_group) score_rows<row_group>(qp + r * d, kt + j, sc + r * block_keys + j, d);
    for (; r < rows; ++r) score_rows<1>(qp + r * d, kt + j, sc + r * block_keys + j, d);
}

// o[r] += p[r] · v over the block, R rows and 16 output columns at a time: R independent
// accumulators in registers, each load of v shared by the R rows.
template <std::size_t R>
[[gnu::always_inline]] inline void accumulate_rows(const float* p, const float* vp, float* o, std::size_t dvp,
                                                   std::size_t keys) {
    for (std::size_t c = 0; c < dvp; c += lanes) {
        vec16 acc[R];
#pragma GCC unroll 4
        for (std::size_t r = 0; r < R; ++r) acc[r] = *reinterpret_cast<const vec16_unaligned*>(o + r * dvp + c);
        for (std::size_t j = 0; j < keys; ++j) {
            vec16 v = *reinterpret_cast<const vec16_unaligned*>(vp + j * dvp + c);
#pragma GCC unroll 4
            for (std::size_t r = 0; r < R; ++r) acc[r] += v * p[r * block_keys + j];
        }
#pragma GCC unroll 4
        for (std::size_t r = 0; r < R; ++r) *reinterpret_cast<vec16_unaligned*>(o + r * dvp + c) = acc[r];
    }
}

// Over the keys of one panel (p and vp at its first key).
[[gnu::always_inline]] inline void accumulate(const float* p, const float* vp, float* o, std::size_t rows, std::size_t dvp) {
    std::size_t r = 0;
    for (; r + row_group <= rows; r += row_group)
        accumulate_rows<row_group>(p + r * block_keys, vp, o + r * dvp, dvp, panel_keys);
    for (; r < rows; ++r) accumulate_rows<1>(p + r * block_keys, vp, o + r * dvp, dvp, panel_keys);
}

// The keys [0, keys) of one batch entry and key/value head, packed for the blocks: block t's kᵀ
// at kt + t * d * 128 ([d][128]) and its v rows at vp + t * 128 * dvp ([128][dvp]), zero past
// the last key and past dv; kn[p]: the largest norm of a key of panel p (64 keys).
[[gnu::always_inline]] inline void pack_keys(const attention_plan& pl, const float* k, const float* v, std::size_t keys,
                                             float* __restrict kt, float* __restrict vp, float* __restrict kn) {
    const std::size_t d = pl.d, dv = pl.dv, dvp = pl.dv_padded(), bk = block_keys;
    std::size_t padded = (keys + bk - 1) / bk * bk;
    std::fill(kt, kt + padded * d, 0.0f);
    std::fill(vp, vp + padded * dvp, 0.0f);
    std::fill(kn, kn + padded / panel_keys, 0.0f);
    for (std::size_t j = 0; j < keys; ++j) {
        float* kb = kt + j / bk * d * bk + j % bk;
        const float* kj = k + j * pl.k.s[2];
        float norm = 0;
        for (std::size_t c = 0; c < d; ++c) {
            float x = kj[c * pl.k.s[3]];
            kb[c * bk] = x;
            norm += x * x;
        }
        kn[j / panel_keys] = std::max(kn[j / panel_keys], std::sqrt(norm));
        const float* vj = v + j * pl.v.s[2];
        float* vr = vp + j * dvp;
        if (pl.v.s[3] == 1) std::copy(vj, vj + dv, vr);
        else
            for (std::size_t c = 0; c < dv; ++c) vr[c] = vj[c * pl.v.s[3]];
    }
}

// The bias of query row i over the block of keys [j0, j0 + 128): the mask, the causal limit
// (`limit`: the last key the row sees) and the padding past the last key (n keys in the block).
[[gnu::always_inline]] inline void row_bias(const attention_plan& pl, const attention_args& a, std::size_t mask_row,
                                            std::size_t j0, std::size_t n, std::int64_t limit, float* __restrict bias) {
    const std::size_t bk = block_keys, ms = pl.mask.s[3];
    std::fill(bias, bias + bk, 0.0f);
    if (pl.has_mask && pl.bool_mask) {
        const bool* m = static_cast<const bool*>(a.mask) + mask_row + j0 * ms;
        for (std::size_t j = 0; j < n; ++j) bias[j] = m[j * ms] ? 0.0f : neg_inf;
    } else if (pl.has_mask) {
        const float* m = static_cast<const float*>(a.mask) + mask_row + j0 * ms;
        if (ms == 1) std::copy(m, m + n, bias);
        else
            for (std::size_t j = 0; j < n; ++j) bias[j] = m[j * ms];
    }
    std::int64_t first_cut = std::max<std::int64_t>(limit + 1 - static_cast<std::int64_t>(j0), 0);
    for (std::size_t j = std::min<std::size_t>(static_cast<std::size_t>(first_cut), n); j < bk; ++j) bias[j] = neg_inf;
}

// Panel p's scores for the tile's rows, softcap applied, the bias added (bias: [rows][128], or
// one row for all where `shared`; null: none) and each row's maximum folded into top.
[[gnu::always_inline]] inline void score_panel_rows(const attention_plan& pl, const float* qp, const float* kb, float* sc,
                                                    std::size_t rows, std::size_t p, const float* bias, bool shared,
                                                    float* top) {
    score_panel(qp, kb, sc, rows, pl.d, p);
    for (std::size_t r = 0; r < rows; ++r) {
        float* s = sc + r * block_keys + p * panel_keys;
        if (pl.softcap > 0)
            for (std::size_t j = 0; j < panel_keys; ++j) s[j] = pl.softcap * std::tanh(s[j] * pl.scale / pl.softcap);
        // The bias added and the maximum taken lane-wise in one pass, the lanes then folded
        // pairwise (an `omp simd` reduction ends in a chain of 16 scalar operations).
        const float* br = bias ? bias + (shared ? 0 : r) * block_keys + p * panel_keys : nullptr;
        float part[lanes];
        std::fill(part, part + lanes, neg_inf);
        for (std::size_t t = 0; t < panel_keys / lanes; ++t) {
            float* st = s + t * lanes;
            if (br) {
                const float* bt = br + t * lanes;
#pragma omp simd
                for (std::size_t l = 0; l < lanes; ++l) {
                    float x = st[l] + bt[l];
                    st[l] = x;
                    part[l] = part[l] > x ? part[l] : x;
                }
            } else {
#pragma omp simd
                for (std::size_t l = 0; l < lanes; ++l) part[l] = part[l] > st[l] ? part[l] : st[l];
            }
        }
        top[r] = std::max(top[r], lane_max(part));
    }
}

// Query rows [i0, i0 + rows) of batch entry b and head h over the packed keys [0, last_key].
//
// A panel of keys whose bias is so negative over the whole tile that its keys cannot count is
// skipped (neither scored nor multiplied into v): exactly, not by a threshold on the mask. Its
// keys' logits are at most the largest bias B of the panel plus the largest score the panel's
// keys can give a row, ||q|| max ||k|| (Cauchy-Schwarz; softcap where there is one); where that
// is below the row's running maximum minus 88 for every row, each of their weights is below
// e^-87, which exp_nonpositive gives as 0: the skip changes no bit. A float mask of -1e9 above
// the diagonal (a causal mask as exporters write it) so skips half of the decoder's key panels
// of the first query tiles. Panels past the causal limit of the tile's last row, or past the
// last key, are skipped outright.
[[gnu::always_inline]] inline void query_tile(const attention_plan& pl, const attention_args& a, std::size_t b,
                                              std::size_t h, std::size_t i0, std::size_t rows, const float* kt,
                                              const float* vp, const float* kn, float* scratch) {
    const std::size_t d = pl.d, dv = pl.dv, dvp = pl.dv_padded(), bk = block_keys;
    constexpr std::size_t panels = block_keys / panel_keys;
    float* __restrict qp = scratch;                  // [rows][d]
    float* __restrict sc = qp + tile_rows * d;       // [rows][bk]: scores, then probabilities
    float* __restrict o = sc + tile_rows * bk;       // [rows][dvp]: unnormalised outputs
    float* __restrict mx = o + tile_rows * dvp;      // [rows]: running maxima
    float* __restrict sum = mx + tile_rows;          // [rows][lanes]: running sums, by lane
    float* __restrict bias = sum + tile_rows * lanes;   // [rows][bk]: the bias over the block
    float* __restrict qn = bias + tile_rows * bk;    // [rows]: norms of the packed q rows
    float* __restrict top = qn + tile_rows;          // [rows]: maxima with this block

    // q scaled as it is packed, unless softcap needs the scale inside its tanh.
    const float* q = a.q + b * pl.q.s[0] + h * pl.q.s[1];
    float qscale = pl.softcap > 0 ? 1.0f : pl.scale;
    for (std::size_t r = 0; r < rows; ++r) {
        float norm = 0;
        for (std::size_t c = 0; c < d; ++c) {
            float x = qscale * q[(i0 + r) * pl.q.s[2] + c * pl.q.s[3]];
            qp[r * d + c] = x;
            norm += x * x;
        }
        qn[r] = std::sqrt(norm);
    }
    std::fill(o, o + rows * dvp, 0.0f);
    std::fill(mx, mx + rows, neg_inf);
    std::fill(sum, sum + rows * lanes, 0.0f);

    std::size_t mask_base = b * pl.mask.s[0] + h * pl.mask.s[1];
    // Keys past this one are masked for every row of the tile by the causal limit.
    std::int64_t last_key = static_cast<std::int64_t>(pl.keys) - 1;
    if (pl.causal) last_key = std::min(last_key, static_cast<std::int64_t>(i0 + rows - 1) + pl.causal_offset);
    for (std::int64_t j0s = 0; j0s <= last_key; j0s += static_cast<std::int64_t>(bk)) {
        std::size_t j0 = static_cast<std::size_t>(j0s), n = std::min(bk, pl.keys - j0);
        const float* kb = kt + j0 * d;     // the block's [d][bk]
        const float* vb = vp + j0 * dvp;   // the block's [bk][dvp]
        // The bias of every row (one row for all where neither the mask nor the causal limit
        // varies by row here), and each panel's largest.
        bool row_invariant = pl.mask.s[2] == 0 && (!pl.causal || static_cast<std::int64_t>(j0 + bk - 1) <=
                                                                     static_cast<std::int64_t>(i0) + pl.causal_offset);
        bool biased = pl.has_mask || n < bk ||
                      (pl.causal && static_cast<std::int64_t>(i0) + pl.causal_offset < static_cast<std::int64_t>(j0 + bk - 1));
        std::size_t bias_rows = biased ? (row_invariant ? 1 : rows) : 0;
        for (std::size_t r = 0; r < bias_rows; ++r) {
            std::size_t i = i0 + r;
            std::int64_t limit = pl.causal ? static_cast<std::int64_t>(i) + pl.causal_offset : last_key;
            row_bias(pl, a, mask_base + i * pl.mask.s[2], j0, n, limit, bias + r * bk);
        }
        unsigned live = 0, candidate = 0;
        float panel_bias[panels];
        for (std::size_t p = 0; p < panels; ++p) {
            std::size_t first_key = j0 + p * panel_keys;
            if (p * panel_keys >= n || static_cast<std::int64_t>(first_key) > last_key) continue;   // no key it sees
            float most = 0;
            if (biased) {
                float part[lanes];
                std::fill(part, part + lanes, neg_inf);
                for (std::size_t r = 0; r < bias_rows; ++r)
                    for (std::size_t t = 0; t < panel_keys / lanes; ++t) {
                        const float* bt = bias + r * bk + p * panel_keys + t * lanes;
#pragma omp simd
                        for (std::size_t l = 0; l < lanes; ++l) part[l] = part[l] > bt[l] ? part[l] : bt[l];
                    }
                most = lane_max(part);
            }
            panel_bias[p] = most;
            if (most < -88.0f) candidate |= 1u << p;
            else live |= 1u << p;
        }
        std::copy(mx, mx + rows, top);
        for (std::size_t p = 0; p < panels; ++p)
            if (live & (1u << p)) score_panel_rows(pl, qp, kb, sc, rows, p, biased ? bias : nullptr, row_invariant, top);
        for (std::size_t p = 0; p < panels; ++p) {
            if (!(candidate & (1u << p))) continue;
            // The largest score a key of the panel can give row r, with room for rounding.
            bool skip = true;
            for (std::size_t r = 0; r < rows && skip; ++r) {
                float reach = pl.softcap > 0 ? pl.softcap : qn[r] * kn[(j0 + p * panel_keys) / panel_keys] * 1.001f + 1.0f;
                skip = top[r] != neg_inf && reach + panel_bias[p] - top[r] < -88.0f;
            }
            if (skip) continue;
            score_panel_rows(pl, qp, kb, sc, rows, p, biased ? bias : nullptr, row_invariant, top);
            live |= 1u << p;
        }
        for (std::size_t r = 0; r < rows; ++r) {
            float* s = sc + r * bk;
            if (top[r] == neg_inf) {   // no key of the row so far: nothing to add
                std::fill(s, s + bk, 0.0f);
                continue;
            }
            // The sum is kept by lane, folded once at the end.
            float rescale = exp_nonpositive(mx[r] - top[r]), row_top = top[r];
            float part[lanes] = {};
            for (std::size_t p = 0; p < panels; ++p) {
                if (!(live & (1u << p))) continue;
                for (std::size_t t = 0; t < panel_keys / lanes; ++t) {
                    float* st = s + p * panel_keys + t * lanes;
#pragma omp simd
                    for (std::size_t l = 0; l < lanes; ++l) {
                        float e = exp_nonpositive(st[l] - row_top);
                        st[l] = e;
                        part[l] += e;
                    }
                }
            }
            float* sr = sum + r * lanes;
#pragma omp simd
            for (std::size_t l = 0; l < lanes; ++l) sr[l] = sr[l] * rescale + part[l];
            mx[r] = top[r];
            if (rescale != 1.0f) {
                float* orow = o + r * dvp;
#pragma omp simd
                for (std::size_t c = 0; c < dvp; ++c) orow[c] *= rescale;
            }
        }
        for (std::size_t p = 0; p < panels; ++p)
            if (live & (1u << p)) accumulate(sc + p * panel_keys, vb + p * panel_keys * dvp, o, rows, dvp);
    }
    float* y = a.y + b * pl.y.s[0] + h * pl.y.s[1];
    for (std::size_t r = 0; r < rows; ++r) {
        // A row with no key left gives zeros, as the reference.
        float total = lane_sum(sum + r * lanes);
        float inv = total > 0 ? 1.0f / total : 0.0f;
        for (std::size_t c = 0; c < dv; ++c) y[(i0 + r) * pl.y.s[2] + c * pl.y.s[3]] = o[r * dvp + c] * inv;
    }
}

// One task: batch entry b, query head h, a run of query tiles; the keys its rows see packed once.
[[gnu::always_inline]] inline void attention_task(const attention_plan& pl, const attention_args& a, std::size_t task,
                                                  float* scratch) {
    std::size_t chunk = task % pl.chunks_per_head, bh = task / pl.chunks_per_head;
    std::size_t h = bh % pl.heads, b = bh / pl.heads, kh = h / pl.group;
    std::size_t per_chunk = (pl.tiles_per_head + pl.chunks_per_head - 1) / pl.chunks_per_head;
    std::size_t first = chunk * per_chunk * tile_rows, end = std::min(pl.queries, (chunk + 1) * per_chunk * tile_rows);
    if (first >= end) return;
    std::int64_t last_key = static_cast<std::int64_t>(pl.keys) - 1;
    if (pl.causal) last_key = std::min(last_key, static_cast<std::int64_t>(end - 1) + pl.causal_offset);
    float* kt = scratch + pl.tile_floats();
    float* vp = kt + pl.padded_keys() * pl.d;
    float* kn = vp + pl.padded_keys() * pl.dv_padded();
    if (last_key >= 0)
        pack_keys(pl, a.k + b * pl.k.s[0] + kh * pl.k.s[1], a.v + b * pl.v.s[0] + kh * pl.v.s[1],
                  static_cast<std::size_t>(last_key) + 1, kt, vp, kn);
    for (std::size_t i0 = first; i0 < end; i0 += tile_rows)
        query_tile(pl, a, b, h, i0, std::min(tile_rows, end - i0), kt, vp, kn, scratch);
}

// The task body compiled three times; outside the OpenMP region, where the target attribute holds
// (an outlined region's body would not carry it).
__attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"))) void tile_avx512(
        const attention_plan& pl, const attention_args& a, std::size_t task, float* scratch) {
    attention_task(pl, a, task, scratch);
}
__attribute__((target("avx2,fma"))) void tile_avx2(const attention_plan& pl, const attention_args& a, std::size_t task,
                                                   float* scratch) {
    attention_task(pl, a, task, scratch);
}
void tile_baseline(const attention_plan& pl, const attention_args& a, std::size_t task, float* scratch) {
    attention_task(pl, a, task, scratch);
}

using tile_fn = void (*)(const attention_plan&, const attention_args&, std::size_t, float*);

tile_fn best_tile() {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw"))
        return tile_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return tile_avx2;
    return tile_baseline;
}

class fused_attention {
public:
    // The scratch buffers (one per thread) are the executable's, shared by its attention kernels,
    // which run one at a time: sized for the largest, not one set per attention of the model.
    fused_attention(const attention_plan& pl, std::vector<std::vector<float>>& scratch)
        : pl_(pl), tile_(best_tile()), scratch_(scratch) {
        for (auto& s : scratch_)
            if (s.size() < pl.scratch_floats()) s.resize(pl.scratch_floats());
    }
    void run(const attention_args& a) {
        auto tasks = static_cast<std::int64_t>(pl_.batch * pl_.heads * pl_.chunks_per_head);
        int threads = std::min(omp_get_max_threads(), static_cast<int>(scratch_.size()));
        threads = static_cast<int>(std::min<std::int64_t>(threads, tasks));
#pragma omp parallel for num_threads(threads) schedule(static)
        for (std::int64_t t = 0; t < tasks; ++t)
            tile_(pl_, a, static_cast<std::size_t>(t), scratch_[static_cast<std::size_t>(omp_get_thread_num())].data());
    }

private:
    attention_plan pl_;
    tile_fn tile_;
    std::vector<std::vector<float>>& scratch_;
};

}  // namespace

cpu_kernel make_attention_kernel(const instruction& ins, cpu_context& ctx) {
    const auto* op = ins.get_operator().get_if<ops::attention>();
    if (op == nullptr) return {};
    const shape &qs = ins.inputs()[0]->get_shape(), &ks = ins.inputs()[1]->get_shape(),
                &vs = ins.inputs()[2]->get_shape(), &ys = ins.get_shape();
    for (const shape* s : {&qs, &ks, &vs, &ys})
        if (s->type() != dtype::float32 || s->ndim() != 4 || s->dynamic() || s->elements() == 0) return {};
    attention_plan pl;
    pl.batch = qs.lens()[0], pl.heads = qs.lens()[1], pl.queries = qs.lens()[2], pl.d = qs.lens()[3];
    pl.group = pl.heads / ks.lens()[1], pl.keys = ks.lens()[2], pl.dv = vs.lens()[3];
    pl.q = strides4(qs), pl.k = strides4(ks), pl.v = strides4(vs), pl.y = strides4(ys);
    if (ins.inputs().size() == 4) {
        const shape& ms = ins.inputs()[3]->get_shape();
        if (ms.dynamic() || (ms.type() != dtype::float32 && ms.type() != dtype::bool_)) return {};
        pl.has_mask = true, pl.bool_mask = ms.type() == dtype::bool_, pl.mask = strides4(ms);
    }
    pl.causal = op->is_causal, pl.causal_offset = op->causal_offset;
    pl.scale = op->scale != 0 ? op->scale : 1 / std::sqrt(static_cast<float>(pl.d));
    pl.softcap = op->softcap;
    pl.tiles_per_head = (pl.queries + tile_rows - 1) / tile_rows;
    // Heads split into runs of query tiles only as far as the threads need tasks (each run packs
    // its head's keys again).
    std::size_t heads = pl.batch * pl.heads;
    pl.chunks_per_head = std::min(pl.tiles_per_head, std::max<std::size_t>(1, (2 * ctx.threads + heads - 1) / heads));
    ctx.attention_scratch.resize(std::max<std::size_t>(ctx.threads, 1));
    auto k = std::make_shared<fused_attention>(pl, ctx.attention_scratch);
    host_kernel run = [k, masked = pl.has_mask](std::span<const argument> args, const argument& out) {
        k->run({args[0].as<const float>(), args[1].as<const float>(), args[2].as<const float>(),
                masked ? args[3].data() : nullptr, out.as<float>()});
    };
    return {std::move(run), "fused attention"};
}

}  // namespace kiln
