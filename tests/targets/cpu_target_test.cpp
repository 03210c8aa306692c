// The cpu target against ref on programs that reach each of its kernel kinds: generated pointwise
// code (broadcast operands, literals, column-major inputs), oneDNN convolution epilogues with a
// residual, and blocked layouts passed between consecutive convolutions. Random inputs, seed 0.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "tools/saved_program.hpp"
#include "tools/verify.hpp"

namespace kiln {
namespace {

void expect_close(const argument& got, const argument& want) {
    auto g = to_doubles(got), w = to_doubles(want);
    ASSERT_EQ(g.size(), w.size());
    for (std::size_t i = 0; i < g.size(); ++i)
        ASSERT_NEAR(g[i], w[i], 1e-4 + 1e-4 * std::abs(w[i])) << "element " << i;
}

// Compiles `text` for cpu (-O) and ref (no passes) and compares on the same random inputs.
std::vector<std::string> check_against_ref(const std::string& text, bool column_major = false) {
    param_map in;
    program p = parse_text(text);
    std::size_t k = 0;
    for (const auto& name : p.main().parameter_names()) {
        shape s;
        for (auto prm : p.main().parameters())
            if (p.main().parameter_name(*prm) == name) s = prm->get_shape();
        argument a = random_argument(s, 0, k++);
        if (column_major && s.ndim() > 1) {
            auto lens = s.lens();
            std::vector<std::size_t> strides(lens.size());
            std::size_t st = 1;
            for (std::size_t d = 0; d < lens.size(); ++d) strides[d] = st, st *= lens[d];
            argument c(shape(s.type(), lens, strides));
            shape cs = c.get_shape();
            for (std::size_t i = 0; i < s.elements(); ++i)
                std::memcpy(c.data() + cs.index(i) * 4, a.data() + i * 4, 4);
            a = c;
        }
        in[name] = a;
    }
    auto cpu = make_target("cpu")->compile(parse_text(text));
    auto ref = make_target("ref")->compile(parse_text(text), {.optimize = false});
    auto got = cpu->run(in);
    auto want = ref->run(in);
    EXPECT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i]);
    return cpu->stats().placement;
}

bool placed(const std::vector<std::string>& placement, const std::string& what) {
    for (const auto& p : placement)
        if (p.find(what) != std::string::npos) return true;
    return false;
}

TEST(cpu_target, pointwise_regions_run_as_generated_code) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {2, 3, 4, 5}
b = @param:b -> float_type, {3, 1, 1}
c = @param:c -> float_type, {5}
@0 = add(x,b)
@1 = @literal{0.5} -> float_type, {}
@2 = mul(@0,@1)
@3 = sigmoid(@2)
@4 = sub(@3,c)
@5 = relu(@4)
@6 = @return(@5)
)";
    for (bool cm : {false, true}) {
        SCOPED_TRACE(cm ? "column-major inputs" : "standard inputs");
        auto placement = check_against_ref(text, cm);
        EXPECT_TRUE(placed(placement, "generated code: 1 instruction (pointwise 1)")) << ::testing::PrintToString(placement);
        EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
    }
}

TEST(cpu_target, convolutions_with_residual_keep_blocked_layouts) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {1, 16, 12, 12}
w1 = @param:w1 -> float_type, {16, 16, 3, 3}
w2 = @param:w2 -> float_type, {16, 16, 3, 3}
b = @param:b -> float_type, {16, 1, 1}
@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w1)
@1 = add(@0,b)
@2 = relu(@1)
@3 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](@2,w2)
@4 = add(@3,x)
@5 = relu(@4)
@6 = pooling[mode=max,padding={0, 0, 0, 0},stride={2, 2},lengths={2, 2},dilations={1, 1},ceil_mode=false,count_include_pad=false,lp_order=2,global=false](@5)
@7 = @return(@6)
)";
    auto placement = check_against_ref(text);
    EXPECT_TRUE(placed(placement, "onednn: 3 instructions")) << ::testing::PrintToString(placement);
}

