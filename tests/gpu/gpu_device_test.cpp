// The gpu target's parts on the device: generated elementwise kernels (and the disk cache),
// cuBLASLt matmuls in fp32/fp16/bf16 with transposed and batched operands, and an executable's
// views, literals and staging, each against the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/module.hpp"
#include "core/random.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "targets/gpu/device.hpp"
#include "targets/gpu/elementwise.hpp"
#include "targets/gpu/kernel_compiler.hpp"
#include "targets/gpu/libraries.hpp"
#include "targets/gpu/matmul.hpp"

namespace kiln {
namespace {

gpu::device_buffer upload(const argument& a) {
    gpu::device_buffer d(a.get_shape().bytes(), "a test input");
    gpu::copy_to_device(d.data(), a.data(), a.get_shape().bytes(), "test upload");
    return d;
}

argument download(const gpu::device_buffer& d, const shape& s) {
    argument a(s);
    gpu::copy_to_host(a.data(), d.data(), s.bytes(), "test download");
    return a;
}

double rel_l2(const std::vector<double>& got, const std::vector<double>& want) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        num += (got[i] - want[i]) * (got[i] - want[i]);
        den += want[i] * want[i];
    }
    return std::sqrt(num / std::max(den, 1e-30));
}

TEST(gpu_device, elementwise_broadcast_and_transposed_operands_and_the_cache) {
    std::size_t R = 37, C = 61;
    argument a = random_argument(shape(dtype::float16, {R, C}), 1);
    argument b = random_argument(shape(dtype::float32, std::vector<std::size_t>{C}), 2);
    argument c = random_argument(shape(dtype::bfloat16, {C, R}), 3);   // read transposed
    gpu::elementwise_spec spec;
    spec.inputs = {a.get_shape(), shape(dtype::float32, {R, C}, {0, 1}), shape(dtype::bfloat16, {R, C}, {1, R})};
    spec.output = shape(dtype::float32, {R, C});
    spec.body = "const float y = x0 + x1 * x2;";
    auto dir = std::filesystem::temp_directory_path() / ("kiln-cache-test-" + std::to_string(::getpid()));
    gpu::kernel_settings ks{gpu::current_device().arch, true, true, dir.string()};
    auto src = gpu::make_elementwise_kernel(spec, "a test");
    auto da = upload(a), db = upload(b), dc = upload(c);
    gpu::device_buffer dy(spec.output.bytes(), "test output");
    for (int round = 0; round < 2; ++round) {
        gpu::kernel_set set;
        gpu::kernel_build_stats st;
        auto k = set.build({src, src}, ks, st);   // identical sources compile once
        EXPECT_EQ(st.kernels, 1u);
        EXPECT_EQ(st.cache_hits, round == 0 ? 0u : 1u);
        void* ptrs[] = {dy.data(), da.data(), db.data(), dc.data()};
        void* args[] = {&ptrs[0], &ptrs[1], &ptrs[2], &ptrs[3]};
        auto dims = gpu::elementwise_launch(spec.output.elements());
        gpu::launch_kernel(k[0], dims.grid, dims.block, args, nullptr, "a test");
        auto y = to_doubles(download(dy, spec.output));
        auto av = to_doubles(a), bv = to_doubles(b), cv = to_doubles(c);
        std::vector<double> want(R * C);
        for (std::size_t i = 0; i < R; ++i)
            for (std::size_t j = 0; j < C; ++j) want[i * C + j] = av[i * C + j] + bv[j] * cv[j * R + i];
        EXPECT_LT(rel_l2(y, want), 1e-6);
    }
    std::filesystem::remove_all(dir);
}

