// The cpu target's attention against ref: every variant (masks, causal, softcap, grouped heads) in
// float32 (the fused kernel), float16 and bfloat16 (oneDNN), and over transposed views. Random
// inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "tools/verify.hpp"
#include "cpu_test_util.hpp"

namespace kiln {
namespace {

using namespace cpu_test;

// The variants: causal with an offset, softcap, bool and float masks that broadcast, grouped-query
// heads (q 4 heads over k/v 2), a bool mask with rows of no key at all (zeros, as ref), batches of
// grouped heads with 4-dim masks, long sequences with a per-head mask.
struct attention_variant {
    const char* attrs;
    const char* q;
    const char* kv;
    const char* mask;   // empty: none; "float_type" stands for q's type
};

const attention_variant attention_variants[] = {
        {"scale=0,is_causal=true,causal_offset=0,softcap=0", "{2, 4, 6, 8}", "{2, 4, 6, 8}", ""},
        {"scale=0,is_causal=true,causal_offset=2,softcap=0", "{1, 2, 4, 8}", "{1, 2, 7, 8}", ""},
        {"scale=0.2,is_causal=false,causal_offset=0,softcap=1.5", "{1, 2, 5, 8}", "{1, 2, 9, 8}", ""},
        {"scale=0,is_causal=false,causal_offset=0,softcap=0", "{2, 2, 5, 8}", "{2, 2, 9, 8}", "bool_type, {2, 1, 5, 9}"},
        {"scale=0,is_causal=true,causal_offset=0,softcap=2", "{2, 2, 5, 8}", "{2, 2, 5, 8}", "bool_type, {5, 5}"},
        {"scale=0,is_causal=true,causal_offset=0,softcap=0", "{1, 4, 5, 8}", "{1, 2, 5, 8}", "float_type, {1, 4, 5, 5}"},
        {"scale=0,is_causal=false,causal_offset=0,softcap=0", "{2, 6, 3, 8}", "{2, 1, 7, 8}", "bool_type, {7}"},
        {"scale=0,is_causal=false,causal_offset=0,softcap=0", "{2, 4, 5, 8}", "{2, 2, 7, 8}", "float_type, {2, 4, 5, 7}"},
        {"scale=0,is_causal=true,causal_offset=1,softcap=0", "{3, 4, 5, 8}", "{3, 2, 7, 8}", "bool_type, {3, 1, 5, 7}"},
        // float16 tiles of one key/value head: two heads' float buffers exceed the tile budget.
        {"scale=0,is_causal=false,causal_offset=0,softcap=0", "{1, 4, 256, 8}", "{1, 2, 300, 8}", "float_type, {1, 4, 256, 300}"},
        // Several query tiles (32 rows) and key blocks (64 keys) of the fused float32 kernel, the
        // last of each partial: the causal limit across blocks (blocks past it skipped), a negative
        // offset leaving the first rows no key at all, a bool mask with grouped heads, softcap.
        {"scale=0,is_causal=true,causal_offset=30,softcap=0", "{1, 2, 100, 16}", "{1, 2, 130, 16}", ""},
        {"scale=0,is_causal=true,causal_offset=-40,softcap=0", "{1, 2, 70, 8}", "{1, 2, 70, 8}", "bool_type, {70}"},
        {"scale=0,is_causal=false,causal_offset=0,softcap=0", "{2, 4, 40, 8}", "{2, 2, 150, 8}", "bool_type, {2, 1, 40, 150}"},
        {"scale=0.3,is_causal=true,causal_offset=0,softcap=3", "{1, 3, 65, 24}", "{1, 3, 129, 24}", "float_type, {65, 129}"},
};

std::string attention_text(const attention_variant& v, const std::string& type) {
    std::string mask = v.mask;
    if (mask.rfind("float_type", 0) == 0) mask = type + mask.substr(10);
    std::string text = "module: \"main\"\nq = @param:q -> " + type + ", " + v.q + "\nk = @param:k -> " + type + ", " + v.kv +
                       "\nv = @param:v -> " + type + ", " + v.kv + "\n";
    if (!mask.empty()) text += "m = @param:m -> " + mask + "\n";
    return text + "@0 = attention[" + v.attrs + "](q,k,v" + (mask.empty() ? "" : ",m") + ")\n@1 = @return(@0)\n";
}

// Every variant in float32 runs on the fused kernel (none on the reference compute).
TEST(cpu_target, attention_variants_fused) {
    for (const auto& v : attention_variants) {
        SCOPED_TRACE(std::string(v.attrs) + " q " + v.q + " kv " + v.kv + " mask " + v.mask);
        auto placement = check_against_ref(attention_text(v, "float_type"));
        EXPECT_TRUE(placed(placement, "fused attention: 1 instruction (attention 1)")) << ::testing::PrintToString(placement);
        EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
    }
}

// A causal mask written as a float mask of -1e9 above the diagonal (as exporters write one),
// over several query tiles and key panels: the fused kernel skips the panels whose bias rules
// their keys out (query_tile) and matches ref. With every third row's bias -100 on every key
// (attending to all of them), the skip's bound fails for those rows and the panels are
// computed; with one key a row spread over the panels, every panel is in play. (A row of -1e9
// throughout is no case for float32: s - 1e9 rounds to -1e9 for every key, where ref in double
// keeps the scores apart.)
TEST(cpu_target, attention_with_large_negative_float_masks) {
    for (int pattern : {0, 1, 2}) {
        std::size_t sq = 100, skv = 140;
        std::string values;
        for (std::size_t i = 0; i < sq; ++i)
            for (std::size_t j = 0; j < skv; ++j) {
                bool keep = pattern == 2 ? j == (i * 7) % skv : j <= i + 20;
                bool all_at_100 = pattern == 1 && i % 3 == 0;   // every key, each 100 down
                values += (values.empty() ? "" : ", ") + std::string(all_at_100 ? "-100" : keep ? "0" : "-1e9");
            }
        std::string text = "module: \"main\"\nq = @param:q -> float_type, {1, 2, 100, 16}\n"
                           "k = @param:k -> float_type, {1, 2, 140, 16}\nv = @param:v -> float_type, {1, 2, 140, 16}\n"
                           "m = @literal{" + values + "} -> float_type, {100, 140}\n"
                           "@0 = attention[scale=0,is_causal=false,causal_offset=0,softcap=0](q,k,v,m)\n@1 = @return(@0)\n";
        SCOPED_TRACE("pattern " + std::to_string(pattern));
        auto placement = check_against_ref(text);
        EXPECT_TRUE(placed(placement, "fused attention: 1 instruction (attention 1)")) << ::testing::PrintToString(placement);
    }
}

// The same variants in float16 and bfloat16 on random inputs (seeds 0 and 1), against ref (which
// computes in double and rounds the result) within the type's tolerance: bf16 through oneDNN's
// bf16 matmuls where the CPU has AVX512-BF16, float16 (and bf16 elsewhere) as the float kernel
// over tiles of one batch entry and its key/value heads (all of them in one tile, or one a tile in
// the last variant). None on the reference compute.
TEST(cpu_target, attention_variants_in_float16_and_bfloat16) {
    for (const char* type : {"half_type", "bf16_type"}) {
        bool half = std::string(type) == "half_type";
        double rtol = half ? 2e-3 : 1.6e-2, atol = half ? 2e-3 : 1e-2;
        for (const auto& v : attention_variants) {
            std::string text = attention_text(v, type);
            SCOPED_TRACE(text);
            program p = parse_text(text);
            for (std::uint64_t seed : {0, 1}) {
                param_map in;
                std::size_t k = 0;
                for (auto prm : p.main().parameters())
                    in[p.main().parameter_name(*prm)] = random_argument(prm->get_shape(), seed, k++);
                auto cpu = make_target("cpu")->compile(parse_text(text));
                EXPECT_TRUE(placed(cpu->stats().placement, "onednn: 1 instruction (attention 1)"))
                    << ::testing::PrintToString(cpu->stats().placement);
                auto g = to_doubles(cpu->run(in)[0]);
                auto w = to_doubles(make_target("ref")->compile(parse_text(text), {.optimize = false})->run(in)[0]);
                ASSERT_EQ(g.size(), w.size());
                for (std::size_t i = 0; i < g.size(); ++i)
                    ASSERT_NEAR(g[i], w[i], atol + rtol * std::abs(w[i])) << "seed " << seed << " element " << i;
            }
        }
    }
}

// Attention over transposed views (the heads of a [B, S, H, D] projection, as models feed it):
// in float16 each tile of q, k, v is strided, so it is gathered into a dense tile before the
// conversion; bfloat16 reads the strides in its matmuls.
TEST(cpu_target, attention_over_transposed_views) {
    for (const char* type : {"float_type", "half_type", "bf16_type"}) {
        std::string t = type;
        std::string text = "module: \"main\"\nq = @param:q -> " + t + ", {2, 5, 4, 8}\nk = @param:k -> " + t +
                           ", {2, 7, 2, 8}\nv = @param:v -> " + t + ", {2, 7, 2, 8}\n" + R"(@0 = transpose[permutation={0, 2, 1, 3}](q)
@1 = transpose[permutation={0, 2, 1, 3}](k)
@2 = transpose[permutation={0, 2, 1, 3}](v)
@3 = attention[scale=0,is_causal=true,causal_offset=2,softcap=0](@0,@1,@2)
@4 = @return(@3)
)";
        SCOPED_TRACE(text);
        auto placement = t == "float_type" ? check_against_ref(text) : check_low_against_ref(text, t);
        EXPECT_TRUE(placed(placement, t == "float_type" ? "fused attention: 1 instruction (attention 1)"
                                                        : "onednn: 1 instruction (attention 1)"))
            << ::testing::PrintToString(placement);
    }
}

}  // namespace
}  // namespace kiln