// An observer sees the blocked intermediates of a convolution chain as logical tensors: every
// value run_observed passes matches ref's value of the same instruction (what verify and dumps
// compare); read raw, the blocked layout would put the channels in another order.
TEST(cpu_target, observed_values_are_logical_tensors) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {1, 16, 12, 12}
w1 = @param:w1 -> float_type, {16, 16, 3, 3}
w2 = @param:w2 -> float_type, {16, 16, 3, 3}
w3 = @param:w3 -> float_type, {16, 16, 3, 3}
@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w1)
@1 = relu(@0)
@2 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](@1,w2)
@3 = relu(@2)
@4 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](@3,w3)
@5 = @return(@4)
)";
    param_map in;
    std::size_t k = 0;
    for (const char* name : {"x", "w1", "w2", "w3"}) {
        shape s = std::string(name) == "x" ? shape(dtype::float32, std::vector<std::size_t>{1, 16, 12, 12})
                                           : shape(dtype::float32, std::vector<std::size_t>{16, 16, 3, 3});
        in[name] = random_argument(s, 0, k++);
    }
    auto cpu = make_target("cpu")->compile(parse_text(text));
    // ref runs the lowered program, so both observe the same instructions (fused epilogues).
    auto ref = make_target("ref")->compile(cpu->get_program().clone(), {.optimize = false});
    std::vector<std::vector<double>> want;
    ref->run_observed(in, [&](const instruction& ins, const argument& a, double) {
        if (ins.get_shape().elements() == 16 * 144) want.push_back(to_doubles(a));
    });
    std::vector<std::vector<double>> got;
    cpu->run_observed(in, [&](const instruction& ins, const argument& a, double) {
        if (ins.get_shape().elements() == 16 * 144) got.push_back(to_doubles(a));
    });
    ASSERT_EQ(got.size(), want.size());
    ASSERT_GE(got.size(), 4u);   // x and the three convolutions
    for (std::size_t i = 0; i < got.size(); ++i) {
        SCOPED_TRACE("value " + std::to_string(i));
        ASSERT_EQ(got[i].size(), want[i].size());
        for (std::size_t e = 0; e < want[i].size(); ++e)
            ASSERT_NEAR(got[i][e], want[i][e], 1e-4 + 1e-4 * std::abs(want[i][e])) << "element " << e;
    }
}

// verify --bisect on cpu with zero tolerances (so float rounding fails every convolution): the
// first convolution is found, and the error it reports is rounding (a prefix's output is a
// logical tensor even where the full program keeps that value blocked).
TEST(cpu_target, bisect_finds_the_first_convolution) {
    program p = parse_text(R"(module: "main"
x = @param:x -> float_type, {1, 16, 12, 12}
w1 = @param:w1 -> float_type, {16, 16, 3, 3}
w2 = @param:w2 -> float_type, {16, 16, 3, 3}
@0 = relu(x)
@1 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](@0,w1)
@2 = relu(@1)
@3 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](@2,w2)
@4 = @return(@3)
)");
    param_map in{{"x", random_argument(shape(dtype::float32, std::vector<std::size_t>{1, 16, 12, 12}), 0, 0)},
                 {"w1", random_argument(shape(dtype::float32, std::vector<std::size_t>{16, 16, 3, 3}), 0, 1)},
                 {"w2", random_argument(shape(dtype::float32, std::vector<std::size_t>{16, 16, 3, 3}), 0, 2)}};
    verify_options o;
    auto cpu = make_target("cpu");
    EXPECT_TRUE(verify_program(p, *cpu, in, o).pass);
    o.tolerances.rms_tol = 0, o.tolerances.atol = 0, o.tolerances.rtol = 0;
    bisect_result b = bisect_program(p, *cpu, in, o);
    ASSERT_TRUE(b.found);
    EXPECT_NE(b.instruction.find("convolution"), std::string::npos) << b.instruction;
    EXPECT_NE(b.inputs.at(1).find("w1"), std::string::npos) << b.inputs.at(1);
    EXPECT_LT(b.cmp.rms_error, 1e-5);
}

// An epilogue op oneDNN has no post-op for (div) stays out of the epilogue (the fusion policy) and
// runs as generated code; nothing falls to the reference computes ("ref compute" in the report).
TEST(cpu_target, epilogue_takes_only_post_ops) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {1, 8, 10, 10}
w = @param:w -> float_type, {8, 8, 3, 3}
b = @param:b -> float_type, {8, 1, 1}
@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w)
@1 = add(@0,b)
@2 = relu(@1)
@3 = div(@2,b)
@4 = @return(@3)
)";
    auto placement = check_against_ref(text);
    EXPECT_TRUE(placed(placement, "onednn: 1 instruction (fused_epilogue 1)")) << ::testing::PrintToString(placement);
    EXPECT_TRUE(placed(placement, "generated code: 1 instruction (pointwise 1)")) << ::testing::PrintToString(placement);
    EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
}

// What no kernel takes runs its reference compute and the report says so, by op and type, with
// the instructions (named by position in main where the model gave no node name).
TEST(cpu_target, report_names_what_runs_on_reference_computes) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {2, 3, 3}
h = @param:h -> half_type, {4, 4}
@0 = cumsum[axis=0,exclusive=false,reverse=false](x)
@1 = cumsum[axis=1,exclusive=false,reverse=false](x)
@2 = det(h)
@3 = @return(@0,@1,@2)
)";
    auto placement = check_against_ref(text);
    EXPECT_TRUE(placed(placement, "ref compute: 3 (cumsum float_type 2: '@2', '@3'; det half_type 1: '@4')"))
        << ::testing::PrintToString(placement);
}

// rms_norm with a contiguous scale, and with one constant along the row (broadcast over the rows).
const char* const rms_norm_program = R"(module: "main"
x = @param:x -> float_type, {3, 5, 64}
s = @param:s -> float_type, {64}
t = @param:t -> float_type, {5, 1}
@0 = rms_norm[axis=-1,epsilon=1e-05](x,s)
@1 = multibroadcast[out_lens={3, 5, 64}](t)
@2 = rms_norm[axis=2,epsilon=0.001](x,@1)
@3 = @return(@0,@2)
)";

