// Fusion on resnet18 and mobilenet_v2 (exported by tests/models/export_torchvision.py; the
// torchvision_models_ref ctest writes them to <build>/torchvision-models, and these tests skip
// without them): the generic pipeline with and without its fusion passes, instructions and
// kernels (kernel_count) printed, and the fused program's outputs against the unoptimised program
// on the exported input (relative L2 within 1e-5). Each runs the ref interpreter twice (~1 min).
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "core/eval.hpp"
#include "core/target.hpp"
#include "frontends/onnx/onnx.hpp"
#include "passes/analysis/kernel_count.hpp"
#include "passes/pipeline.hpp"
#include "../passes/pass_check.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> fusion_passes = {"fuse_epilogues", "fuse_reduce", "fuse_pointwise"};

std::size_t instructions(const module& m) {
    std::size_t n = 0;
    for (const auto& ins : m)
        if (!ins.get_operator().traits().builtin) ++n;
    return n;
}

std::size_t count_op(const module& m, std::string_view name) {
    std::size_t n = 0;
    for (const auto& ins : m) n += ins.name() == name;
    return n;
}

void check_model(const std::string& name) {
    fs::path dir = fs::path(KILN_BINARY).parent_path() / "torchvision-models" / name;
    if (!fs::exists(dir / "model.onnx")) GTEST_SKIP() << dir << " is missing; ctest -R torchvision_models_ref exports it";
    // Parsed three times: copying a program through its text form is slow with weights this size.
    program ref = parse_onnx_file((dir / "model.onnx").string());
    program unfused = parse_onnx_file((dir / "model.onnx").string());
    run_passes(unfused, generic_passes({}), {.disabled = fusion_passes, .dump_dir = ""});
    program fused = parse_onnx_file((dir / "model.onnx").string());
    run_passes(fused, generic_passes({}), {.disabled = fusion_passes, .dump_dir = ""});
    std::vector<pass> fusion;
    for (auto& ps : generic_passes({}))
        if (std::find(fusion_passes.begin(), fusion_passes.end(), ps.name()) != fusion_passes.end()) fusion.push_back(ps);
    ASSERT_EQ(fusion.size(), 3u) << "the generic pipeline lost a fusion pass";
    run_passes(fused, fusion, {.dump_dir = ""});
    const module &u = unfused.main(), &f = fused.main();
    std::cout << name << ": generic pipeline without fusion: " << instructions(u) << " instructions, "
              << kernel_count(u) << " kernels; with fusion: " << instructions(f) << " instructions, "
              << kernel_count(f) << " kernels (" << count_op(f, "fused_epilogue") << " fused_epilogue, "
              << count_op(f, "fused_reduce") << " fused_reduce, " << count_op(f, "pointwise") << " pointwise)\n";
    EXPECT_LT(kernel_count(f), kernel_count(u));

    onnx_test_data data = read_onnx_test_data((dir / "test_data_set_0").string());
    param_map inputs{{ref.main().parameter_names().at(0), data.inputs.at(0)}};
    auto want = evaluate(ref, inputs);
    auto got = evaluate(fused, inputs);
    ASSERT_EQ(got.size(), want.size());
    double err = relative_l2(got[0], want[0]);
    std::cout << name << ": fused vs unoptimised ref, relative L2 " << err << "\n";
    EXPECT_LE(err, 1e-5);
}

TEST(fuse_models, resnet18) { check_model("resnet18_opset17"); }
TEST(fuse_models, mobilenet_v2) { check_model("mobilenet_v2_opset17"); }

}  // namespace
}  // namespace kiln
