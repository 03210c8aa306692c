// The cpu target in float16 and bfloat16 against ref: generated regions, --bf16, the exactness of
// the float16 conversions, normalizations and contractions. Random inputs.
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
