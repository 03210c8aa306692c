// Convolution epilogues in cuDNN's fused call (targets/gpu/conv_epilogue.hpp): which fused
// epilogues match (no device needed), and each pattern (bias, residual, both, with and without a
// relu, 1-3 spatial dims, a depthwise and an asymmetrically padded convolution, an activation
// cuDNN does not fuse) against ref on fresh random inputs and weights in float32, float16 and
// bfloat16, with the compile report's count of what ran fused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "core/printer.hpp"
#include "core/random.hpp"
#include "core/reflect.hpp"
#include "core/target.hpp"
#include "ops/fused.hpp"
#include "targets/gpu/conv_epilogue.hpp"
#include "targets/gpu/layout_nhwc.hpp"
#include "targets/gpu/lowering.hpp"
#include "tools/compare.hpp"
#include "gpu_test_util.hpp"

namespace kiln {
namespace {

using namespace gpu_test;

// Convolutions of `x` ({2, 16, 10, 10} for 2 spatial dims, 10 or 6x6x6 for 1 and 3), each with
// one epilogue; the returned values are the epilogues' results in main's order. Weights and
// biases are fresh random float32 literals (compiled in fp16/bf16 through the precision option).
program epilogues_program(std::size_t dims) {
    program p;
    module& m = p.main();
    std::size_t k = 0;
    auto lit = [&](lens_t lens) { return m.add_literal(literal(random_argument(shape(dtype::float32, lens), seed(), k++))); };
    // Filters uniform in +-sqrt(3 / fan-in): each convolution keeps its input's scale, so values
    // stay near 1 through the chain and the tolerances measure rounding, not a blow-up (ref rounds
    // the convolution before adding, cuDNN's fused call once at the end).
    auto filter = [&](lens_t lens) {
        argument a = random_argument(shape(dtype::float32, lens), seed(), k++);
        float scale = std::sqrt(3.0f * static_cast<float>(lens[0]) / static_cast<float>(a.get_shape().elements()));
        auto* v = reinterpret_cast<float*>(a.data());
        for (std::size_t i = 0; i < a.get_shape().elements(); ++i) v[i] *= scale;
        return m.add_literal(literal(a));
    };
    auto op = [&](const char* name, std::vector<instruction_ref> in) { return m.add_instruction(make_op(name), std::move(in)); };
    lens_t spatial(dims, dims == 3 ? 6 : 10), kernel(dims, 3);
    auto conv = [&](instruction_ref x, std::size_t m_out, std::int64_t group, bool asymmetric = false) {
        std::size_t c = x->get_shape().lens()[1];
        lens_t w{m_out, c / static_cast<std::size_t>(group)};
        w.insert(w.end(), kernel.begin(), kernel.end());
        ints pad(2 * dims, 1);
        if (asymmetric) pad[0] = 0;
        value a{{"padding", to_value(pad)}, {"stride", to_value(ints(dims, 1))}, {"dilation", to_value(ints(dims, 1))},
                {"group", value(group)}};
        return m.add_instruction(make_op("convolution", a), {x, filter(w)});
    };
    auto bias = [&](std::size_t c) {
        lens_t l(dims + 2, 1);
        l[1] = c;
        return lit(l);
    };
    lens_t xl{2, 16};
    xl.insert(xl.end(), spatial.begin(), spatial.end());
    auto x = m.add_parameter("x", shape(dtype::float32, xl));
    auto a = op("relu", {op("add", {conv(x, 16, 1), bias(16)})});                      // bias, relu
    auto b = op("add", {conv(a, 16, 1), bias(16)});                                     // bias only
    auto c = op("relu", {op("add", {op("add", {conv(b, 16, 1), bias(16)}), a})});       // bias, residual, relu
    auto d = op("add", {a, op("add", {bias(16), conv(c, 16, 1)})});                     // residual, bias
    auto e = op("relu", {op("add", {conv(d, 16, 1), c})});                              // residual, relu
    auto f = op("relu", {op("add", {conv(e, 16, 16), bias(16)})});                     // depthwise: not fused
    auto g = op("relu", {op("add", {conv(f, 16, 1, true), bias(16)})});                // asymmetric padding
    auto h = op("hard_swish", {op("add", {conv(g, 16, 1), bias(16)})});                // not fused
    m.add_return({a, b, c, d, e, f, g, h});
    return p;
}

// Each fused convolution epilogue of the lowered program and what the matcher says of it.
std::vector<std::string> matches(const program& p) {
    const module& m = p.main();
    auto layouts = gpu::choose_layouts(m);
    std::vector<std::string> r;
    for (const auto& ins : m) {
        const instruction* conv = gpu::convolution_of(ins);
        if (!conv || conv == &ins) continue;
        const module& body = *ins.module_inputs().at(0);
        // The operands of the body's parameters, at stand-in addresses, in their buffers' layouts.
        std::unordered_map<const instruction*, gpu::body_operand> known;
        auto names = body.parameter_names();
        static std::byte memory[1];
        for (std::size_t i = 0; i < names.size(); ++i) {
            const instruction& in = *ins.inputs()[i];
            known[&*body.get_parameter(names[i])] = {memory, layouts.count(&in) ? layouts.at(&in) : in.get_shape()};
        }
        const shape& out = layouts.count(&ins) ? layouts.at(&ins) : ins.get_shape();
        auto mt = gpu::match_conv_epilogue(body, *conv, out, known);
        r.push_back(mt.why_not.empty() ? cat(mt.bias ? "bias" : "", mt.residual ? "+residual" : "", mt.relu ? "+relu" : "")
                                       : mt.why_not);
    }
    return r;
}

TEST(gpu_no_device, conv_epilogues_matched_for_cudnn) {
    for (auto prec : {compute_precision::fp32, compute_precision::fp16}) {
        program p = epilogues_program(2);
        compile_options opts;
        opts.precision = prec;
        run_passes(p, gpu::gpu_passes(opts));
        // In float16 the last epilogue also converts the returned value to float32.
        std::vector<std::string> want{"bias+relu", "bias", "bias+residual+relu", "bias+residual", "+residual+relu",
                                      "a grouped convolution", "bias+relu",
                                      prec == compute_precision::fp32 ? "hard_swish" : "an output in another layout, type or shape"};
        EXPECT_EQ(matches(p), want) << printed(p);
    }
}

TEST(gpu_no_device, conv_epilogue_note_counts_the_reasons) {
    EXPECT_EQ(gpu::conv_epilogue_note({}), "");
    EXPECT_EQ(gpu::conv_epilogue_note({{"", 3}}), "convolution epilogues: 3 in cuDNN's fused call, 0 in a generated kernel");
    EXPECT_EQ(gpu::conv_epilogue_note({{"", 2}, {"hard_swish", 4}, {"sigmoid", 1}}),
              "convolution epilogues: 2 in cuDNN's fused call, 5 in a generated kernel (hard_swish: 4, sigmoid: 1)");
}

std::string note_of(const executable& e) {
    for (const auto& n : e.stats().notes)
        if (n.starts_with("convolution epilogues:")) return n;
    return {};
}

void check_epilogues(std::size_t dims, compute_precision prec, dtype t) {
    program p = epilogues_program(dims);
    compile_options opts;
    opts.precision = prec;
    auto gpu = make_target("gpu")->compile(p.clone(), opts);
    // ref in the same precision, so that both round each op's result alike.
    auto ref = make_target("ref")->compile(p.clone(), opts);
    lens_t xl{2, 16};
    xl.insert(xl.end(), dims, dims == 3 ? 6 : 10);
    param_map in{{"x", random_argument(shape(dtype::float32, xl), seed(), 99)}};
    auto want = ref->run(in);
    std::vector<argument> w;
    for (auto& a : want) w.push_back(a.copy());
    for (int run = 0; run < 2; ++run) {   // the first run launches step by step, the second replays the graph
        auto got = gpu->run(in);
        ASSERT_EQ(got.size(), w.size());
        for (std::size_t i = 0; i < w.size(); ++i) {
            auto c = compare_results(got[i].copy(), w[i], default_tolerances(t, prec));
            EXPECT_TRUE(c.pass) << dtype_name(t) << " " << dims << "-d output " << i << " run " << run << " seed " << seed()
                                << "\n" << describe(c);
        }
    }
    // Six of the eight epilogues are cuDNN's pattern: each is fused or says why not.
    std::string note = note_of(*gpu);
    EXPECT_NE(note.find(prec == compute_precision::fp32 ? "hard_swish: 1" : "another layout, type or shape: 1"), std::string::npos)
        << note;
    std::printf("%s %zu-d: %s\n", dtype_name(t).data(), dims, note.c_str());
}

TEST(gpu_conv_epilogue, two_d_float32_matches_ref) { check_epilogues(2, compute_precision::fp32, dtype::float32); }
TEST(gpu_conv_epilogue, two_d_float16_matches_ref) { check_epilogues(2, compute_precision::fp16, dtype::float16); }
TEST(gpu_conv_epilogue, two_d_bfloat16_matches_ref) { check_epilogues(2, compute_precision::bf16, dtype::bfloat16); }
TEST(gpu_conv_epilogue, one_d_float16_matches_ref) { check_epilogues(1, compute_precision::fp16, dtype::float16); }
TEST(gpu_conv_epilogue, three_d_float32_matches_ref) { check_epilogues(3, compute_precision::fp32, dtype::float32); }

// On the H100 the tests run on, cuDNN fuses the float16 NHWC convolutions with a relu (its
// heuristic's algorithm) and with the identity (the implicit precomputed GEMM); the depthwise
// one and the one converting the returned value to float32 stay a kernel.
TEST(gpu_conv_epilogue, float16_epilogues_run_fused) {
    program p = epilogues_program(2);
    compile_options opts;
    opts.precision = compute_precision::fp16;
    auto gpu = make_target("gpu")->compile(p.clone(), opts);
    EXPECT_TRUE(note_of(*gpu).starts_with("convolution epilogues: 6 in cuDNN's fused call, 2 in a generated kernel")) << note_of(*gpu);
}

}  // namespace
}  // namespace kiln
