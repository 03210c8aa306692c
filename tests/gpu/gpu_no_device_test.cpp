// What the gpu target does without a device: its kernels compile (NVRTC needs no GPU), an op
// without a GPU implementation is one compile error listing every such instruction, and making
// the target where there is no GPU says so.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/module.hpp"
#include "core/pass.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "targets/gpu/elementwise.hpp"
#include "targets/gpu/kernel_compiler.hpp"
#include "targets/gpu/libraries.hpp"
#include "targets/gpu/lowering.hpp"
#include "ops/fused.hpp"
#include "ops/gather.hpp"
#include "ops_test_util.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace kiln {
namespace {

TEST(gpu_no_device, elementwise_kernel_compiles_for_sm_90) {
    gpu::elementwise_spec spec;
    spec.inputs = {shape(dtype::float16, {4, 5}), shape(dtype::float32, {4, 5}, {0, 1}), shape(dtype::bfloat16, {4, 5}, {1, 4})};
    spec.output = shape(dtype::float16, {4, 5});
    spec.body = "const float y = x0 + x1 * x2;";
    auto src = gpu::make_elementwise_kernel(spec, "a test");
    std::string cubin = gpu::compile_to_cubin(src, {"sm_90", true, false, {}});
    EXPECT_GT(cubin.size(), 100u);
}

TEST(gpu_no_device, kernel_compile_error_names_the_instruction_and_prints_the_log) {
    gpu::kernel_source src{"k", "extern \"C\" __global__ void k() { undefined_thing(); }", "@3 = add (node 'Add_7')"};
    try {
        gpu::compile_to_cubin(src, {"sm_90", true, false, {}});
        FAIL() << "expected an error";
    } catch (const error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("nvrtcCompileProgram"), std::string::npos) << msg;
        EXPECT_NE(msg.find("Add_7"), std::string::npos) << msg;
        EXPECT_NE(msg.find("undefined_thing"), std::string::npos) << msg;
    }
}

TEST(gpu_no_device, unsupported_ops_are_one_error_listing_all) {
    program p;
    module& m = p.main();
    auto x = m.add_parameter("x", shape(dtype::float32, std::vector<std::size_t>{4}));
    auto a = m.add_instruction(make_op("nonzero"), std::vector<instruction_ref>{x});
    a->set_source_name("NonZero_3");
    auto b = m.add_instruction(make_op("unique"), std::vector<instruction_ref>{x});
    b->set_source_name("Unique_4");
    m.add_return(std::vector<instruction_ref>{a, b});
    try {
        gpu::check_supported(p.main());
        FAIL() << "expected an error";
    } catch (const error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("no GPU implementation for 2 instructions"), std::string::npos) << msg;
        EXPECT_NE(msg.find("nonzero"), std::string::npos) << msg;
        EXPECT_NE(msg.find("NonZero_3"), std::string::npos) << msg;
        EXPECT_NE(msg.find("Unique_4"), std::string::npos) << msg;
    }
}

// Strings never reach the device: the check lists the string parameter and the string op.
TEST(gpu_no_device, strings_are_refused_naming_the_instruction) {
    program p = parse_text(
        "x = @param:x -> string_type, {2}\n"
        "@0 = string_concat(x,x)\n"
        "@1 = @return(@0)\n");
    p.main().begin()->set_source_name("names");
    try {
        gpu::check_supported(p.main());
        FAIL() << "expected an error";
    } catch (const error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("no GPU implementation for 2 instructions"), std::string::npos) << msg;
        EXPECT_NE(msg.find("string_concat"), std::string::npos) << msg;
    }
}

