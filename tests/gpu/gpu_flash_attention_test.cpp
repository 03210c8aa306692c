// The flash-attention kernel (targets/gpu/flash_attention.cpp): which attention it takes (and the
// compile report's line saying so), that its
// kernels compile for sm_90 without a device, and on the device its results against ref on fresh
// random float16/bfloat16 inputs (the seed is printed; KILN_SEED repeats one) for the shapes of
// BERT (additive padding mask), GPT-2 (causal), ViT (197 tokens, no mask) at batch 1 and 64 with
// 12 heads of 64, and the variants: head size 128, bool masks, grouped-query heads, causal
// offsets that leave rows without keys, softcap, v heads wider or narrower than q's, sequence
// tails and strided operands; the same in float32/float64 against the GEMMs around a softmax
// kernel (gemm_attention.cpp) that run those types.
// Benchmark mode (KILN_FLASH_BENCH=1, not a timed test): times the flash kernel and the row kernel
// it replaces on the model shapes and prints a Markdown table (KILN_FLASH_BENCH=flash: the flash
// kernel only, a few seconds instead of the row kernel's half minute).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>

#include "core/error.hpp"
#include "ops_test_util.hpp"
#include "core/random.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "targets/gpu/device.hpp"
#include "targets/gpu/flash_attention.hpp"
#include "targets/gpu/gemm_attention.hpp"
#include "targets/gpu/kernel_compiler.hpp"
#include "targets/gpu/libraries.hpp"
#include "targets/gpu/lowering.hpp"