// The vector path (several elements a thread, one load per contiguous operand) against the host,
// in fp32/fp16/bf16: a head split [B, S, H, D] read as [B, H, S, D] (the transformers' q/k/v
// copies), plus a row bias (one vector load) and a per-row scale (one value for each vector).
// Then the same kernel from pointers one element off alignment: the one-element loop.
void check_vector_path(dtype t, double tol) {
    const std::size_t B = 3, S = 7, H = 5, D = 24;
    shape out(t, {B, H, S, D});
    argument x = random_argument(shape(t, {B, S, H, D}), 21);
    argument bias = random_argument(shape(dtype::float32, std::vector<std::size_t>{D}), 22);
    argument scale = random_argument(shape(t, {B, H, S}), 23);
    gpu::elementwise_spec spec;
    spec.inputs = {shape(t, {B, H, S, D}, {S * H * D, D, H * D, 1}), shape(dtype::float32, {B, H, S, D}, {0, 0, 0, 1}),
                   shape(t, {B, H, S, D}, {H * S, S, 1, 0})};
    spec.output = out;
    spec.body = "const float y = x0 * x2 + x1;";
    spec.any_order = true;
    const std::size_t v = gpu::elementwise_vector(spec);
    EXPECT_EQ(v, t == dtype::float32 ? 4u : 8u);
    auto xv = to_doubles(x), bv = to_doubles(bias), sv = to_doubles(scale);
    std::vector<double> want(out.elements());
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t s = 0; s < S; ++s)
                for (std::size_t d = 0; d < D; ++d)
                    want[((b * H + h) * S + s) * D + d] =
                        xv[((b * S + s) * H + h) * D + d] * sv[(b * H + h) * S + s] + bv[d];
    gpu::kernel_set set;
    gpu::kernel_build_stats st;
    auto k = set.build({gpu::make_elementwise_kernel(spec, "a test")}, {gpu::current_device().arch, true, false, {}}, st);
    const std::size_t e = dtype_bits(t) / 8;
    for (std::size_t skew : {0, 1}) {   // skew: every pointer one element past a vector boundary
        gpu::device_buffer dx(x.get_shape().bytes() + 16, "x"), db(bias.get_shape().bytes() + 16, "bias"),
            ds(scale.get_shape().bytes() + 16, "scale"), dy(out.bytes() + 16, "y");
        std::byte* px = dx.data() + skew * e;
        std::byte* pb = db.data() + skew * 4;
        std::byte* ps = ds.data() + skew * e;
        std::byte* py = dy.data() + skew * e;
        gpu::copy_to_device(px, x.data(), x.get_shape().bytes(), "test upload");
        gpu::copy_to_device(pb, bias.data(), bias.get_shape().bytes(), "test upload");
        gpu::copy_to_device(ps, scale.data(), scale.get_shape().bytes(), "test upload");
        void* ptrs[] = {py, px, pb, ps};
        void* args[] = {&ptrs[0], &ptrs[1], &ptrs[2], &ptrs[3]};
        auto dims = gpu::elementwise_launch(spec);
        gpu::launch_kernel(k[0], dims.grid, dims.block, args, nullptr, "a test");
        argument y(out);
        gpu::copy_to_host(y.data(), py, out.bytes(), "test download");
        EXPECT_LT(rel_l2(to_doubles(y), want), tol) << dtype_name(t) << " skew " << skew;
    }
}

TEST(gpu_device, elementwise_vector_path_fp32) { check_vector_path(dtype::float32, 1e-6); }
TEST(gpu_device, elementwise_vector_path_fp16) { check_vector_path(dtype::float16, 2e-3); }
TEST(gpu_device, elementwise_vector_path_bf16) { check_vector_path(dtype::bfloat16, 1e-2); }

// C[b] = A[b] B with A [3, M, K] and B given transposed ([N, K] in memory, shared by the batch),
// against doubles. A standard is one GEMM of 3 * M rows (the batch folded into M); A given
// transposed ([3, K, M] in memory) cannot fold and runs as a strided batch.
void check_matmul(dtype t, double tol, bool a_transposed = false) {
    std::size_t Bt = 3, M = 33, K = 70, N = 45;
    argument a = random_argument(shape(t, {Bt, M, K}), 11);
    argument bT = random_argument(shape(t, {N, K}), 12);
    gpu::matmul_problem p;
    p.a = a.get_shape();
    if (a_transposed) {   // the same values, stored [3, K, M]
        auto av = to_doubles(a);
        std::vector<double> tv(av.size());
        for (std::size_t b = 0; b < Bt; ++b)
            for (std::size_t i = 0; i < M; ++i)
                for (std::size_t k = 0; k < K; ++k) tv[(b * K + k) * M + i] = av[(b * M + i) * K + k];
        a = from_doubles(shape(t, {Bt, K, M}), tv);
        p.a = shape(t, {Bt, M, K}, {K * M, 1, M});
    }
    p.b = shape(t, {Bt, K, N}, {0, 1, K});
    p.c = shape(t, {Bt, M, N});
    gpu::stream s;
    gpu::library_handles libs(s.get());
    libs.reserve_workspace(32 << 20);
    gpu::matmul_plan plan(libs.blas(), p, libs.workspace_bytes(), "a test");
    auto da = upload(a), db = upload(bT);
    gpu::device_buffer dc(p.c.bytes(), "test output");
    plan.run(da.data(), db.data(), dc.data(), libs.workspace(), s.get());
    s.synchronize("a test");
    auto got = to_doubles(download(dc, p.c));
    auto bv = to_doubles(bT);
    std::vector<double> av(Bt * M * K);   // A [b, i, k] wherever it lies
    auto stored = to_doubles(a);
    for (std::size_t b = 0; b < Bt; ++b)
        for (std::size_t i = 0; i < M; ++i)
            for (std::size_t k = 0; k < K; ++k)
                av[(b * M + i) * K + k] = stored[b * p.a.strides()[0] + i * p.a.strides()[1] + k * p.a.strides()[2]];
    std::vector<double> want(Bt * M * N);
    for (std::size_t b = 0; b < Bt; ++b)
        for (std::size_t i = 0; i < M; ++i)
            for (std::size_t j = 0; j < N; ++j) {
                double acc = 0;
                for (std::size_t k = 0; k < K; ++k) acc += av[(b * M + i) * K + k] * bv[j * K + k];
                want[(b * M + i) * N + j] = acc;
            }
    EXPECT_LT(rel_l2(got, want), tol) << dtype_name(t);
}

