// recognize_patterns on attention written out: softmax(scale * q @ kT [+ mask]) @ v becomes one
// attention op with the same results, whatever transposes and scales the exporter put around it;
// what does not map exactly (another softmax axis, broadcast batches, a shared intermediate,
// per-element scales) is left as it is.
#include <gtest/gtest.h>

#include "pass_check.hpp"
#include "passes/recognize/recognize_patterns.hpp"

namespace kiln {
namespace {

// [B, H, S, D] = [2, 2, 4, 8]; scores [2, 2, 4, 4].
#define T "float_type, {2, 2, 4, 8}, {64, 32, 8, 1}"
#define KT "float_type, {2, 2, 8, 4}, {64, 32, 1, 8}"
#define SC "float_type, {2, 2, 4, 4}, {32, 16, 4, 1}"
#define S "float_type, {}, {}"

program recognize(const std::string& body) {
    return run_and_check("module: \"main\"\n" + body, {recognize_patterns{}});
}

double scale_of(const program& p) {
    for (const auto& ins : p.main())
        if (ins.name() == "attention") return ins.get_operator().attributes().at("scale").as_float();
    return -1;
}

const std::string qkv =
    "q = @param:q -> " T "\n"
    "k = @param:k -> " T "\n"
    "v = @param:v -> " T "\n";

// [B, H, S, D] inputs, k transposed for the matmul, divided by sqrt(D), an additive mask.
const std::string bhsd_masked = qkv +
    "mask = @param:mask -> float_type, {2, 1, 1, 4}, {4, 4, 4, 1}\n"
    "@0 = transpose[permutation={0, 1, 3, 2}](k) -> " KT "\n"
    "@1 = dot(q, @0) -> " SC "\n"
    "@2 = @literal{2.828427} -> " S "\n"
    "@3 = div(@1, @2) -> " SC "\n"
    "@4 = add(@3, mask) -> " SC "\n"
    "@5 = softmax[axis=-1](@4) -> " SC "\n"
    "@6 = dot(@5, v) -> " T "\n";

TEST(recognize_attention, heads_first_with_mask_and_div_by_sqrt_d) {
    program p = recognize(bhsd_masked + "@7 = @return(@6)\n");
    EXPECT_EQ(count_ops(p, "attention"), 1u);
    EXPECT_EQ(count_instructions(p), 1u);   // k's two transposes cancel
    EXPECT_NEAR(scale_of(p), 1 / 2.828427, 1e-6);
}

// As PyTorch exports it: heads split from [B, S, H, D], k transposed straight to [B, H, D, S].
TEST(recognize_attention, from_sequence_first_with_the_scale_on_the_scores) {
    program p = recognize(
        "q = @param:q -> float_type, {2, 4, 2, 8}, {64, 16, 8, 1}\n"
        "k = @param:k -> float_type, {2, 4, 2, 8}, {64, 16, 8, 1}\n"
        "v = @param:v -> float_type, {2, 4, 2, 8}, {64, 16, 8, 1}\n"
        "@0 = transpose[permutation={0, 2, 1, 3}](q) -> float_type, {2, 2, 4, 8}, {64, 8, 16, 1}\n"
        "@1 = transpose[permutation={0, 2, 3, 1}](k) -> float_type, {2, 2, 8, 4}, {64, 8, 1, 16}\n"
        "@2 = transpose[permutation={0, 2, 1, 3}](v) -> float_type, {2, 2, 4, 8}, {64, 8, 16, 1}\n"
        "@3 = dot(@0, @1) -> " SC "\n"
        "@4 = @literal{0.125} -> " S "\n"
        "@5 = mul(@4, @3) -> " SC "\n"
        "@6 = softmax[axis=3](@5) -> " SC "\n"
        "@7 = dot(@6, @2) -> " T "\n"
        "@8 = @return(@7)\n");
    EXPECT_EQ(count_ops(p, "attention"), 1u);
    EXPECT_EQ(count_ops(p, "transpose"), 3u);   // q, k and v each one view
    EXPECT_EQ(count_instructions(p), 4u);
    EXPECT_NEAR(scale_of(p), 0.125, 1e-7);
}

// Scaling q and kT by D^-1/4 each (numerically safer in half precision), no mask, no other scale.
TEST(recognize_attention, scales_on_q_and_k_multiply) {
    program p = recognize(qkv +
        "@0 = transpose[permutation={0, 1, 3, 2}](k) -> " KT "\n"
        "@1 = @literal{0.59460356} -> " S "\n"
        "@2 = mul(q, @1) -> " T "\n"
        "@3 = mul(@0, @1) -> float_type, {2, 2, 8, 4}, {64, 32, 4, 1}\n"
        "@4 = dot(@2, @3) -> " SC "\n"
        "@5 = softmax[axis=-1](@4) -> " SC "\n"
        "@6 = dot(@5, v) -> " T "\n"
        "@7 = @return(@6)\n");
    EXPECT_EQ(count_ops(p, "attention"), 1u);
    EXPECT_EQ(count_ops(p, "mul"), 0u);
    EXPECT_NEAR(scale_of(p), 0.59460356 * 0.59460356, 1e-6);
}

// [B*H, S, D] with kT given directly (not a transpose): unsqueeze views in, a squeeze out.
TEST(recognize_attention, rank3_batch_times_heads_without_scale) {
    program p = recognize(
        "q = @param:q -> float_type, {4, 4, 8}, {32, 8, 1}\n"
        "kt = @param:kt -> float_type, {4, 8, 4}, {32, 4, 1}\n"
        "v = @param:v -> float_type, {4, 4, 8}, {32, 8, 1}\n"
        "mask = @param:mask -> float_type, {4, 4}, {4, 1}\n"
        "@0 = dot(q, kt) -> float_type, {4, 4, 4}, {16, 4, 1}\n"
        "@1 = add(mask, @0) -> float_type, {4, 4, 4}, {16, 4, 1}\n"
        "@2 = softmax[axis=2](@1) -> float_type, {4, 4, 4}, {16, 4, 1}\n"
        "@3 = dot(@2, v) -> float_type, {4, 4, 8}, {32, 8, 1}\n"
        "@4 = @return(@3)\n");
    EXPECT_EQ(count_ops(p, "attention"), 1u);
    EXPECT_EQ(count_ops(p, "unsqueeze"), 3u);
    EXPECT_EQ(count_ops(p, "squeeze"), 1u);
    EXPECT_EQ(count_ops(p, "transpose"), 1u);
    EXPECT_EQ(scale_of(p), 1.0);
}

TEST(recognize_attention, after_a_written_out_softmax) {
    program p = recognize(qkv +
        "@0 = transpose[permutation={0, 1, 3, 2}](k) -> " KT "\n"
        "@1 = dot(q, @0) -> " SC "\n"
        "@2 = reduce_max[axes={-1},keepdims=true](@1) -> float_type, {2, 2, 4, 1}, {8, 4, 1, 1}\n"
        "@3 = sub(@1, @2) -> " SC "\n"
        "@4 = exp(@3) -> " SC "\n"
        "@5 = reduce_sum[axes={3},keepdims=true](@4) -> float_type, {2, 2, 4, 1}, {8, 4, 1, 1}\n"
        "@6 = div(@4, @5) -> " SC "\n"
        "@7 = dot(@6, v) -> " T "\n"
        "@8 = @return(@7)\n");
    EXPECT_EQ(count_ops(p, "attention"), 1u);
    EXPECT_EQ(count_instructions(p), 1u);
}

// Causal masking as GPT-style models export it: where(keep, scores, -inf) over a lower-triangular
// constant, and masked_fill's where(drop, lowest, scores) over the upper triangle. Both masks are
// the causal band j <= i, so each becomes attention's own causal limit (no mask input).
const std::string lower = "@literal{1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1} -> bool_type, {4, 4}, {4, 1}";
const std::string upper = "@literal{0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0} -> bool_type, {4, 4}, {4, 1}";

TEST(recognize_attention, where_masks_keep_or_drop) {
    program p = recognize(qkv +
        "@0 = transpose[permutation={0, 1, 3, 2}](k) -> " KT "\n"
        "@1 = dot(q, @0) -> " SC "\n"
        "@2 = @literal{0.35355338} -> " S "\n"
        "@3 = mul(@1, @2) -> " SC "\n"
        "@4 = " + lower + "\n"
        "@5 = @literal{-inf} -> " S "\n"
        "@6 = where(@4, @3, @5) -> " SC "\n"
        "@7 = softmax[axis=-1](@6) -> " SC "\n"
        "@8 = dot(@7, v) -> " T "\n"
        "@9 = dot(q, @0) -> " SC "\n"
        "@10 = " + upper + "\n"
        "@11 = @literal{-3.4028235e+38} -> " S "\n"
        "@12 = where(@10, @11, @9) -> " SC "\n"
        "@13 = softmax[axis=-1](@12) -> " SC "\n"
        "@14 = dot(@13, v) -> " T "\n"
        "@15 = @return(@8, @14)\n");
    EXPECT_EQ(count_ops(p, "attention"), 2u);
    EXPECT_EQ(count_ops(p, "where"), 0u);
    for (const auto& ins : p.main())
        if (ins.name() == "attention") {
            EXPECT_EQ(ins.inputs().size(), 3u);
            EXPECT_TRUE(ins.get_operator().attributes().at("is_causal").as_bool());
            EXPECT_EQ(ins.get_operator().attributes().at("causal_offset").as_int(), 0);
        }
}

// attention over a constant mask: a band j <= i + c shared by every batch and head becomes the
// causal limit with offset c (here 3 queries after 2 cached keys, additive 0/-inf); a mask that
// differs by batch, keeps a key after a dropped one, or adds a finite bias stays a mask.
std::string masked_attention(const std::string& mask) {
    return "q = @param:q -> float_type, {2, 2, 3, 8}, {48, 24, 8, 1}\n"
           "k = @param:k -> float_type, {2, 2, 5, 8}, {80, 40, 8, 1}\n"
           "v = @param:v -> float_type, {2, 2, 5, 8}, {80, 40, 8, 1}\n"
           "@0 = " + mask + "\n"
           "@1 = attention[scale=0.5](q, k, v, @0) -> float_type, {2, 2, 3, 8}, {48, 24, 8, 1}\n"
           "@2 = @return(@1)\n";
}

TEST(recognize_attention, a_constant_causal_band_becomes_the_causal_limit) {
    program p = recognize(masked_attention(
        "@literal{0, 0, 0, -inf, -inf, 0, 0, 0, 0, -inf, 0, 0, 0, 0, 0} -> float_type, {1, 1, 3, 5}, {15, 15, 5, 1}"));
    ASSERT_EQ(count_ops(p, "attention"), 1u);
    for (const auto& ins : p.main())
        if (ins.name() == "attention") {
            EXPECT_EQ(ins.inputs().size(), 3u);
            EXPECT_EQ(ins.get_operator().attributes().at("causal_offset").as_int(), 2);
            EXPECT_NEAR(ins.get_operator().attributes().at("scale").as_float(), 0.5, 1e-7);
        }
    for (const char* mask : {
             // batch 1 keeps one key more than batch 0
             "@literal{1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1} -> "
             "bool_type, {2, 1, 3, 5}, {15, 15, 5, 1}",
             "@literal{1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1} -> bool_type, {3, 5}, {5, 1}",   // a gap
             "@literal{0, 0, 0, -1, -inf, 0, 0, 0, 0, -inf, 0, 0, 0, 0, 0} -> float_type, {3, 5}, {5, 1}"}) {
        program kept = recognize(masked_attention(mask));
        for (const auto& ins : kept.main()) {
            if (ins.name() == "attention") {
                EXPECT_EQ(ins.inputs().size(), 4u) << mask;
            }
        }
    }
}

// A fill of -10000 leaves weights of exp(-10000 - max), not exactly 0: not a mask.
TEST(recognize_attention, declines_a_finite_fill) {
    program p = recognize(qkv +
        "@0 = transpose[permutation={0, 1, 3, 2}](k) -> " KT "\n"
        "@1 = dot(q, @0) -> " SC "\n"
        "@2 = " + lower + "\n"
        "@3 = @literal{-10000.0} -> " S "\n"
        "@4 = where(@2, @1, @3) -> " SC "\n"
        "@5 = softmax[axis=-1](@4) -> " SC "\n"
        "@6 = dot(@5, v) -> " T "\n"
        "@7 = @return(@6)\n");
    EXPECT_EQ(count_ops(p, "attention"), 0u);
}

// As a program converted to float16 before -O has it (convert_precision keeps softmax in float32):
// the scores converted up for the softmax, the probabilities rounded back down for the second
// matmul. One float16 attention remains, no convert and no softmax.
const std::string half_masked =
    "q = @param:q -> half_type, {2, 2, 4, 8}, {64, 32, 8, 1}\n"
    "k = @param:k -> half_type, {2, 2, 4, 8}, {64, 32, 8, 1}\n"
    "v = @param:v -> half_type, {2, 2, 4, 8}, {64, 32, 8, 1}\n"
    "mask = @param:mask -> half_type, {2, 1, 1, 4}, {4, 4, 4, 1}\n"
    "@0 = transpose[permutation={0, 1, 3, 2}](k) -> half_type, {2, 2, 8, 4}, {64, 32, 1, 8}\n"
    "@1 = dot(q, @0) -> half_type, {2, 2, 4, 4}, {32, 16, 4, 1}\n"
    "@2 = @literal{2.828427} -> half_type, {}, {}\n"
    "@3 = div(@1, @2) -> half_type, {2, 2, 4, 4}, {32, 16, 4, 1}\n"
    "@4 = add(@3, mask) -> half_type, {2, 2, 4, 4}, {32, 16, 4, 1}\n"
    "@5 = convert[target_type=float_type,saturate=false](@4) -> " SC "\n"
    "@6 = softmax[axis=-1](@5) -> " SC "\n"
    "@7 = convert[target_type=half_type,saturate=false](@6) -> half_type, {2, 2, 4, 4}, {32, 16, 4, 1}\n"
    "@8 = dot(@7, v) -> half_type, {2, 2, 4, 8}, {64, 32, 8, 1}\n"
    "@9 = @return(@8)\n";

TEST(recognize_attention, sees_through_the_converts_around_a_float32_softmax) {
    program p = run_and_check("module: \"main\"\n" + half_masked, {recognize_patterns{}}, 2e-2);
    EXPECT_EQ(count_ops(p, "attention"), 1u);
    EXPECT_EQ(count_ops(p, "convert"), 0u);
    EXPECT_EQ(count_ops(p, "softmax"), 0u);
    EXPECT_NEAR(scale_of(p), 1 / 2.828427, 1e-3);
}

// Scores in bfloat16 converted up, the probabilities rounded to float16 for a float16 v: not one
// attention of one type, so nothing changes.
TEST(recognize_attention, declines_converts_between_other_types) {
    std::string text = half_masked;
    for (auto at = text.find("half_type"); at != std::string::npos; at = text.find("half_type", at))
        text.replace(at, 9, "bf16_type");
    for (std::string line : {"v = @param", "@7 = convert", "@8 = dot"})
        for (auto at = text.find("bf16_type", text.find(line)); at < text.find('\n', text.find(line));
             at = text.find("bf16_type", at))
            text.replace(at, 9, "half_type");
    program p = run_and_check("module: \"main\"\n" + text, {recognize_patterns{}}, 2e-2);
    EXPECT_EQ(count_ops(p, "attention"), 0u);
    EXPECT_EQ(count_ops(p, "softmax"), 1u);
}

// The probabilities are also returned (as models that output attention weights do): attention
// would recompute them, so nothing changes but the softmax.
TEST(recognize_attention, declines_when_probabilities_have_another_user) {
    program p = recognize(bhsd_masked + "@7 = @return(@6, @5)\n");
    EXPECT_EQ(count_ops(p, "attention"), 0u);
    EXPECT_EQ(count_ops(p, "dot"), 2u);
}

TEST(recognize_attention, declines_softmax_over_another_axis) {
    std::string text = bhsd_masked + "@7 = @return(@6)\n";
    text.replace(text.find("softmax[axis=-1]"), 16, "softmax[axis=2]");
    program p = recognize(text);
    EXPECT_EQ(count_ops(p, "attention"), 0u);
}

TEST(recognize_attention, declines_per_element_scale) {
    std::string text = bhsd_masked + "@7 = @return(@6)\n";
    std::string scalar = "@literal{2.828427} -> " S;
    text.replace(text.find(scalar), scalar.size(), "@literal{2.0, 3.0, 4.0, 5.0} -> float_type, {4}, {1}");
    program p = recognize(text);
    EXPECT_EQ(count_ops(p, "attention"), 0u);
}

// k and v shared by every batch (broadcast by the matmuls): attention takes equal batches only.
TEST(recognize_attention, declines_broadcast_batches) {
    program p = recognize(
        "q = @param:q -> " T "\n"
        "k = @param:k -> float_type, {1, 2, 4, 8}, {64, 32, 8, 1}\n"
        "v = @param:v -> float_type, {1, 2, 4, 8}, {64, 32, 8, 1}\n"
        "@0 = transpose[permutation={0, 1, 3, 2}](k) -> float_type, {1, 2, 8, 4}, {64, 32, 1, 8}\n"
        "@1 = dot(q, @0) -> " SC "\n"
        "@2 = softmax[axis=-1](@1) -> " SC "\n"
        "@3 = dot(@2, v) -> " T "\n"
        "@4 = @return(@3)\n");
    EXPECT_EQ(count_ops(p, "attention"), 0u);
}

}  // namespace
}  // namespace kiln