// ConvTranspose on oneDNN's deconvolution (weights [C_in, C_out / group, k...] read permuted),
// with groups, strides, asymmetric pads and output_padding; rms_norm as generated code.
TEST(cpu_target, deconvolution_on_onednn_and_rms_norm_generated) {
    for (const char* attrs : {"padding={1, 0, 1, 1},stride={2, 2},dilation={1, 1},output_padding={1, 1},group=2",
                              "padding={0, 0, 0, 0},stride={1, 1},dilation={2, 2},output_padding={},group=1"}) {
        SCOPED_TRACE(attrs);
        const std::string text = std::string(R"(module: "main"
x = @param:x -> float_type, {1, 8, 7, 6}
w = @param:w -> float_type, {8, 3, 3, 3}
@0 = deconvolution[)") + attrs + R"(](x,w)
@1 = @return(@0)
)";
        auto placement = check_against_ref(text);
        EXPECT_TRUE(placed(placement, "onednn: 1 instruction (deconvolution 1)")) << ::testing::PrintToString(placement);
    }
    auto placement = check_against_ref(rms_norm_program);
    EXPECT_TRUE(placed(placement, "generated code: 2 instructions (rms_norm 2)")) << ::testing::PrintToString(placement);
}

// float16 and bfloat16 pointwise regions run as generated code computing in float (rounded to
// their type after each op, as ref); --bf16 runs oneDNN's bf16 primitives with their post-ops
// where the CPU has AVX512-BF16, else computes in float32 and says so.
TEST(cpu_target, low_precision_regions_and_bf16_compute) {
    for (const char* t : {"half_type", "bf16_type"}) {
        SCOPED_TRACE(t);
        const std::string text = std::string(R"(module: "main"
x = @param:x -> )") + t + R"(, {4, 33}
y = @param:y -> )" + t + R"(, {33}
@0 = mul(x,y)
@1 = sigmoid(@0)
@2 = convert[target_type=float_type,saturate=true](@1)
@3 = @return(@2)
)";
        program p = parse_text(text);
        param_map in;
        in["x"] = random_argument(p.main().parameters()[0]->get_shape(), 0, 0);
        in["y"] = random_argument(p.main().parameters()[1]->get_shape(), 0, 1);
        auto exe = make_target("cpu")->compile(parse_text(text));
        EXPECT_TRUE(placed(exe->stats().placement, "generated code: 1 instruction (pointwise 1)"))
            << ::testing::PrintToString(exe->stats().placement);
        auto g = to_doubles(exe->run(in)[0]);
        auto w = to_doubles(make_target("ref")->compile(parse_text(text), {.optimize = false})->run(in)[0]);
        for (std::size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 1e-2) << i;
    }
    const std::string conv = R"(module: "main"
x = @param:x -> float_type, {1, 16, 10, 10}
w = @param:w -> float_type, {16, 16, 3, 3}
b = @param:b -> float_type, {16, 1, 1}
@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w)
@1 = add(@0,b)
@2 = relu(@1)
@3 = @return(@2)
)";
    program p = parse_text(conv);
    param_map in;
    for (std::size_t k = 0; k < 3; ++k)
        in[p.main().parameter_names()[k]] = random_argument(p.main().get_parameter(p.main().parameter_names()[k])->get_shape(), 0, k);
    auto cpu = make_target("cpu");
    compile_options bf16{.precision = compute_precision::bf16};
    auto exe = cpu->compile(parse_text(conv), bf16);
    bool native = cpu->ignored_options(bf16).empty();
    EXPECT_TRUE(placed(exe->stats().placement, "onednn: 1 instruction (fused_epilogue 1)"))
        << ::testing::PrintToString(exe->stats().placement);
    if (!native) {
        EXPECT_EQ(cpu->ignored_options(bf16), std::vector<std::string>{"--bf16 (this CPU has no AVX512-BF16: cpu computes in float32)"});
    }
    auto g = to_doubles(exe->run(in)[0]);
    auto w = to_doubles(make_target("ref")->compile(parse_text(conv), {.optimize = false})->run(in)[0]);
    double err = 0, norm = 0;
    for (std::size_t i = 0; i < g.size(); ++i) err += (g[i] - w[i]) * (g[i] - w[i]), norm += w[i] * w[i];
    EXPECT_LT(std::sqrt(err / norm), native ? 2e-2 : 1e-5);
}