TEST(gpu_device, matmul_fp32_without_tf32) { check_matmul(dtype::float32, 1e-6); }
TEST(gpu_device, matmul_fp16) { check_matmul(dtype::float16, 2e-3); }
TEST(gpu_device, matmul_bf16) { check_matmul(dtype::bfloat16, 1e-2); }
TEST(gpu_device, matmul_fp16_strided_batch) { check_matmul(dtype::float16, 2e-3, true); }

// Views, literals and parameters need no kernel: outputs come back through staging with their
// strides, and a second run allocates nothing on the host.
TEST(gpu_device, executable_views_literals_and_staging) {
    program p = parse_text(
        "x = @param:x -> float_type, {3, 4}\n"
        "@0 = transpose[permutation={1, 0}](x)\n"
        "@1 = @literal{0.5, -1.0, 0.25, 2.0, 1.5} -> half_type, {5}\n"
        "@2 = @return(@0, @1)\n");
    compile_options opts;
    opts.optimize = false;
    auto gpu = make_target("gpu")->compile(p.clone(), opts);
    auto ref = make_target("ref")->compile(p.clone(), opts);
    param_map in{{"x", random_argument(shape(dtype::float32, std::vector<std::size_t>{3, 4}), 9)}};
    auto want = ref->run(in);
    std::vector<argument> w;
    for (auto& a : want) w.push_back(a.copy());
    auto got = gpu->run(in);
    std::size_t allocs = host_buffer_allocations();
    got = gpu->run(in);
    EXPECT_EQ(host_buffer_allocations(), allocs);
    ASSERT_EQ(got.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) EXPECT_TRUE(got[i].copy().same_values(w[i])) << i;
}