TEST(gpu_no_device, making_the_target_without_a_device_is_a_clear_error) {
    try {
        auto t = make_target("gpu");
        EXPECT_EQ(t->device_arch().rfind("sm_", 0), 0u);   // there is a device
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

std::vector<test_case> all_cases() {
    std::vector<test_case> cases;
    const char* data = std::getenv("KILN_GPU_TEST_DATA");
    for (const auto& entry : std::filesystem::directory_iterator(std::string(data ? data : KILN_TEST_DATA_DIR) + "/ops/cases")) {
        if (entry.path().extension() != ".json") continue;
        std::ifstream f(entry.path());
        std::stringstream ss;
        ss << f.rdbuf();
        value doc = parse_json(ss.str());
        for (const auto& c : doc.at("cases").as_array()) {
            test_case tc{doc.at("family").as_string(), c};
            if (!tc.is_error_case()) cases.push_back(tc);
        }
    }
    std::sort(cases.begin(), cases.end(), [](auto& a, auto& b) { return a.name() < b.name(); });
    return cases;
}

// The op cases as the gpu target compiles them: its passes (fusion included), without the
// final check, so what is left unsupported can be listed. Null for cases of ops this binary does
// not register (the frontend's).
std::optional<program> lowered(const test_case& tc, compute_precision precision) {
    program p;
    try {
        p = tc.build();
    } catch (const error&) {
        return std::nullopt;
    }
    compile_options opts;
    opts.precision = precision;
    pass_options popts;
    popts.disabled = {"gpu_check_supported"};
    run_passes(p, gpu::gpu_passes(opts), popts);
    return p;
}

bool computes(const instruction& ins) { return !gpu::needs_no_step(ins); }

// The ops no GPU lowering takes yet, as the op cases use them (in fp32): sequences and optionals
// never (only the interpreter runs them), the rest not yet. An op that gains a lowering is removed
// here; one that loses it, or a new op without one, fails this test until it is listed.
const std::set<std::string> expected_unsupported = {
    "bitcast", "col2im", "compress", "concat_from_sequence", "convert", "cumprod", "cumsum", "deform_conv",
    "dequantizelinear", "det", "dft", "grid_sample", "if", "label_encoder", "linear_attention", "loop",
    "max_roi_pool", "nll_loss", "nonmax_suppression", "nonzero", "one_hot", "onnx_node", "optional",
    "optional_get_element", "optional_has_element", "pointwise", "quantizelinear", "range", "regex_full_match",
    "roi_align", "scan", "sequence_at", "sequence_construct", "sequence_empty", "sequence_erase",
    "sequence_insert", "sequence_length", "sequence_map", "split_to_sequence", "string_concat", "string_convert",
    "string_equal", "string_normalizer", "string_split", "tensor_scatter", "tfidf_vectorizer", "topk",
    "tree_ensemble", "unique",
};

TEST(gpu_no_device, unsupported_ops_of_the_op_cases_are_the_known_ones) {
    std::map<std::string, std::size_t> missing;   // op -> cases
    std::size_t cases = 0, supported = 0;
    std::set<std::string> ops;
    for (const auto& tc : all_cases()) {
        auto p = lowered(tc, compute_precision::fp32);
        if (!p) continue;
        ++cases;
        bool ok = true;
        for (const auto& ins : p->main()) {
            if (!computes(ins)) continue;
            ops.insert(std::string(ins.name()));
            if (!gpu::find_lowering(ins)) ++missing[std::string(ins.name())], ok = false;
        }
        supported += ok;
    }
    std::string list;
    std::set<std::string> got;
    for (const auto& [op, n] : missing) list += cat(list.empty() ? "" : ", ", op, " (", n, ")"), got.insert(op);
    std::printf("op cases: %zu of %zu lower completely; %zu of %zu ops have no GPU lowering: %s\n", supported, cases,
                got.size(), ops.size(), list.c_str());
    EXPECT_EQ(got, expected_unsupported);
}

// A reduction whose result a consumer broadcasts over more leading dims: the region's frame is the
// consumer's (lanes over {2, 3, 4}, each reducing 6 elements), and a reduction without keepdims
// spread back over its lane. One generated kernel each, and they compile.
TEST(gpu_no_device, fused_reduce_regions_with_wider_results_and_dropped_dims_compile) {
    for (const char* text : {"x = @param:x -> float_type, {4, 6}\n"
                             "z = @param:z -> float_type, {2, 3, 4, 6}\n"
                             "@0 = exp(x)\n"
                             "@1 = reduce_sum[axes={1}](@0)\n"
                             "@2 = multibroadcast[out_lens={2, 3, 4, 6}](@1)\n"
                             "@3 = add(z, @2)\n"
                             "@4 = @return(@3)\n",
                             "x = @param:x -> half_type, {4, 6}\n"
                             "@0 = reduce_mean[axes={1},keepdims=false](x)\n"
                             "@1 = broadcast[axis=0,out_lens={4, 6}](@0)\n"
                             "@2 = sub(x, @1)\n"
                             "@3 = @return(@2)\n"}) {
        program p = parse_text(text);
        pass_options popts;
        popts.disabled = {"gpu_check_supported"};
        run_passes(p, gpu::gpu_passes({}), popts);
        gpu::library_handles libs(nullptr);
        static std::byte fake[1];
        gpu::lowering_context ctx(p.main(), libs, [](const instruction&) { return fake; }, false);
        std::size_t fused = 0;
        for (const auto& ins : p.main()) {
            if (!ins.get_operator().get_if<ops::fused_reduce>()) continue;
            ++fused;
            const auto* l = gpu::find_lowering(ins);
            ASSERT_NE(l, nullptr) << text;
            l->lower(ctx, ins);
        }
        EXPECT_EQ(fused, 1u) << to_string(p);
        ASSERT_EQ(ctx.sources.size(), 1u) << text;
        EXPECT_NO_THROW(gpu::compile_to_cubin(ctx.sources[0], {"sm_90", true, false, {}})) << ctx.sources[0].code;
    }
}

// Every generated kernel of the op cases (the first case of each op, after the gpu passes, so
// fused regions too) compiles with NVRTC for sm_90: lowering runs with stand-in addresses, no
// device needed. Library steps (cuBLASLt, cuDNN) are left out; they are checked on the GPU.
TEST(gpu_no_device, generated_kernels_of_the_op_cases_compile) {
    // The first case of each op that each lowering takes (the integer dot, not only the float one).
    std::set<std::string> seen, sources;
    std::size_t compiled = 0;
    gpu::library_handles libs(nullptr);
    for (const auto& tc : all_cases()) {
        for (auto precision : {compute_precision::fp32, compute_precision::bf16}) {
            auto p = lowered(tc, precision);
            if (!p) continue;
            static std::byte fake[1];
            gpu::lowering_context ctx(p->main(), libs, [](const instruction&) { return fake; }, false);
            gpu::device_error_flags flags(fake, p->main().size());
            ctx.error_flags = &flags;
            for (const auto& ins : p->main()) {
                const auto* l = computes(ins) ? gpu::find_lowering(ins) : nullptr;
                if (!l || l->library) continue;
                if (!seen.insert(cat(tc.op_name(), " / ", l->what, " / ", static_cast<int>(precision))).second) continue;
                try {
                    l->lower(ctx, ins);
                } catch (const error& e) {
                    ADD_FAILURE() << tc.name() << ": " << e.what();
                }
            }
            for (const auto& src : ctx.sources) {
                if (!sources.insert(src.code).second) continue;
                EXPECT_NO_THROW(gpu::compile_to_cubin(src, {"sm_90", true, false, {}})) << tc.name();
                ++compiled;
            }
        }
    }
    std::printf("compiled %zu generated kernels of %zu (op case, lowering, precision) pairs\n", compiled, seen.size());
}

// The run-time checks' host side: a set slot is an error naming its instruction in the words its
// lowering gave (the reference's message for gather); no slot set, no error. The device side is
// tests/gpu/gpu_device_test.cpp's gather_index_out_of_range_fails_naming_the_node.
TEST(gpu_no_device, a_set_error_slot_fails_naming_the_instruction) {
    program p = parse_text(
        "x = @param:x -> float_type, {3}\ni = @param:i -> int64_type, {2}\n@0 = gather[axis=0](x,i)\n"
        "@1 = neg(@0)\n@2 = @return(@1)\n");
    gpu::library_handles libs(nullptr);
    static std::byte fake[1];
    gpu::lowering_context ctx(p.main(), libs, [](const instruction&) { return fake; }, false);
    std::vector<gpu::error_slot> slots(p.main().size());
    gpu::device_error_flags flags(slots.data(), slots.size());
    ctx.error_flags = &flags;
    for (const auto& ins : p.main())
        if (ins.get_operator().get_if<ops::gather>()) gpu::find_lowering(ins)->lower(ctx, ins);
    ASSERT_EQ(flags.used(), 1u);
    ASSERT_EQ(ctx.sources.size(), 1u);
    EXPECT_NE(ctx.sources[0].code.find("kiln::raise(err, kiln::error_index_out_of_range"), std::string::npos);
    EXPECT_NO_THROW(gpu::compile_to_cubin(ctx.sources[0], {"sm_90", true, false, {}}));
    EXPECT_NO_THROW(flags.check(slots.data()));
    slots[0] = {static_cast<std::uint32_t>(gpu::error_code::index_out_of_range), 0, -7, 1};
    try {
        flags.check(slots.data());
        ADD_FAILURE() << "no error";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find(
                      "module main: @0 = gather[axis=0]: index -7 (indices element 1) is out of range for dim 0 of size 3 "
                      "(valid: -3 to 2)"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace kiln
