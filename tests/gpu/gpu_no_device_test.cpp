// What the gpu target does without a device: its kernels compile (NVRTC needs no GPU), an op
// without a GPU implementation is one compile error listing every such instruction, and making
// the target where there is no GPU says so.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/module.hpp"
#include "core/pass.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "targets/gpu/dynamic_runner.hpp"
#include "targets/gpu/elementwise.hpp"
#include "targets/gpu/kernel_compiler.hpp"
#include "targets/gpu/libraries.hpp"
#include "targets/gpu/lowering.hpp"
#include "ops/fused.hpp"
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

// How many elements a thread of the generated kernel moves: 16 bytes of output (32 of an input)
// where the rows allow it, fewer where the rows are shorter, one where an operand is read
// across its rows or the body checks its data; each compiles for sm_90.
TEST(gpu_no_device, elementwise_vector_widths) {
    auto width = [](dtype out, std::vector<shape> in, bool checks = false) {
        gpu::elementwise_spec spec;
        spec.inputs = std::move(in);
        spec.output = shape(out, spec.inputs.at(0).lens());
        spec.body = "const auto y = x0;";
        spec.error_slot = checks;
        if (!checks) {
            EXPECT_GT(gpu::compile_to_cubin(gpu::make_elementwise_kernel(spec, "a test"), {"sm_90", true, false, {}}).size(), 100u);
        }
        return gpu::elementwise_vector(spec);
    };
    EXPECT_EQ(width(dtype::float16, {shape(dtype::float16, {4, 16})}), 8u);
    EXPECT_EQ(width(dtype::bfloat16, {shape(dtype::bfloat16, {4, 16})}), 8u);
    EXPECT_EQ(width(dtype::float32, {shape(dtype::float32, {4, 16})}), 4u);
    EXPECT_EQ(width(dtype::float64, {shape(dtype::float64, {4, 16})}), 2u);
    EXPECT_EQ(width(dtype::int8, {shape(dtype::int8, {4, 16})}), 8u);
    EXPECT_EQ(width(dtype::bool_, {shape(dtype::bool_, {4, 16})}), 8u);
    EXPECT_EQ(width(dtype::float16, {shape(dtype::float32, {4, 16})}), 8u);              // 32 bytes of float
    EXPECT_EQ(width(dtype::float16, {shape(dtype::float64, {4, 16})}), 4u);              // 32 bytes of double
    EXPECT_EQ(width(dtype::float16, {shape(dtype::float16, {4, 12})}), 4u);              // rows of 12
    EXPECT_EQ(width(dtype::float16, {shape(dtype::float16, {4, 5})}), 1u);               // rows of 5
    EXPECT_EQ(width(dtype::float16, {shape(dtype::float16, {4, 16}, {1, 0})}), 8u);      // one value a row
    EXPECT_EQ(width(dtype::float16, {shape(dtype::float16, {4, 16}, {20, 1})}), 4u);     // rows 20 apart
    EXPECT_EQ(width(dtype::float16, {shape(dtype::float16, {4, 16}, {1, 4})}), 1u);      // transposed
    EXPECT_EQ(width(dtype::int4, {shape(dtype::int4, {4, 16})}), 1u);                    // packed
    EXPECT_EQ(width(dtype::float16, {shape(dtype::float16, {4, 16})}, true), 1u);
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

// A sequence of string tensors has no GPU form (sequences hold device tensors, strings have
// none): the check lists every instruction that makes or reads one, with its node.
TEST(gpu_no_device, unsupported_ops_are_one_error_listing_all) {
    program p;
    module& m = p.main();
    auto x = m.add_parameter("x", shape(dtype::string, std::vector<std::size_t>{4}));
    auto a = m.add_instruction(make_op("sequence_construct"), std::vector<instruction_ref>{x});
    a->set_source_name("SequenceConstruct_3");
    auto b = m.add_instruction(make_op("sequence_length"), std::vector<instruction_ref>{a});
    b->set_source_name("SequenceLength_4");
    m.add_return(std::vector<instruction_ref>{a, b});
    try {
        gpu::check_supported(p.main());
        FAIL() << "expected an error";
    } catch (const error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("no GPU implementation for 2 instructions"), std::string::npos) << msg;
        EXPECT_NE(msg.find("sequence_construct"), std::string::npos) << msg;
        EXPECT_NE(msg.find("SequenceConstruct_3"), std::string::npos) << msg;
        EXPECT_NE(msg.find("SequenceLength_4"), std::string::npos) << msg;
    }
}