// The generated code's float16 conversions (F16C through _Float16) are exact:
// every float16 bit pattern loads as ref converts it, and floats store as ref rounds them (the
// midpoint of every pair of neighbouring float16 values, ties to even, and a sweep of float bit
// patterns through every exponent: subnormals, overflow to infinity, NaN).
TEST(cpu_target, float16_conversions_of_generated_code_are_exact) {
    auto same = [](const argument& got, const argument& want) {
        auto g = to_doubles(got), w = to_doubles(want);
        ASSERT_EQ(g.size(), w.size());
        for (std::size_t i = 0; i < g.size(); ++i)
            if (!(std::isnan(g[i]) && std::isnan(w[i]))) {
                ASSERT_EQ(g[i], w[i]) << "element " << i;
            }
    };
    const std::string load = R"(module: "main"
x = @param:x -> half_type, {65536}
@0 = convert[target_type=float_type,saturate=true](x)
@1 = neg(@0)
@2 = @return(@1)
)";
    argument h(shape(dtype::float16, std::vector<std::size_t>{65536}));
    for (std::size_t i = 0; i < 65536; ++i) {
        auto bits = static_cast<std::uint16_t>(i);
        std::memcpy(h.data() + 2 * i, &bits, 2);
    }
    auto exe = make_target("cpu")->compile(parse_text(load));
    EXPECT_TRUE(placed(exe->stats().placement, "generated code: 1 instruction (pointwise 1)"))
        << ::testing::PrintToString(exe->stats().placement);
    same(exe->run({{"x", h}})[0], make_target("ref")->compile(parse_text(load), {.optimize = false})->run({{"x", h}})[0]);

    const std::string store = R"(module: "main"
y = @param:y -> float_type, {327680}
@0 = neg(y)
@1 = convert[target_type=half_type,saturate=false](@0)
@2 = @return(@1)
)";
    argument f(shape(dtype::float32, std::vector<std::size_t>{327680}));
    auto* fv = reinterpret_cast<float*>(f.data());
    auto all = to_doubles(h);
    for (std::size_t i = 0; i < 65535; ++i)   // midpoints (within one sign: the neighbour's bits + 1)
        fv[i] = static_cast<float>((all[i] + all[i + 1]) / 2);
    for (std::size_t i = 65535; i < 327680; ++i) {
        auto bits = static_cast<std::uint32_t>((i - 65535) * 16411u);
        std::memcpy(fv + i, &bits, 4);
    }
    exe = make_target("cpu")->compile(parse_text(store));
    EXPECT_TRUE(placed(exe->stats().placement, "generated code: 1 instruction (pointwise 1)"))
        << ::testing::PrintToString(exe->stats().placement);
    same(exe->run({{"y", f}})[0], make_target("ref")->compile(parse_text(store), {.optimize = false})->run({{"y", f}})[0]);
}

// Every attention variant runs on oneDNN (none on the reference compute): causal with an offset,
// softcap, bool and float masks that broadcast, grouped-query heads (q 4 heads over k/v 2), and
// a bool mask with rows of no key at all (zeros, as ref).
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
};

std::string attention_text(const attention_variant& v, const std::string& type) {
    std::string mask = v.mask;
    if (mask.rfind("float_type", 0) == 0) mask = type + mask.substr(10);
    std::string text = "module: \"main\"\nq = @param:q -> " + type + ", " + v.q + "\nk = @param:k -> " + type + ", " + v.kv +
                       "\nv = @param:v -> " + type + ", " + v.kv + "\n";
    if (!mask.empty()) text += "m = @param:m -> " + mask + "\n";
    return text + "@0 = attention[" + v.attrs + "](q,k,v" + (mask.empty() ? "" : ",m") + ")\n@1 = @return(@0)\n";
}

TEST(cpu_target, attention_variants_on_onednn) {
    for (const auto& v : attention_variants) {
        SCOPED_TRACE(std::string(v.attrs) + " q " + v.q + " kv " + v.kv + " mask " + v.mask);
        auto placement = check_against_ref(attention_text(v, "float_type"));
        EXPECT_TRUE(placed(placement, "onednn: 1 instruction (attention 1)")) << ::testing::PrintToString(placement);
        EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
    }
}

// The same variants in float16 and bfloat16 on random inputs (seeds 0 and 1), against ref (which
// computes in double and rounds the result) within the type's tolerance: bf16 through oneDNN's
// bf16 matmuls where the CPU has AVX512-BF16, float16 (and bf16 elsewhere) as the float kernel
// over tiles of one batch entry and key/value head. None on the reference compute.
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

// fused_reduce regions as generated code: (x - max)^2 / sum((x - max)^2) over a middle axis (three
// passes per lane; softmax itself is recognized and runs on oneDNN), a
// mean over two axes without keepdims of a broadcast expression, each reduction kind over the last
// axis with a pointwise consumer, and a mean and variance whose mean (no keepdims) is broadcast
// back over the row. None runs on the reference computes.
const char* const fused_reduce_programs[] = {
        R"(module: "main"
x = @param:x -> float_type, {4, 37, 5}
@0 = reduce_max[axes={1}](x)
@1 = multibroadcast[out_lens={4, 37, 5}](@0)
@2 = sub(x,@1)
@3 = mul(@2,@2)
@4 = reduce_sum[axes={1}](@3)
@5 = multibroadcast[out_lens={4, 37, 5}](@4)
@6 = div(@3,@5)
@7 = @return(@6)
)",
        R"(module: "main"