// Run-time checks through the device-side error slots: in-range gathers (negative indices too)
// match ref; an index out of range fails the run with ref's message naming the node, and the
// executable runs again afterwards (the slots are cleared each run).
TEST(gpu_device, gather_index_out_of_range_fails_naming_the_node) {
    program p = parse_text(
        "x = @param:x -> float_type, {3, 4}\ni = @param:i -> int64_type, {2, 2}\n@0 = gather[axis=1](x,i)\n"
        "@1 = @return(@0)\n");
    compile_options opts;
    opts.optimize = false;
    auto gpu = make_target("gpu")->compile(p.clone(), opts);
    auto ref = make_target("ref")->compile(p.clone(), opts);
    argument x = random_argument(shape(dtype::float32, std::vector<std::size_t>{3, 4}), 5);
    auto indices = [](std::vector<std::int64_t> v) {
        argument a(shape(dtype::int64, std::vector<std::size_t>{2, 2}));
        std::memcpy(a.data(), v.data(), 4 * sizeof(std::int64_t));
        return a;
    };
    param_map good{{"x", x}, {"i", indices({0, 3, -1, -4})}};
    auto want = ref->run(good)[0].copy();
    EXPECT_TRUE(gpu->run(good)[0].copy().same_values(want));
    param_map bad{{"x", x}, {"i", indices({0, 3, 4, 1})}};
    try {
        gpu->run(bad);
        ADD_FAILURE() << "no error";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("@0 = gather[axis=1]: index 4 (indices element 2) is out of range for dim "
                                             "1 of size 4 (valid: -4 to 3)"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(gpu->run(good)[0].copy().same_values(want));
}

// A cancel stops a gpu run before its next launch, naming the instruction.
TEST(gpu_device, a_cancel_stops_the_run_before_a_launch) {
    program p = parse_text("x = @param:x -> float_type, {64}\n@0 = neg(x)\n@1 = exp(@0)\n@2 = @return(@1)\n");
    compile_options opts;
    opts.optimize = false;
    auto gpu = make_target("gpu")->compile(p.clone(), opts);
    param_map in{{"x", random_argument(shape(dtype::float32, std::vector<std::size_t>{64}), 2)}};
    run_control c;
    c.cancel();
    run_control_scope scope(c);
    try {
        gpu->run(in);
        ADD_FAILURE() << "not stopped";
    } catch (const cancelled& e) {
        EXPECT_NE(std::string(e.what()).find("module main: @0 = neg: cancelled"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(gpu->run(in));   // the cancel was taken
}

// The other kernels that check their data, on the device: on fresh random data in range they
// match ref; one bad index (GatherElements, GatherND, ScatterElements, ScatterND) or one zero
// divisor (integer Div and Mod, lone and in a fused region) fails the run with the message ref
// gives, naming the node; the executable then runs again (its slots are cleared each run).
TEST(gpu_device, checking_kernels_fail_naming_the_node) {
    struct check_case {
        std::string text;
        std::vector<std::size_t> dims;   // the dim of x that indices element e indexes: dims[e % size]
        std::string input;               // the input made bad
        std::size_t element;             // its element made bad
        std::int64_t value;    // the bad value
        std::string message;   // what both targets must say
    };
    const std::vector<check_case> cases = {
        {"x = @param:x -> float_type, {3, 4}\ni = @param:i -> int64_type, {3, 2}\n@0 = gather_elements[axis=1](x,i)\n"
         "@1 = @return(@0)\n",
         {1}, "i", 3, 4, "@0 = gather_elements[axis=1]: index 4 (indices element 3) is out of range for dim 1 of size 4 (valid: -4 to 3)"},
        {"x = @param:x -> float_type, {2, 3, 4}\ni = @param:i -> int32_type, {5, 2}\n@0 = gathernd(x,i)\n@1 = @return(@0)\n",
         {0, 1}, "i", 7, -4, "@0 = gathernd[batch_dims=0]: index -4 (indices element 7) is out of range for dim 1 of size 3 (valid: -3 to 2)"},
        {"x = @param:x -> float_type, {5, 3}\ni = @param:i -> int64_type, {4, 3}\nu = @param:u -> float_type, {4, 3}\n"
         "@0 = scatter_elements[axis=0,reduction=add](x,i,u)\n@1 = @return(@0)\n",
         {0}, "i", 10, -6, ": index -6 (indices element 10) is out of range for dim 0 of size 5 (valid: -5 to 4)"},
        {"x = @param:x -> float_type, {4, 3, 2}\ni = @param:i -> int64_type, {3, 2}\nu = @param:u -> float_type, {3, 2}\n"
         "@0 = scatternd(x,i,u)\n@1 = @return(@0)\n",
         {0, 1}, "i", 5, 3, ": index 3 (indices element 5) is out of range for dim 1 of size 3 (valid: -3 to 2)"},
        {"a = @param:a -> int32_type, {64}\nb = @param:b -> int32_type, {64}\n@0 = div(a,b)\n@1 = @return(@0)\n",
         {}, "b", 40, 0, "@0 = div: div: integer division by zero"},
        {"a = @param:a -> int64_type, {8, 8}\nb = @param:b -> int64_type, {8}\n@0 = multibroadcast[out_lens={8, 8}](b)\n"
         "@1 = mod(a,@0)\n@2 = @return(@1)\n",
         {}, "b", 5, 0, "@1 = mod[fmod=false]: mod: integer modulus by zero"},
        {"a = @param:a -> int32_type, {64}\nb = @param:b -> int32_type, {64}\n@0 = pointwise(a,b), [pointwise0]\n"
         "@1 = @return(@0)\n\nmodule: \"pointwise0\"\nx0 = @param:x0 -> int32_type, {64}\nx1 = @param:x1 -> int32_type, {64}\n"
         "@0 = div(x0,x1)\n@1 = mod[fmod=1](x0,x1)\n@2 = add(@0,@1)\n@3 = @return(@2)\n",
         {}, "b", 9, 0, "div: integer division by zero"},
    };
    compile_options opts;
    opts.optimize = false;
    for (const auto& c : cases) {
        SCOPED_TRACE(c.text);
        program p = parse_text(c.text);
        auto gpu = make_target("gpu")->compile(p.clone(), opts);
        auto ref = make_target("ref")->compile(p.clone(), opts);
        // Random data; indices wrapped into [-n, n) of the dim they index, divisors made nonzero.
        param_map good = random_inputs(p.main(), 11);
        if (good.count("i")) {
            const shape& xs = good.at("x").get_shape();
            const shape is = good.at("i").get_shape();
            auto v = to_int64s(good.at("i"));
            for (std::size_t e = 0; e < v.size(); ++e) {
                auto n = static_cast<std::int64_t>(xs.lens()[c.dims[e % c.dims.size()]]);
                v[e] = ((v[e] + 8 * n) % (2 * n)) - n;
            }
            good["i"] = from_int64s(is, v);
        } else {
            auto v = to_int64s(good.at("b"));
            for (std::size_t e = 0; e < v.size(); ++e)
                if (v[e] == 0) v[e] = 1 + static_cast<std::int64_t>(e % 3);
            good["b"] = from_int64s(good.at("b").get_shape(), v);
        }
        auto want = ref->run(good)[0].copy();
        EXPECT_TRUE(gpu->run(good)[0].copy().same_values(want));
        param_map bad = good;
        auto v = to_int64s(good.at(c.input));
        v.at(c.element) = c.value;
        bad[c.input] = from_int64s(good.at(c.input).get_shape(), v);
        for (auto* t : {&ref, &gpu}) {
            try {
                (*t)->run(bad);
                ADD_FAILURE() << (t == &gpu ? "gpu" : "ref") << ": no error";
            } catch (const error& e) {
                EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
            }
        }
        EXPECT_TRUE(gpu->run(good)[0].copy().same_values(want));
    }
}

// Signed integer Pow, lone and in a fused region: on fresh random bases and exponents (negative
// ones too, where the base is not 0) it matches ref; one 0 raised to a negative power fails the
// run with ref's message naming the instruction; the executable then runs again.
TEST(gpu_device, integer_pow_of_zero_to_a_negative_power_fails_as_ref) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"a = @param:a -> int32_type, {64}\nb = @param:b -> int32_type, {64}\n@0 = pow(a,b)\n@1 = @return(@0)\n",
         "@0 = pow: pow: 0 raised to the negative power -3"},
        {"a = @param:a -> int64_type, {64}\nb = @param:b -> int64_type, {64}\n@0 = pointwise(a,b), [pointwise0]\n"
         "@1 = @return(@0)\n\nmodule: \"pointwise0\"\nx0 = @param:x0 -> int64_type, {64}\n"
         "x1 = @param:x1 -> int64_type, {64}\n@0 = pow(x0,x1)\n@1 = mul(@0,x0)\n@2 = @return(@1)\n",
         "pow: 0 raised to the negative power -3"},   // ref names the region's pow too
    };
    compile_options opts;
    opts.optimize = false;
    for (const auto& [text, message] : cases) {
        SCOPED_TRACE(text);
        program p = parse_text(text);
        auto gpu = make_target("gpu")->compile(p.clone(), opts);
        auto ref = make_target("ref")->compile(p.clone(), opts);
        param_map good = random_inputs(p.main(), 23);
        auto a = to_int64s(good.at("a")), b = to_int64s(good.at("b"));
        for (std::size_t e = 0; e < a.size(); ++e) {
            a[e] = a[e] % 5;        // small bases, 0 and ±1 among them
            b[e] = b[e] % 7 - 2;    // exponents from -8 to 4
            if (a[e] == 0 && b[e] < 0) b[e] = -b[e];
        }
        ASSERT_NE(std::count(a.begin(), a.end(), 0), 0) << "no zero base: the test would not test it";
        good["a"] = from_int64s(good.at("a").get_shape(), a);
        good["b"] = from_int64s(good.at("b").get_shape(), b);
        auto want = ref->run(good)[0].copy();
        EXPECT_TRUE(gpu->run(good)[0].copy().same_values(want));
        param_map bad = good;
        a[17] = 0;
        b[17] = -3;
        bad["a"] = from_int64s(good.at("a").get_shape(), a);
        bad["b"] = from_int64s(good.at("b").get_shape(), b);
        for (auto* t : {&ref, &gpu}) {
            try {
                (*t)->run(bad);
                ADD_FAILURE() << (t == &gpu ? "gpu" : "ref") << ": no error";
            } catch (const error& e) {
                EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
            }
        }
        EXPECT_TRUE(gpu->run(good)[0].copy().same_values(want));
    }
}

}  // namespace
}  // namespace kiln