// Strings never reach the device: a string op is a host step, which the check accepts, the
// program goes to the dynamic runner, and the compile report names it with its node.
TEST(gpu_no_device, string_ops_are_reported_host_steps) {
    program p = parse_text(
        "x = @param:x -> string_type, {2}\n"
        "@0 = string_concat(x,x)\n"
        "@1 = @return(@0)\n");
    instruction_ref concat = std::next(p.main().begin());
    concat->set_source_name("names");
    gpu::check_supported(p.main());
    EXPECT_FALSE(gpu::static_module(p.main()));
    EXPECT_TRUE(gpu::host_step(*concat));
    EXPECT_EQ(gpu::host_steps_report(p.main()).rfind("host steps: 1 (string_concat 'names';", 0), 0u)
        << gpu::host_steps_report(p.main());
}

// string_split's results are a tuple of strings and int64 counts: its elements are views, the
// strings on the host and the counts on the device, both supported.
TEST(gpu_no_device, the_elements_of_string_splits_tuple_are_supported) {
    program p = parse_text(
        "x = @param:x -> string_type, {3}\n"
        "@0 = string_split[delimiter=\".\"](x)\n"
        "@1 = get_tuple_elem[index=0](@0)\n"
        "@2 = get_tuple_elem[index=1](@0)\n"
        "@3 = @return(@1,@2)\n");
    gpu::check_supported(p.main());
    EXPECT_EQ(gpu::host_steps_report(p.main()).rfind("host steps: 1 (string_split;", 0), 0u) << gpu::host_steps_report(p.main());
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

// The ops the gpu target does not run, as the op cases use them (in fp32): none (sequences and
// optionals run in the dynamic runner, string ops as its host steps). An op that loses its
// implementation, or a new op without one, fails this test until it is listed here.
const std::set<std::string> expected_unsupported = {};

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
            if (!gpu::gpu_supported(ins)) ++missing[std::string(ins.name())], ok = false;
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

// Only string ops run on the host (host_steps.cpp): across the op cases, an instruction is a host
// step exactly when it computes (is no view) on a string tensor, the runner's matching refuses
// every other (numeric label_encoder and tfidf_vectorizer go to their device lowering or are
// refused), and the string cases give some host steps, each listed in the compile report's line.
bool touches_strings(const instruction& ins) {
    auto strings = [](const shape& s) {
        if (s.is_tuple())
            return std::any_of(s.sub_shapes().begin(), s.sub_shapes().end(),
                               [](const shape& e) { return e.is_tensor() && e.type() == dtype::string; });
        return s.is_tensor() && s.type() == dtype::string;
    };
    return strings(ins.get_shape()) ||
           std::any_of(ins.inputs().begin(), ins.inputs().end(), [&](auto i) { return strings(i->get_shape()); });
}

TEST(gpu_no_device, the_host_path_takes_string_ops_only) {
    std::size_t host = 0, numeric = 0;
    for (const auto& tc : all_cases()) {
        auto p = lowered(tc, compute_precision::fp32);
        if (!p) continue;
        std::size_t steps = 0;
        for (const auto& ins : p->main()) {
            if (!computes(ins)) continue;
            const gpu::gpu_dynamic_op* d = gpu::find_dynamic_op(ins);
            const bool on_host = d && std::string(d->what).rfind("a string op", 0) == 0;
            EXPECT_EQ(gpu::host_step(ins), on_host) << tc.name() << ": " << ins.name();
            if (!touches_strings(ins)) {
                EXPECT_FALSE(on_host) << tc.name() << ": " << ins.name() << " has no string tensor but runs on the host";
                ++numeric;
                continue;
            }
            EXPECT_TRUE(on_host) << tc.name() << ": " << ins.name() << " computes on strings but is no host step";
            steps += on_host;
        }
        host += steps;
        std::string report = gpu::host_steps_report(p->main());
        if (steps) EXPECT_EQ(report.rfind(cat("host steps: ", steps, " ("), 0), 0u) << tc.name() << ": " << report;
        else EXPECT_EQ(report, "") << tc.name();
    }
    EXPECT_GT(host, 30u);
    EXPECT_GT(numeric, 1000u);
}

// A reduction whose result a consumer broadcasts over more leading dims: the region's frame is the
// consumer's (lanes over {2, 3, 4}, each reducing 6 elements), and a reduction without keepdims
// spread back over its lane, and a reduction over a dim-1 broadcast input. One generated kernel each,
// and they compile.
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
                             "@3 = @return(@2)\n",
                             // A mask's reduction over {2, 1, 4, 6} selecting among scores {2, 3, 4, 6}: the
                             // frame widens a kept dim the reduced input has as 1.
                             "x = @param:x -> float_type, {2, 1, 4, 6}\n"
                             "z = @param:z -> float_type, {2, 3, 4, 6}\n"
                             "@0 = reduce_max[axes={3}](x)\n"
                             "@1 = neg(@0)\n"
                             "@2 = add(z, @1)\n"
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

// Ops whose kernel differs by attribute and type more than the first case shows: the small element
// types (fp8, fp8e8m0, int4/uint4, int2/uint2, fp4e2m1) through convert and the quantize ops (each
// target type, saturate and rounding mode, blocked scales), grid_sample's modes, paddings and
// ranks, roi_align and max_roi_pool, one_hot, dft's directions, nll_loss's reductions, det, col2im, bitcast's copies, tensor_scatter, deform_conv, tree_ensemble, tfidf_vectorizer,
// linear_attention's update rules. Every case lowers and its kernel
// compiles.
TEST(gpu_no_device, every_case_of_the_generated_sampling_and_quantize_ops_compiles) {
    const std::set<std::string> families = {"convert", "quantize", "grid_sample", "roi_align", "dft", "loss", "det", "col2im", "bitcast", "deform_conv", "ml"};
    std::set<std::string> sources;
    std::size_t cases = 0;
    gpu::library_handles libs(nullptr);
    for (const auto& tc : all_cases()) {
        if (!families.count(tc.family) && tc.op_name() != "one_hot" && tc.op_name() != "tensor_scatter" &&
            tc.op_name() != "linear_attention")
            continue;
        auto p = lowered(tc, compute_precision::fp32);
        if (!p) continue;
        // String tokens (tfidf_vectorizer's pool_strings) are refused by the gpu target, by design.
        if (std::any_of(p->main().begin(), p->main().end(), [](const auto& i) { return i.get_shape().type() == dtype::string; }))
            continue;
        ++cases;
        static std::byte fake[1];
        gpu::lowering_context ctx(p->main(), libs, [](const instruction&) { return fake; }, false);
        gpu::device_error_flags flags(fake, p->main().size());
        ctx.error_flags = &flags;
        for (const auto& ins : p->main()) {
            if (!computes(ins)) continue;
            const auto* l = gpu::find_lowering(ins);
            if (!l) {
                ADD_FAILURE() << tc.name() << ": no lowering for " << ins.name();
                continue;
            }
            l->lower(ctx, ins);
        }
        for (const auto& src : ctx.sources) {
            if (!sources.insert(src.code).second) continue;
            EXPECT_NO_THROW(gpu::compile_to_cubin(src, {"sm_90", true, false, {}})) << tc.name() << "\n" << src.code;
        }
    }
    EXPECT_GT(cases, 150u);
    std::printf("convert, quantize, grid_sample, roi_align, one_hot, dft, nll_loss, det, col2im, bitcast, tensor_scatter, deform_conv, ml, linear_attention: %zu cases, %zu distinct kernels compiled\n", cases,
                sources.size());
}

// A program's instructions lowered without a device (stand-in addresses), its error slots in host
// memory, so a test can set one as a kernel would and read what the run would throw.
struct lowered_without_device {
    static std::byte* stand_in() {
        static std::byte b[1];
        return b;
    }
    explicit lowered_without_device(const std::string& text)
        : p(parse_text(text)), slots(p.main().size()), flags(slots.data(), slots.size()),
          ctx(p.main(), libs, [](const instruction&) { return stand_in(); }, false) {
        ctx.error_flags = &flags;
        for (const auto& ins : p.main())
            if (!gpu::needs_no_step(ins)) gpu::find_lowering(ins)->lower(ctx, ins);
    }
    program p;
    gpu::library_handles libs{nullptr};
    std::vector<gpu::error_slot> slots;
    gpu::device_error_flags flags;
    gpu::lowering_context ctx;
};

// The run-time checks' host side, for each kernel that checks its data: Gather, GatherElements,
// GatherND, ScatterElements and ScatterND indices, integer Div and Mod divisors in lone ops and in
// a fused region (two checked ops: the slot's value says which failed), signed integer Pow's 0 to
// a negative power (the slot's value is the exponent). Each takes its
// instruction's error slot and compiles for sm_90; no slot set, no error; a recorded failure reads
// as ref's error for that instruction. On the device: gpu_device_test.cpp's
// gather_index_out_of_range_fails_naming_the_node and checking_kernels_fail_naming_the_node.
TEST(gpu_no_device, checking_kernels_compile_and_word_failures_as_ref) {
    struct check_case {
        std::string text;
        gpu::error_slot recorded;
        std::string message;
    };
    const std::uint32_t index = 1, zero = 2, negative_power = 3;
    const std::string div_mod_region =
        "a = @param:a -> int32_type, {4}\nb = @param:b -> int32_type, {4}\n@0 = pointwise(a,b), [pointwise0]\n"
        "@1 = @return(@0)\n\nmodule: \"pointwise0\"\nx0 = @param:x0 -> int32_type, {4}\n"
        "x1 = @param:x1 -> int32_type, {4}\n@0 = div(x0,x1)\n@1 = mod(x0,x1)\n@2 = add(@0,@1)\n@3 = @return(@2)\n";
    const std::vector<check_case> cases = {
        {"x = @param:x -> float_type, {3}\ni = @param:i -> int64_type, {2}\n@0 = gather[axis=0](x,i)\n"
         "@1 = neg(@0)\n@2 = @return(@1)\n",
         {index, 0, -7, 1},
         "module main: @0 = gather[axis=0]: index -7 (indices element 1) is out of range for dim 0 of size 3 (valid: -3 to 2)"},
        {"x = @param:x -> float_type, {3, 4}\ni = @param:i -> int64_type, {3, 2}\n@0 = gather_elements[axis=1](x,i)\n"
         "@1 = @return(@0)\n",
         {index, 0, 9, 3},
         "@0 = gather_elements[axis=1]: index 9 (indices element 3) is out of range for dim 1 of size 4 (valid: -4 to 3)"},
        {"x = @param:x -> float_type, {2, 3, 4}\ni = @param:i -> int32_type, {5, 2}\n@0 = gathernd(x,i)\n@1 = @return(@0)\n",
         {index, 0, -4, 7},
         "@0 = gathernd[batch_dims=0]: index -4 (indices element 7) is out of range for dim 1 of size 3 (valid: -3 to 2)"},
        {"x = @param:x -> half_type, {4}\ni = @param:i -> int64_type, {2}\nu = @param:u -> half_type, {2}\n"
         "@0 = scatter_elements[axis=0,reduction=add](x,i,u)\n@1 = @return(@0)\n",
         {index, 0, -5, 1}, ": index -5 (indices element 1) is out of range for dim 0 of size 4 (valid: -4 to 3)"},
        {"x = @param:x -> float_type, {4, 3}\ni = @param:i -> int64_type, {2, 2}\nu = @param:u -> float_type, {2}\n"
         "@0 = scatternd(x,i,u)\n@1 = @return(@0)\n",
         {index, 0, 3, 3}, ": index 3 (indices element 3) is out of range for dim 1 of size 3 (valid: -3 to 2)"},
        {"a = @param:a -> int32_type, {4}\nb = @param:b -> int32_type, {4}\n@0 = div(a,b)\n@1 = @return(@0)\n",
         {zero, 0, 0, 2}, "@0 = div: div: integer division by zero"},
        {"a = @param:a -> uint8_type, {4}\nb = @param:b -> uint8_type, {1}\n@0 = multibroadcast[out_lens={4}](b)\n"
         "@1 = mod[fmod=1](a,@0)\n@2 = @return(@1)\n",
         {zero, 0, 0, 0}, ": mod: integer modulus by zero"},
        {div_mod_region, {zero, 0, 0, 1}, "@0 = pointwise: div: integer division by zero"},
        {div_mod_region, {zero, 0, 1, 1}, "@0 = pointwise: mod: integer modulus by zero"},
        {"a = @param:a -> int64_type, {4}\nb = @param:b -> int64_type, {4}\n@0 = pow(a,b)\n@1 = @return(@0)\n",
         {negative_power, 0, -2, 3}, "@0 = pow: pow: 0 raised to the negative power -2"},
        {"a = @param:a -> int8_type, {4}\nb = @param:b -> int8_type, {4}\n@0 = pointwise(a,b), [pointwise0]\n"
         "@1 = @return(@0)\n\nmodule: \"pointwise0\"\nx0 = @param:x0 -> int8_type, {4}\n"
         "x1 = @param:x1 -> int8_type, {4}\n@0 = div(x0,x1)\n@1 = pow(x0,x1)\n@2 = add(@0,@1)\n@3 = @return(@2)\n",
         {negative_power, 0, -5, 0}, "@0 = pointwise: pow: 0 raised to the negative power -5"},
    };
    for (const auto& c : cases) {
        lowered_without_device l(c.text);
        ASSERT_EQ(l.flags.used(), 1u) << c.text;
        bool checks = false;
        for (const auto& src : l.ctx.sources) {
            checks = checks || src.code.find("kiln::checked_") != std::string::npos;
            EXPECT_NO_THROW(gpu::compile_to_cubin(src, {"sm_90", true, false, {}})) << src.code;
        }
        EXPECT_TRUE(checks) << c.text;
        EXPECT_NO_THROW(l.flags.check(l.slots.data()));
        l.slots[0] = c.recorded;
        try {
            l.flags.check(l.slots.data());
            ADD_FAILURE() << "no error: " << c.text;
        } catch (const error& e) {
            EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
        }
    }
    // Float division needs no check: no slot.
    lowered_without_device f("a = @param:a -> float_type, {4}\nb = @param:b -> float_type, {4}\n@0 = div(a,b)\n@1 = @return(@0)\n");
    EXPECT_EQ(f.flags.used(), 0u);
}

// A saved program's library plans: what an executable used comes back by problem, bytes exact (a
// plan is raw data, e.g. a cublasLtMatmulAlgo_t); a damaged blob is an error, not a guess.
TEST(gpu_no_device, library_plans_round_trip_through_their_blob) {
    gpu::library_plans made;
    std::string algo("\x00\x01\xff\t\n plan", 10);
    made.use("cublaslt matmul a float_type, {64, 512}", algo, false);
    made.use("convolution (forward) float x 1x8x12x12", std::string("\x02\x00\x00\x00", 4), false);
    EXPECT_EQ(made.queried, 2u);
    std::string blob = made.serialize();
    gpu::library_plans loaded;
    loaded.read_saved(reinterpret_cast<const std::byte*>(blob.data()), blob.size());
    ASSERT_NE(loaded.saved("cublaslt matmul a float_type, {64, 512}"), nullptr);
    EXPECT_EQ(*loaded.saved("cublaslt matmul a float_type, {64, 512}"), algo);
    EXPECT_EQ(loaded.saved("convolution (forward) float x 1x8x12x12")->size(), 4u);
    EXPECT_EQ(loaded.saved("another problem"), nullptr);
    for (std::string bad : {std::string("no tab\n"), blob.substr(0, blob.size() - 1), std::string("p\tzz\n"), std::string("p\tabc\n")}) {
        gpu::library_plans damaged;
        try {
            damaged.read_saved(reinterpret_cast<const std::byte*>(bad.data()), bad.size());
            ADD_FAILURE() << "read: " << bad;
        } catch (const error& e) {
            EXPECT_NE(std::string(e.what()).find("library plans are unreadable"), std::string::npos) << e.what();
        }
    }
}

// Tuple results: split's pieces are views (no step) and topk is one kernel writing both elements
// of its tuple; the program is supported and topk's kernels compile in each order and type.
TEST(gpu_no_device, split_and_topk_tuples_are_supported_and_topk_kernels_compile) {
    for (const char* type : {"float_type", "half_type", "bf16_type", "int64_type"}) {
        for (const char* largest : {"true", "false"}) {
            program p = parse_text(cat("x = @param:x -> ", type, ", {4, 6}\n",
                                       "@0 = split[axis=1,sizes={2, 4}](x)\n",
                                       "@1 = get_tuple_elem[index=1](@0)\n",
                                       "@2 = topk[k=3,axis=0,largest=", largest, ",sorted=true](@1)\n",
                                       "@3 = get_tuple_elem[index=0](@2)\n",
                                       "@4 = get_tuple_elem[index=1](@2)\n",
                                       "@5 = @return(@3, @4)\n"));
            ASSERT_NO_THROW(gpu::check_supported(p.main())) << type;
            gpu::library_handles libs(nullptr);
            static std::byte fake[1];
            gpu::lowering_context ctx(p.main(), libs, [](const instruction&) { return fake; }, false);
            for (const auto& ins : p.main())
                if (computes(ins)) gpu::find_lowering(ins)->lower(ctx, ins);
            ASSERT_EQ(ctx.sources.size(), 1u) << type;   // topk only: split and the tuple elements are views
            EXPECT_NE(ctx.sources[0].code.find("kiln_topk"), std::string::npos);
            EXPECT_NO_THROW(gpu::compile_to_cubin(ctx.sources[0], {"sm_90", true, false, {}})) << ctx.sources[0].code;
        }
    }
}

// Programs the static executable cannot plan run an instruction at a time: control flow (If, Loop,
// Scan) and the data-dependent ops the runner runs (nonzero, compress, range, unique,
// nonmax_suppression, onnx_node) are supported (bodies checked too), and their kernels compile for
// each input type and layout.
TEST(gpu_no_device, control_flow_and_data_dependent_ops_run_on_the_dynamic_path) {
    const std::set<std::string> runner_ops = {"if",     "loop",   "scan", "nonzero", "compress", "range", "unique", "nonmax_suppression",
                                              "onnx_node"};
    std::size_t checked = 0;
    for (const auto& tc : all_cases()) {
        if (!runner_ops.count(tc.op_name())) continue;
        if (tc.name().find("int4") != std::string::npos) continue;   // int4 is not a gpu type yet
        auto p = lowered(tc, compute_precision::fp32);
        if (!p) continue;
        EXPECT_FALSE(gpu::static_module(p->main())) << tc.name();
        EXPECT_NO_THROW(gpu::check_supported(p->main())) << tc.name();
        ++checked;
    }
    EXPECT_GT(checked, 10u);
    using lens = std::vector<std::size_t>;
    for (const shape& x : std::vector<shape>{shape(dtype::float32, lens{3, 4}), shape(dtype::float16, lens{3, 4}, lens{1, 3}),
                                             shape(dtype::bool_, lens{5}), shape(dtype::int64, lens{2, 2, 2}),
                                             shape(dtype::bfloat16, lens{})}) {
        for (const auto& src : {gpu::nonzero_count_kernel(x, "a test"), gpu::nonzero_write_kernel(x, "a test"),
                                gpu::range_kernel(x.type(), "a test")})
            EXPECT_NO_THROW(gpu::compile_to_cubin(src, {"sm_90", true, false, {}})) << src.code;
        for (bool sorted : {true, false})
            for (const auto& src : {gpu::unique_first_kernel(x.type(), 2, 3, 4, "a test"),
                                    gpu::unique_write_kernel(x.type(), 2, 3, 4, sorted, "a test")})
                EXPECT_NO_THROW(gpu::compile_to_cubin(src, {"sm_90", true, false, {}})) << src.code;
    }
    for (const shape& c : std::vector<shape>{shape(dtype::bool_, lens{5}), shape(dtype::bool_, lens{4}, lens{2}),
                                             shape(dtype::bool_, lens{0})}) {
        auto src = gpu::compress_list_kernel(c, "a test");
        EXPECT_NO_THROW(gpu::compile_to_cubin(src, {"sm_90", true, false, {}})) << src.code;
    }
    for (dtype t : {dtype::float32, dtype::float16, dtype::bfloat16, dtype::float64})
        for (std::size_t limits = 0; limits <= 3; ++limits) {
            gpu::nms_geometry g{2, 3, 5, t, t, {}};
            for (std::size_t i = 0; i < limits; ++i) g.limits.push_back(i == 0 ? dtype::int64 : t);
            for (const auto& src : {gpu::nms_select_kernel(g, limits % 2 == 0, "a test"), gpu::nms_write_kernel(g, "a test")})
                EXPECT_NO_THROW(gpu::compile_to_cubin(src, {"sm_90", true, false, {}})) << src.code;
        }
    // shape_of over a data-dependent shape runs on the dynamic path (its lens, no data read).
    program lens_of = parse_text("x = @param:x -> float_type, {4}\n@0 = nonzero(x)\n@1 = shape_of(@0)\n@2 = @return(@1)\n");
    EXPECT_FALSE(gpu::static_module(lens_of.main()));
    EXPECT_NO_THROW(gpu::check_supported(lens_of.main()));
}

}  // namespace
}  // namespace kiln