x = @param:x -> float_type, {3, 4, 5, 6}
b = @param:b -> float_type, {6}
@0 = mul(x,x)
@1 = multibroadcast[out_lens={3, 4, 5, 6}](b)
@2 = add(@0,@1)
@3 = reduce_mean[axes={1, 2},keepdims=false](@2)
@4 = @return(@3)
)",
        R"(module: "main"
x = @param:x -> float_type, {2, 3, 5}
x0 = @param:x0 -> float_type, {2, 5}
@0 = reduce_mean[axes={-1},keepdims=false](x0)
@1 = broadcast[axis=0,out_lens={2, 5}](@0)
@2 = sub(x0,@1)
@3 = mul(@2,@2)
@4 = reduce_mean[axes={1},keepdims=false](@3)
@5 = rsqrt(@4)
@6 = reduce_sum[axes={2}](x)
@7 = @return(@5,@6)
)",
};
const char* const reductions[] = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_l1",
                                  "reduce_l2", "reduce_sum_square", "reduce_log_sum", "reduce_log_sum_exp"};
std::string reduction_program(const char* reduce) {
    return std::string(R"(module: "main"
x = @param:x -> float_type, {6, 7}
@0 = abs(x)
@1 = )") + reduce + R"([axes={-1}](@0)
@2 = @literal{2} -> float_type, {}
@3 = multibroadcast[out_lens={6, 1}](@2)
@4 = mul(@1,@3)
@5 = @return(@4)
)";
}

TEST(cpu_target, fused_reduce_regions_run_as_generated_code) {
    for (const char* text : fused_reduce_programs) {
        SCOPED_TRACE(text);
        auto placement = check_against_ref(text);
        EXPECT_TRUE(placed(placement, "generated code")) << ::testing::PrintToString(placement);
        EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
    }
    for (const char* reduce : reductions) {
        std::string text = reduction_program(reduce);
        SCOPED_TRACE(text);
        auto placement = check_against_ref(text);
        EXPECT_TRUE(placed(placement, "generated code: 1 instruction (fused_reduce 1)")) << ::testing::PrintToString(placement);
    }
}

// `text` with every float_type made `type`, compiled for cpu (-O) and ref (no passes) and run on
// the same random inputs (seeds 0 and 1); the results agree within the type's tolerance (ref
// computes each op in double and rounds its result to the type, the cpu code in float).
std::vector<std::string> check_low_against_ref(std::string text, const std::string& type) {
    for (std::size_t p = 0; (p = text.find("float_type", p)) != std::string::npos; p += type.size()) text.replace(p, 10, type);
    bool half = type == "half_type";
    double rtol = half ? 4e-3 : 3.2e-2, atol = half ? 1e-3 : 1e-2;
    program prog = parse_text(text);
    auto cpu = make_target("cpu")->compile(parse_text(text));
    auto ref = make_target("ref")->compile(parse_text(text), {.optimize = false});
    for (std::uint64_t seed : {0, 1}) {
        param_map in;
        std::size_t k = 0;
        for (auto prm : prog.main().parameters())
            in[prog.main().parameter_name(*prm)] = random_argument(prm->get_shape(), seed, k++);
        auto got = cpu->run(in);
        auto want = ref->run(in);
        EXPECT_EQ(got.size(), want.size());
        for (std::size_t o = 0; o < got.size() && o < want.size(); ++o) {
            EXPECT_EQ(got[o].get_shape().type(), want[o].get_shape().type());
            auto g = to_doubles(got[o]), w = to_doubles(want[o]);
            EXPECT_EQ(g.size(), w.size());
            for (std::size_t i = 0; i < g.size() && i < w.size(); ++i)
                EXPECT_NEAR(g[i], w[i], atol + rtol * std::abs(w[i])) << type << " seed " << seed << " output " << o << " element " << i;
        }
    }
    return cpu->stats().placement;
}

// The same regions in float16 and bfloat16: generated code reading and writing the type, computing
// in float (sums in double), none on the reference compute.
TEST(cpu_target, fused_reduce_regions_in_float16_and_bfloat16) {
    for (const char* type : {"half_type", "bf16_type"}) {
        for (const char* text : fused_reduce_programs) {
            SCOPED_TRACE(text);
            auto placement = check_low_against_ref(text, type);
            EXPECT_TRUE(placed(placement, "generated code")) << ::testing::PrintToString(placement);
            EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
        }
        for (const char* reduce : reductions) {
            std::string text = reduction_program(reduce);
            SCOPED_TRACE(text);
            auto placement = check_low_against_ref(text, type);
            EXPECT_TRUE(placed(placement, "generated code: 1 instruction (fused_reduce 1)"))
                << ::testing::PrintToString(placement);
        }
    }
}

TEST(cpu_target, rms_norm_in_float16_and_bfloat16) {
    for (const char* type : {"half_type", "bf16_type"}) {
        SCOPED_TRACE(type);
        auto placement = check_low_against_ref(rms_norm_program, type);
        EXPECT_TRUE(placed(placement, "generated code: 2 instructions (rms_norm 2)")) << ::testing::PrintToString(placement);
    }
}

