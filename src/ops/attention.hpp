// Scaled dot-product attention (body in attention.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/op.hpp"

namespace kiln::ops {

// q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv] -> [B, Hq, Sq, Dv]. Query head h reads
// kv head h / (Hq / Hkv) (grouped-query attention; Hkv = Hq is ordinary multi-head attention).
// The optional mask broadcasts (numpy rules) to [B, Hq, Sq, Skv]: bool keeps the keys where it is
// true, a mask of q's type is added to the scores. is_causal keeps key j for query i only when
// j <= i + causal_offset (0: top-left aligned; the number of cached keys before the queries for a
// KV cache). scale = 0 means 1 / sqrt(D); softcap > 0 applies softcap * tanh(s / softcap) to the
// scaled scores before the bias. A query row with no key left (its bias is -inf everywhere) gives
// zeros, not NaN. Computed in double, rounded once.
struct attention {
    float scale = 0;
    bool is_causal = false;
    std::int64_t causal_offset = 0;
    float softcap = 0;
    static constexpr std::string_view name = "attention";
    auto attributes() {
        return fields(field("scale", scale), field("is_causal", is_causal), field("causal_offset", causal_offset),
                      field("softcap", softcap));
    }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;

private:
    static void check_mask(const shape& m, dtype t, const std::vector<std::size_t>& scores);
    // The additive bias of every key for one query row: the mask, then the causal limit.
    std::vector<double> row_bias(std::span<const argument> args, const shape& ms, std::size_t b, std::size_t h,
                                 std::size_t i, std::size_t keys) const;
    // exp(logit - max) of every key for query row (b, h, i), logit = softcap(scale q.k) + bias;
    // empty when no key is left (the bias is -inf everywhere, or every logit is -inf).
    template <class T>
    std::vector<double> row_weights(std::span<const argument> args, const shape& ms, std::size_t b, std::size_t h,
                                    std::size_t kv_head, std::size_t i) const;
    template <class T>
    void run(const argument& r, std::span<const argument> args) const;
};

}  // namespace kiln::ops
