// The simplification passes on real exported models (opt-in: ref evaluation of a CNN takes a
// while). KILN_MODEL_DIRS lists ONNX backend-test folders (model.onnx, test_data_set_0), separated
// by ':', e.g. the torchvision exports of tests/models (export_torchvision.py, or with PyTorch's
// training=PRESERVE so that BatchNormalization stays). Each model is evaluated on its test input
// before and after the passes; outputs must agree within relative L2 1e-5. Prints instruction
// counts before and after, and how many batch norms were folded.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "core/eval.hpp"
#include "frontends/onnx/onnx.hpp"
#include "pass_check.hpp"
#include "passes/simplify/common_subexpression.hpp"
#include "passes/simplify/fold_batch_norm.hpp"
#include "passes/simplify/propagate_constant.hpp"
#include "passes/simplify/simplify_algebra.hpp"
#include "passes/simplify/simplify_reshapes.hpp"

namespace kiln {
namespace {

void check_model(const std::string& dir) {
    SCOPED_TRACE(dir);
    program before = parse_onnx_file(dir + "/model.onnx");
    program after = before.clone();
    run_passes(after,
               {propagate_constant{}, simplify_reshapes{}, simplify_algebra{}, fold_batch_norm{}, propagate_constant{},
                eliminate_common_subexpression{}},
               {.validate = true, .dump_dir = ""});
    auto data = read_onnx_test_data(dir + "/test_data_set_0");
    auto names = before.main().parameter_names();
    ASSERT_EQ(names.size(), data.inputs.size());
    param_map inputs;
    for (std::size_t i = 0; i < names.size(); ++i) inputs[names[i]] = data.inputs[i];
    auto want = evaluate(before, inputs);
    auto got = evaluate(after, inputs);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_LE(relative_l2(got[i], want[i]), 1e-5) << "output " << i;
    std::cout << dir << ": " << count_instructions(before) << " -> " << count_instructions(after)
              << " instructions; batch norms " << count_ops(before, "batch_norm_inference") << " -> "
              << count_ops(after, "batch_norm_inference") << "; relative L2 " << relative_l2(got[0], want[0])
              << std::endl;
}

TEST(simplify_models, exported_models_keep_their_outputs) {
    const char* dirs = std::getenv("KILN_MODEL_DIRS");
    if (dirs == nullptr || *dirs == '\0') GTEST_SKIP() << "set KILN_MODEL_DIRS to run";
    std::stringstream ss(dirs);
    for (std::string dir; std::getline(ss, dir, ':');)
        if (!dir.empty()) check_model(dir);
}

}  // namespace
}  // namespace kiln