namespace kiln {
namespace {


enum class mask_kind { none, additive, boolean };

struct problem {
    const char* name;
    std::size_t b, h, hkv, s, skv, d, dv;
    mask_kind mask = mask_kind::none;
    bool per_query_mask = false;   // [B, 1, S, Skv] instead of the padding mask [B, 1, 1, Skv]
    bool causal = false;
    std::int64_t offset = 0;
    float softcap = 0;
    bool sequence_first = false;   // q, k, v given as [B, S, H, D] and viewed as [B, H, S, D] (BERT)
    bool columns_strided = false;  // q given as [B, H, D, S]: its head's elements are not adjacent
};

std::string lens(std::initializer_list<std::size_t> l) {
    std::string r;
    for (auto x : l) r += (r.empty() ? "" : ", ") + std::to_string(x);
    return "{" + r + "}";
}

// The program: attention over parameters q, k, v (and mask), through transposes where asked.
program make_program(const problem& p, dtype t, std::size_t batch) {
    const std::string ty = t == dtype::float16    ? "half_type"
                           : t == dtype::bfloat16 ? "bf16_type"
                           : t == dtype::float32  ? "float_type"
                                                  : "double_type";
    std::string text, q = "q", k = "k", v = "v";
    if (p.sequence_first) {
        text += cat("q = @param:q -> ", ty, ", ", lens({batch, p.s, p.h, p.d}), "\n",
                    "k = @param:k -> ", ty, ", ", lens({batch, p.skv, p.hkv, p.d}), "\n",
                    "v = @param:v -> ", ty, ", ", lens({batch, p.skv, p.hkv, p.dv}), "\n",
                    "qt = transpose[permutation={0, 2, 1, 3}](q)\n", "kt = transpose[permutation={0, 2, 1, 3}](k)\n",
                    "vt = transpose[permutation={0, 2, 1, 3}](v)\n");
        q = "qt", k = "kt", v = "vt";
    } else {
        text += p.columns_strided
                    ? cat("q = @param:q -> ", ty, ", ", lens({batch, p.h, p.d, p.s}), "\n",
                          "qt = transpose[permutation={0, 1, 3, 2}](q)\n")
                    : cat("q = @param:q -> ", ty, ", ", lens({batch, p.h, p.s, p.d}), "\n");
        if (p.columns_strided) q = "qt";
        text += cat("k = @param:k -> ", ty, ", ", lens({batch, p.hkv, p.skv, p.d}), "\n",
                    "v = @param:v -> ", ty, ", ", lens({batch, p.hkv, p.skv, p.dv}), "\n");
    }
    std::string args = q + ", " + k + ", " + v;
    if (p.mask != mask_kind::none) {
        text += cat("mask = @param:mask -> ", p.mask == mask_kind::boolean ? "bool_type" : ty, ", ",
                    lens({batch, 1, p.per_query_mask ? p.s : 1, p.skv}), "\n");
        args += ", mask";
    }
    text += cat("y = attention[scale=0, is_causal=", p.causal ? "true" : "false", ", causal_offset=", p.offset,
                ", softcap=", p.softcap, "](", args, ")\n", "r = @return(y)\n");
    return parse_text(text);
}

const std::vector<problem>& problems() {
    static const std::vector<problem> all = {
        {"bert_b1", 1, 12, 12, 128, 128, 64, 64, mask_kind::additive, false, false, 0, 0, true},
        {"bert_b64", 64, 12, 12, 128, 128, 64, 64, mask_kind::additive, false, false, 0, 0, true},
        {"gpt2_b1", 1, 12, 12, 128, 128, 64, 64, mask_kind::none, false, true, 0, 0, true},
        {"gpt2_b64", 64, 12, 12, 128, 128, 64, 64, mask_kind::none, false, true, 0, 0, true},
        {"vit_b1", 1, 12, 12, 197, 197, 64, 64},
        {"vit_b64", 64, 12, 12, 197, 197, 64, 64},
        {"head_128_bool_mask", 2, 4, 4, 150, 150, 128, 128, mask_kind::boolean, true},
        {"gqa_tails_additive_per_query", 2, 8, 2, 77, 50, 64, 64, mask_kind::additive, true},
        {"kv_cache_causal_offset", 1, 4, 4, 40, 100, 64, 64, mask_kind::none, false, true, 60},
        {"rows_without_keys", 1, 2, 2, 70, 70, 64, 64, mask_kind::none, false, true, -5},
        {"softcap_dv_32", 1, 3, 3, 65, 33, 96, 32, mask_kind::none, false, false, 0, 30.0f},
        // v's head wider than q's: y's rows do not fit q's tile, so they are stored from registers.
        {"dv_128_over_d_32", 1, 2, 2, 33, 45, 32, 128, mask_kind::additive, true},
        {"strided_columns", 1, 2, 2, 40, 40, 64, 64, mask_kind::boolean, false, false, 0, 0, false, true},
    };
    return all;
}

const char* lowering_of_attention(const program& p) {
    for (const auto& ins : p.main())
        if (ins.name() == "attention") return gpu::find_lowering(ins)->what;
    return "";
}

bool takes_flash(const program& p) { return std::string(lowering_of_attention(p)) == "attention (flash kernel)"; }

// float32 and float64 run as GEMMs around a softmax kernel, but for grouped-query heads (the row kernel).
bool takes_gemms(const program& p) { return std::string(lowering_of_attention(p)) == "attention (GEMMs around a softmax kernel)"; }

TEST(gpu_no_device, flash_attention_takes_float16_and_bfloat16_heads_of_16_to_128) {
    for (const auto& p : problems())
        for (dtype t : {dtype::float16, dtype::bfloat16}) EXPECT_TRUE(takes_flash(make_program(p, t, 1))) << p.name;
    auto other = [](const char* head, const char* ty) {
        return parse_text(cat("q = @param:q -> ", ty, ", {1, 2, 8, ", head, "}\nk = @param:k -> ", ty, ", {1, 2, 8, ", head,
                              "}\nv = @param:v -> ", ty, ", {1, 2, 8, ", head, "}\ny = attention(q, k, v)\nr = @return(y)\n"));
    };
    EXPECT_FALSE(takes_flash(other("64", "float_type")));   // float32 runs as GEMMs
    EXPECT_FALSE(takes_flash(other("40", "half_type")));    // not a multiple of 16
    EXPECT_FALSE(takes_flash(other("256", "bf16_type")));   // beyond 128
    EXPECT_TRUE(takes_flash(other("16", "half_type")));
    EXPECT_EQ(gpu::attention_kernels_note(make_program(problems()[0], dtype::float16, 1).main()),
              "attention: 1 flash kernel, 0 GEMM pairs, 0 row kernels");
    std::string note = gpu::attention_kernels_note(other("40", "half_type").main());
    EXPECT_EQ(note.rfind("attention: 0 flash kernels, 0 GEMM pairs, 1 row kernel (", 0), 0u) << note;
    EXPECT_NE(note.find("head size 40/40 (multiples of 16 up to 128 only), half_type (float_type/double_type only)"),
              std::string::npos) << note;
    EXPECT_EQ(gpu::attention_kernels_note(other("40", "float_type").main()), "attention: 0 flash kernels, 1 GEMM pair, 0 row kernels");
}

TEST(gpu_no_device, gemm_attention_takes_float32_and_float64_but_grouped_heads) {
    for (const auto& p : problems())
        for (dtype t : {dtype::float32, dtype::float64})
            EXPECT_EQ(takes_gemms(make_program(p, t, 1)), p.hkv == p.h) << p.name << " " << dtype_name(t);
    std::string note = gpu::attention_kernels_note(make_program(problems()[7], dtype::float32, 1).main());
    EXPECT_NE(note.find("1 row kernel ("), std::string::npos) << note;
    EXPECT_NE(note.find("8 query heads over 2 key heads"), std::string::npos) << note;
}

// The kernels of every problem without a device: the flash kernel in float16/bfloat16; in
// float32/float64 the GEMMs' softmax kernel (the GEMMs need a device to plan), or for grouped-query
// heads the row kernel, in double for float64.
TEST(gpu_no_device, attention_kernels_compile_for_sm_90) {
    gpu::library_handles libs(nullptr);
    std::size_t compiled = 0;
    for (const auto& p : problems())
        for (dtype t : {dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64}) {
            program prog = make_program(p, t, p.b);
            alignas(256) static std::byte fake[256];
            gpu::lowering_context ctx(prog.main(), libs, [](const instruction&) { return fake; }, false);
            for (const auto& ins : prog.main()) {
                if (ins.name() != "attention") continue;
                if (gpu::gemm_attention_takes(ins))
                    ctx.sources.push_back(gpu::attention_softmax_kernel(ctx, ins));
                else
                    gpu::find_lowering(ins)->lower(ctx, ins);
            }
            ASSERT_EQ(ctx.sources.size(), 1u) << p.name << " " << dtype_name(t);
            EXPECT_NO_THROW(gpu::compile_to_cubin(ctx.sources[0], {"sm_90", true, false, {}})) << p.name << " " << dtype_name(t);
            ++compiled;
        }
    std::printf("compiled %zu attention kernels\n", compiled);
}

// Batch entry `i` of every input of a batch-first program.
param_map batch_entry(const param_map& in, std::size_t i) {
    param_map r;
    for (const auto& [name, a] : in) {
        const auto& l = a.get_shape().lens();
        std::vector<std::size_t> one(l.begin(), l.end());
        one[0] = 1;
        argument e(shape(a.get_shape().type(), one));
        std::size_t bytes = e.get_shape().bytes();
        std::memcpy(e.data(), static_cast<const std::byte*>(a.data()) + i * bytes, bytes);
        r[name] = e;
    }
    return r;
}

// Relative L2 error and the largest error relative to the largest |want|.
std::pair<double, double> errors(const argument& got, const argument& want) {
    auto g = to_doubles(got), w = to_doubles(want);
    double num = 0, den = 0, worst = 0, top = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
        num += (g[i] - w[i]) * (g[i] - w[i]);
        den += w[i] * w[i];
        worst = std::max(worst, std::abs(g[i] - w[i]));
        top = std::max(top, std::abs(w[i]));
    }
    return {std::sqrt(num / std::max(den, 1e-30)), worst / std::max(top, 1e-30)};
}

// attention of problem p in type t on the gpu against ref on the last batch entry (every entry is
// minutes at batch 64 in ref; the last one checks the batch strides), in relative L2 error `tol`
// and largest error 8 * tol.
void check_against_ref(const problem& p, dtype t, double tol) {
    SCOPED_TRACE(cat("seed ", run_seed(), ", ", dtype_name(t)));
    program prog = make_program(p, t, p.b);
    param_map in;
    std::size_t index = 0;
    for (const auto& name : prog.main().parameter_names()) {
        const shape& s = prog.main().get_parameter(name)->get_shape();
        argument a = random_argument(s, run_seed(), index++);
        // Sharper softmaxes than uniform [-1, 1] gives: q scaled by 4 (logits of about +-2), an
        // additive mask of 0 or -10000 (BERT's padding) mixed with small values.
        if (name == "q" || (name == "mask" && s.type() != dtype::bool_)) {
            auto x = to_doubles(a);
            for (std::size_t i = 0; i < x.size(); ++i) x[i] = name == "q" ? 4 * x[i] : (x[i] < -0.7 ? -10000.0 : x[i]);
            a = from_doubles(s, x);
        }
        in[name] = a;
    }
    auto gpu = make_target("gpu")->compile(prog.clone());
    argument got = gpu->run(in)[0].copy();
    program one = make_program(p, t, 1);
    auto ref = make_target("ref")->compile(one.clone());
    const std::size_t b = p.b - 1;
    argument want = ref->run(batch_entry(in, b))[0].copy();
    argument mine = batch_entry({{"y", got}}, b).at("y");
    auto [l2, worst] = errors(mine, want);
    EXPECT_LT(l2, tol) << p.name << " batch entry " << b;
    EXPECT_LT(worst, 8 * tol) << p.name << " batch entry " << b;
}

class gpu_flash_attention : public ::testing::TestWithParam<std::tuple<problem, dtype>> {};

TEST_P(gpu_flash_attention, matches_ref) {
    const auto& [p, t] = GetParam();
    ASSERT_TRUE(takes_flash(make_program(p, t, 1)));
    check_against_ref(p, t, t == dtype::float16 ? 2e-3 : 1.5e-2);
}

// float32 and float64: the GEMMs around a softmax kernel (the grouped-query problem: the row
// kernel, which computes float64 in double too).
class gpu_gemm_attention : public ::testing::TestWithParam<std::tuple<problem, dtype>> {};

TEST_P(gpu_gemm_attention, matches_ref) {
    const auto& [p, t] = GetParam();
    ASSERT_EQ(takes_gemms(make_program(p, t, 1)), p.hkv == p.h);
    check_against_ref(p, t, t == dtype::float32 ? 1e-5 : 1e-12);
}

// Both attention kernels on the same device buffers: lowered, built and launched as the
// executable launches them, timed on the host around 100 back-to-back launches on one stream and
// its synchronisation (the mean per launch after 10 launches of warm-up, the best of 5 rounds;
// a kernel shorter than a launch, a few microseconds, measures the launch rate).
class kernel_timer {
public:
    kernel_timer(const program& p, const param_map& in) : prog_(p.clone()) {
        for (const auto& name : prog_.main().parameter_names()) {
            const instruction* ins = &*prog_.main().get_parameter(name);
            buffers_.emplace(ins, gpu::device_buffer(ins->get_shape().bytes(), "a bench input"));
            gpu::copy_to_device(buffers_.at(ins).data(), in.at(name).data(), ins->get_shape().bytes(), "a bench input");
        }
        for (const auto& ins : prog_.main())
            if (ins.name() == "attention") buffers_.emplace(&ins, gpu::device_buffer(ins.get_shape().bytes(), "a bench output"));
    }
    double time(const char* lowering) {
        const gpu::gpu_lowering* l = nullptr;
        for (const auto& x : gpu::gpu_lowerings())
            if (std::string(x.what) == lowering) l = &x;
        if (!l) throw std::runtime_error(cat("no lowering '", lowering, "'"));
        gpu::library_handles libs(s_.get());
        // A transpose view reads its source's memory from its start.
        gpu::lowering_context ctx(prog_.main(), libs, [this](const instruction& i) {
            const instruction* x = &i;
            while (x->name() == "transpose") x = &*x->inputs().front();
            return buffers_.at(x).data();
        });
        for (const auto& ins : prog_.main())
            if (ins.name() == "attention") l->lower(ctx, ins);
        gpu::kernel_set set;
        gpu::kernel_build_stats stats;
        auto kernels = set.build(ctx.sources, {"sm_90", true, true, {}}, stats);
        for (auto& launch : ctx.launches) launch.kernel = kernels[launch.source];
        double best = 1e30;
        for (int round = 0; round < 5; ++round) {
            for (int i = 0; i < 10; ++i) ctx.steps[0].launch(s_.get());
            s_.synchronize("the bench's warm-up");
            auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < 100; ++i) ctx.steps[0].launch(s_.get());
            s_.synchronize("the bench");
            best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 100);
        }
        return best;
    }