// layernorm, softmax (over a middle axis) and logsoftmax in float16 and bfloat16 on oneDNN: in
// bf16 where the CPU has AVX512-BF16, else in float32 with x converted in and the result out.
TEST(cpu_target, normalizations_in_float16_and_bfloat16_on_onednn) {
    const char* text = R"(module: "main"
x = @param:x -> float_type, {4, 6, 32}
s = @param:s -> float_type, {32}
b = @param:b -> float_type, {32}
@0 = layernorm[axis=-1,epsilon=1e-05](x,s,b)
@1 = softmax[axis=1](x)
@2 = logsoftmax[axis=-1](x)
@3 = @return(@0,@1,@2)
)";
    for (const char* type : {"half_type", "bf16_type"}) {
        SCOPED_TRACE(type);
        auto placement = check_low_against_ref(text, type);
        EXPECT_TRUE(placed(placement, "onednn: 3 instructions (layernorm 1, logsoftmax 1, softmax 1)"))
            << ::testing::PrintToString(placement);
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
        EXPECT_TRUE(placed(placement, "onednn: 1 instruction (attention 1)")) << ::testing::PrintToString(placement);
    }
}

// A NaN anywhere in a row makes its max and min NaN, as in ref (the vector lanes' max alone would
// drop it); other rows are unaffected.
TEST(cpu_target, fused_reduce_max_min_propagate_nan) {
    for (const char* reduce : {"reduce_max", "reduce_min"}) {
        auto exe = make_target("cpu")->compile(parse_text(std::string(R"(module: "main"
x = @param:x -> float_type, {3, 40}
@0 = )") + reduce + R"([axes={1}](x)
@1 = neg(@0)
@2 = @return(@1)
)"));
        argument x = random_argument(shape(dtype::float32, std::vector<std::size_t>{3, 40}), 0, 0);
        x.as<float>()[40 + 17] = std::nanf("");
        auto y = to_doubles(exe->run({{"x", x}}).at(0));
        EXPECT_FALSE(std::isnan(y[0])) << reduce;
        EXPECT_TRUE(std::isnan(y[1])) << reduce;
        EXPECT_FALSE(std::isnan(y[2])) << reduce;
    }
}

// Gather as row copies on any axis, int64 and int32 indices (random in [-4, 4]: negative ones
// wrap); an index out of range is the reference's error, naming the instruction.
TEST(cpu_target, gather_copies_rows) {
    for (const char* c : {"float_type, {9, 6}|int64_type, {2, 3}|0", "float_type, {3, 7, 4}|int32_type, {5}|1",
                          "half_type, {2, 3, 8}|int64_type, {4, 2}|-1", "int64_type, {8}|int64_type, {}|0"}) {
        std::string spec = c;
        auto bar1 = spec.find('|'), bar2 = spec.rfind('|');
        std::string text = "module: \"main\"\nx = @param:x -> " + spec.substr(0, bar1) + "\ni = @param:i -> " +
                           spec.substr(bar1 + 1, bar2 - bar1 - 1) + "\n@0 = gather[axis=" + spec.substr(bar2 + 1) +
                           "](x,i)\n@1 = @return(@0)\n";
        SCOPED_TRACE(text);
        auto placement = check_against_ref(text);
        EXPECT_TRUE(placed(placement, "row copies: 1 instruction (gather 1)")) << ::testing::PrintToString(placement);
    }
    auto exe = make_target("cpu")->compile(parse_text(R"(module: "main"
x = @param:x -> float_type, {4, 3}
i = @param:i -> int64_type, {2}
@0 = gather[axis=0](x,i)
@1 = @return(@0)
)"));
    argument idx(shape(dtype::int64, std::vector<std::size_t>{2}));
    idx.as<std::int64_t>()[0] = 1, idx.as<std::int64_t>()[1] = 4;
    try {
        exe->run({{"x", random_argument(shape(dtype::float32, std::vector<std::size_t>{4, 3}), 0, 0)}, {"i", idx}});
        ADD_FAILURE() << "no error for index 4 of a dim of 4";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("gather"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("index 4"), std::string::npos) << e.what();
    }
}

// A reshape of a transposed value is a copy in row-major order: oneDNN's reorder.
// Integer and bool pointwise regions as generated code, computing in 64 bits and wrapping to the
// element type as ref does (int8 products overflow here), with comparisons, where, bitwise ops
// and converts between integers, bools and floats. Integer division stays on the reference, which
// raises on a zero divisor (the generated helpers would give 0).
TEST(cpu_target, integer_and_bool_regions_run_as_generated_code) {
    for (const char* type : {"int8_type", "uint8_type", "int32_type", "int64_type"}) {
        std::string t = type;
        std::string text = "module: \"main\"\nx = @param:x -> " + t + ", {4, 33}\ny = @param:y -> " + t + ", {33}\n" +
                           R"(@0 = multibroadcast[out_lens={4, 33}](y)
@1 = mul(x,@0)
@2 = @literal{37} -> )" + t + R"(, {}
@3 = multibroadcast[out_lens={4, 33}](@2)
@4 = mul(@1,@3)
@5 = add(@4,x)
@6 = bitwise_xor(@5,@0)
@7 = greater(@6,x)
@8 = where(@7,@6,@1)
@9 = max(@8,x)
@10 = convert[target_type=float_type,saturate=false](@9)
@11 = convert[target_type=bool_type,saturate=false](@9)
@12 = @return(@10,@11)
)";
        SCOPED_TRACE(text);
        auto placement = check_against_ref(text);
        EXPECT_TRUE(placed(placement, "generated code")) << ::testing::PrintToString(placement);
        EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
    }
    const std::string division = R"(module: "main"
x = @param:x -> int32_type, {8}
y = @param:y -> int32_type, {8}
@0 = add(x,y)
@1 = div(@0,y)
@2 = @return(@1)
)";
    auto exe = make_target("cpu")->compile(parse_text(division));
    EXPECT_TRUE(placed(exe->stats().placement, "ref compute: 1 (pointwise int32_type 1:")) << ::testing::PrintToString(exe->stats().placement);
    argument x(shape(dtype::int32, std::vector<std::size_t>{8})), y(shape(dtype::int32, std::vector<std::size_t>{8}));
    std::memset(x.data(), 0, x.get_shape().bytes());
    std::memset(y.data(), 0, y.get_shape().bytes());
    EXPECT_THROW(exe->run({{"x", x}, {"y", y}}), error);
}

// Concat as block copies along the first, a middle and the last axis (negative too), in float,
// int64, bool and float16, with an input empty along the axis and a constant input.
TEST(cpu_target, concat_copies_blocks) {
    for (const char* type : {"float_type", "int64_type", "bool_type", "half_type"})
        for (const char* axis : {"0", "1", "-1"}) {
            std::string t = type;
            std::string text = "module: \"main\"\nx = @param:x -> " + t + ", {2, 3, 4}\ny = @param:y -> " + t +
                               ", {2, 3, 4}\ne = @param:e -> " + t + ", {0, 0, 0}\n";
            // e's dims along the other axes are those of x: rewritten per axis below.
            std::string e_lens = std::string(axis) == "0" ? "{0, 3, 4}" : std::string(axis) == "1" ? "{2, 0, 4}" : "{2, 3, 0}";
            text.replace(text.find("{0, 0, 0}"), 9, e_lens);
            text += "@0 = concat[axis=" + std::string(axis) + "](x,e,y,x)\n@1 = @return(@0)\n";
            SCOPED_TRACE(text);
            auto placement = check_against_ref(text);
            EXPECT_TRUE(placed(placement, "block copies: 1 instruction (concat 1)")) << ::testing::PrintToString(placement);
            EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
        }
}

TEST(cpu_target, reshape_copies_on_onednn) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {2, 5, 4, 3}
@0 = transpose[permutation={0, 2, 1, 3}](x)
@1 = reshape[dims={2, 4, 15}](@0)
@2 = @return(@1)
)";
    for (bool cm : {false, true}) {
        auto placement = check_against_ref(text, cm);
        EXPECT_TRUE(placed(placement, "onednn: 1 instruction (reshape 1)")) << ::testing::PrintToString(placement);
    }
}

