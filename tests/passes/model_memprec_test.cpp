// resnet18 and mobilenet_v2 (exported by tests/models/run_model_tests.sh into the build folder)
// through the generic pipeline: in fp16 and bf16 against fp32, and run inside their memory plan.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "arena_check.hpp"
#include "frontends/onnx/onnx.hpp"
#include "pass_check.hpp"
#include "passes/pipeline.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// Where run_model_tests.sh (the torchvision_models_ref ctest) exports the models.
fs::path model_dir(const std::string& name) {
    return fs::path(KILN_BINARY).parent_path() / "torchvision-models" / (name + "_opset17");
}

bool exported(const std::string& name) {
    return fs::exists(model_dir(name).parent_path() / ".exported") && fs::exists(model_dir(name) / "model.onnx");
}

struct model_case {
    program p;
    param_map inputs;
};

model_case load(const std::string& name, compile_options opts) {
    model_case c{parse_onnx_file((model_dir(name) / "model.onnx").string()), {}};
    run_passes(c.p, generic_passes(opts), {.dump_dir = ""});
    auto data = read_onnx_test_data((model_dir(name) / "test_data_set_0").string());
    c.inputs[c.p.main().parameter_names().at(0)] = data.inputs.at(0);
    return c;
}

#define SKIP_UNLESS_EXPORTED(name) \
    if (!exported(name)) GTEST_SKIP() << name << " is not exported: run tests/models/run_model_tests.sh (ctest torchvision_models_ref)"

TEST(model_precision, resnet18_fp16_and_bf16_agree_with_fp32) {
    SKIP_UNLESS_EXPORTED("resnet18");
    model_case fp32 = load("resnet18", {});
    auto want = evaluate(fp32.p, fp32.inputs);
    for (auto [precision, tol] : {std::pair{compute_precision::fp16, 5e-3}, std::pair{compute_precision::bf16, 3e-2}}) {
        model_case low = load("resnet18", {.precision = precision});
        auto got = evaluate(low.p, low.inputs);
        ASSERT_EQ(got[0].get_shape().type(), dtype::float32);
        double err = relative_l2(got[0], want[0]);
        std::cout << "resnet18 " << (precision == compute_precision::fp16 ? "fp16" : "bf16")
                  << " vs fp32: relative L2 " << err << " (" << count_ops(low.p, "convert") << " converts)\n";
        EXPECT_LE(err, tol);
    }
}

TEST(model_memory_plan, resnet18_and_mobilenet_v2_run_in_their_arena) {
    for (std::string name : {"resnet18", "mobilenet_v2"}) {
        SKIP_UNLESS_EXPORTED(name);
        model_case c = load(name, {});
        memory_plan plan = plan_memory(c.p.main());
        std::cout << name << " 1x3x224x224: " << plan.report() << ", " << plan.in_place << " in place, " << plan.offsets.size()
                  << " buffers\n";
        // Fusion leaves one buffer per kernel (about 37% reuse headroom on resnet18, where the first
        // convolution's and the max pool's outputs are live together); the arena must still beat
        // the naive sum by half.
        EXPECT_LT(plan.arena_bytes, plan.intermediate_bytes / 2);
        expect_plan_holds(c.p.main(), plan, c.inputs);
    }
}

// The ref executable (generic passes, fused regions in arenas of their own) gives the
// interpreter's outputs exactly and allocates no host buffer after its first run.
TEST(model_memory_plan, resnet18_ref_executable_allocates_nothing_after_its_first_run) {
    SKIP_UNLESS_EXPORTED("resnet18");
    model_case c = load("resnet18", {.optimize = false});
    auto want = evaluate(c.p, c.inputs);
    auto exe = make_target("ref")->compile(std::move(c.p), {});
    exe->run(c.inputs);
    std::size_t before = host_buffer_allocations();
    auto got = exe->run(c.inputs);
    EXPECT_EQ(host_buffer_allocations() - before, 0u) << "host buffers allocated by the second run";
    std::cout << "resnet18 ref executable: " << exe->stats().memory << "\n";
    ASSERT_EQ(got.size(), want.size());
    EXPECT_LT(relative_l2(got[0], want[0]), 1e-5);
}

}  // namespace
}  // namespace kiln