private:
    program prog_;
    std::map<const instruction*, gpu::device_buffer> buffers_;
    gpu::stream s_;
};

TEST(gpu_flash_attention_bench, model_shapes) {
    if (!std::getenv("KILN_FLASH_BENCH")) GTEST_SKIP() << "benchmark mode: set KILN_FLASH_BENCH=1";
    // The H100 SXM's dense float16/bfloat16 tensor-core peak (fp32 accumulation), TFLOP/s.
    constexpr double peak = 989.4;
    std::printf("| shape | type | flash (us) | row kernel (us) | speedup | flash TFLOP/s | %% of fp16 peak |\n"
                "|---|---|---:|---:|---:|---:|---:|\n");
    for (const auto& p : problems()) {
        if (std::string(p.name).find("_b") == std::string::npos) continue;   // the model shapes
        for (dtype t : {dtype::float16, dtype::bfloat16}) {
            program prog = make_program(p, t, p.b);
            param_map in;
            std::size_t index = 0;
            for (const auto& name : prog.main().parameter_names())
                in[name] = random_argument(prog.main().get_parameter(name)->get_shape(), 1, index++);
            kernel_timer timer(prog, in);
            double flash = timer.time("attention (flash kernel)");
            const bool rows_too = std::string(std::getenv("KILN_FLASH_BENCH")) != "flash";
            double row = rows_too ? timer.time("attention (generated kernel, one block per query row)") : 0.0;
            // Useful FLOPs: 2 per multiply-add of Q·Kᵀ and of P·V over the keys each query sees.
            double pairs = p.causal ? p.s * (p.s + 1) / 2.0 : double(p.s) * p.skv;
            double flops = 2.0 * p.b * p.h * pairs * (p.d + p.dv);
            char row_cells[64] = "- | -";
            if (rows_too) std::snprintf(row_cells, sizeof row_cells, "%.1f | %.1fx", row * 1e3, row / flash);
            const double tflops = flops / (flash * 1e-3) / 1e12;
            std::printf("| %s | %s | %.1f | %s | %.1f | %.1f%% |\n", p.name, t == dtype::float16 ? "fp16" : "bf16",
                        flash * 1e3, row_cells, tflops, tflops / peak * 100);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(shapes, gpu_flash_attention,
                         ::testing::Combine(::testing::ValuesIn(problems()),
                                            ::testing::Values(dtype::float16, dtype::bfloat16)),
                         [](const auto& info) {
                             return cat(std::get<0>(info.param).name, "_",
                                        std::get<1>(info.param) == dtype::float16 ? "fp16" : "bf16");
                         });

INSTANTIATE_TEST_SUITE_P(shapes, gpu_gemm_attention,
                         ::testing::Combine(::testing::ValuesIn(problems()),
                                            ::testing::Values(dtype::float32, dtype::float64)),
                         [](const auto& info) {
                             return cat(std::get<0>(info.param).name, "_",
                                        std::get<1>(info.param) == dtype::float32 ? "fp32" : "fp64");
                         });

}  // namespace
}  // namespace kiln