// Separate executables of one program run at once from several threads.
TEST(cpu_target, separate_executables_run_concurrently) {
    const std::string text = R"(module: "main"
x = @param:x -> float_type, {1, 8, 16, 16}
w = @param:w -> float_type, {8, 8, 3, 3}
@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w)
@1 = relu(@0)
@2 = @return(@1)
)";
    program p = parse_text(text);
    param_map in;
    in["x"] = random_argument(p.main().parameters()[0]->get_shape(), 0, 0);
    in["w"] = random_argument(p.main().parameters()[1]->get_shape(), 0, 1);
    auto want = make_target("ref")->compile(parse_text(text), {.optimize = false})->run(in)[0].copy();
    std::vector<std::thread> threads;
    std::vector<int> ok(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            auto exe = make_target("cpu")->compile(parse_text(text), {.threads = 1});
            bool all = true;
            for (int r = 0; r < 20; ++r) {
                auto g = to_doubles(exe->run(in)[0]), w = to_doubles(want);
                for (std::size_t i = 0; i < g.size(); ++i) all = all && std::abs(g[i] - w[i]) < 1e-4;
            }
            ok[t] = all;
        });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) EXPECT_TRUE(ok[t]) << "thread " << t;
}

// A literal of `n` values in [-1, 1] (seeded), in text IR.
std::string literal_text(std::size_t n, unsigned seed) {
    std::string s = "@literal{";
    unsigned v = seed * 2654435761u + 1;
    for (std::size_t i = 0; i < n; ++i) {
        v = v * 1664525u + 1013904223u;
        s += (i ? ", " : "") + std::to_string(static_cast<double>(v >> 8) / (1u << 23) - 1.0);
    }
    return s + "}";
}

// A saved program keeps the weights in the layouts the primitives chose: loading it reads them
// as saved (no reorder) and computes the same; blobs that name another layout are reordered again.
TEST(cpu_target, saved_programs_keep_reordered_weights) {
    const std::string text = std::string(R"(module: "main"
x = @param:x -> float_type, {1, 16, 10, 10}
@0 = )") + literal_text(16 * 16 * 9, 1) + R"( -> float_type, {16, 16, 3, 3}
@1 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,@0)
@2 = relu(@1)
@3 = reshape[dims={1, 1600}](@2)
@4 = )" + literal_text(1600 * 32, 2) + R"( -> float_type, {1600, 32}
@5 = dot(@3,@4)
@6 = @return(@5)
)";
    param_map in;
    in["x"] = random_argument(shape(dtype::float32, {1, 16, 10, 10}), 0, 0);
    auto exe = make_target("cpu")->compile(parse_text(text));
    EXPECT_EQ(exe->stats().notes, std::vector<std::string>{"weights in oneDNN layouts: 2 reordered now, 0 read as saved"});
    auto want = exe->run(in)[0].copy();
    auto ref = make_target("ref")->compile(parse_text(text), {.optimize = false})->run(in)[0].copy();
    expect_close(want, ref);
    auto blobs = exe->saved().blobs;
    ASSERT_EQ(blobs.size(), 2u);
    std::string path = ::testing::TempDir() + "cpu_saved_weights.kiln";
    saved_program_info info;
    info.target = "cpu";
    save_program(exe->get_program(), info, path, {{}, blobs});
    loaded_program l = load_program(path);
    ASSERT_EQ(l.parts.blobs.size(), 2u);
    auto again = make_target("cpu")->load_saved(std::move(l.prog), {}, l.parts);
    EXPECT_EQ(again->stats().notes, std::vector<std::string>{"weights in oneDNN layouts: 0 reordered now, 2 read as saved"});
    auto got = again->run(in)[0];
    ASSERT_EQ(got.get_shape().bytes(), want.get_shape().bytes());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.get_shape().bytes()), 0);
    for (auto& b : l.parts.blobs) b.name += "/another CPU's layout";
    auto other = make_target("cpu")->load_saved(load_program(path).prog, {}, l.parts);
    EXPECT_EQ(other->stats().notes, std::vector<std::string>{"weights in oneDNN layouts: 2 reordered now, 0 read as saved"});
    expect_close(other->run(in)[0], ref);
    std::remove(path.c_str());
}

// float16 contractions on a CPU without AVX512-FP16 (this EPYC) compute in float32 on oneDNN, the
// reorders around each primitive converting (F16C); bfloat16 ones in bf16 where AVX512-BF16 is.
// A convolution with a bias, a residual and a max pool; matmuls with a broadcast bias and with
// packed constant weights; a reshape of a transpose (a copy). None on the reference compute.
TEST(cpu_target, float16_and_bfloat16_contractions_on_onednn) {
    const std::string programs[] = {
        R"(module: "main"
x = @param:x -> float_type, {1, 16, 10, 10}
w = @param:w -> float_type, {16, 16, 3, 3}
b = @param:b -> float_type, {16, 1, 1}
@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w)
@1 = add(@0,b)
@2 = add(@1,x)
@3 = relu(@2)
@4 = pooling[mode=max,padding={0, 0, 0, 0},stride={2, 2},lengths={2, 2},dilations={1, 1},ceil_mode=false,count_include_pad=false,lp_order=2,global=false](@3)
@5 = @return(@4)
)",
        R"(module: "main"
a = @param:a -> float_type, {2, 8, 32}
m = @param:m -> float_type, {2, 32, 16}
c = @param:c -> float_type, {16}
@0 = dot(a,m)
@1 = multibroadcast[out_lens={2, 8, 16}](c)
@2 = add(@0,@1)
@3 = @return(@2)
)",
        std::string(R"(module: "main"
a = @param:a -> float_type, {8, 32}
@0 = )") + literal_text(32 * 24, 3) + R"( -> float_type, {32, 24}
@1 = dot(a,@0)
@2 = @return(@1)
)",
        R"(module: "main"
x = @param:x -> float_type, {4, 6, 8}
@0 = transpose[permutation={0, 2, 1}](x)
@1 = reshape[dims={4, 48}](@0)
@2 = @return(@1)
)",
    };
    for (const char* type : {"half_type", "bf16_type"})
        for (const auto& text : programs) {
            SCOPED_TRACE(std::string(type) + "\n" + text);
            auto placement = check_low_against_ref(text, type);
            EXPECT_TRUE(placed(placement, "onednn")) << ::testing::PrintToString(placement);
            EXPECT_FALSE(placed(placement, "ref compute")) << ::testing::PrintToString(placement);
        }
}

}  // namespace
}  // namespace kiln
