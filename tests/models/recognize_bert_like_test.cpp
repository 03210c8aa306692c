// A BERT-like encoder exported by PyTorch at opset 14 (tests/models/make_bert_like.py: layer
// norm, GELU and attention written out) through the generic pipeline: every layer norm, GELU and
// attention comes back as one op, and the outputs match the unoptimized program. The model is
// made by run_bert_like_test.sh (ctest bert_like_recognize), which passes its path in
// KILN_BERT_LIKE_ONNX; run alone without it, the test is skipped.
#include <cstdlib>
#include <iostream>

#include <gtest/gtest.h>

#include "../passes/pass_check.hpp"
#include "frontends/onnx/onnx.hpp"
#include "passes/pipeline.hpp"

namespace kiln {
namespace {

TEST(recognize_bert_like, every_pattern_becomes_one_op) {
    const char* path = std::getenv("KILN_BERT_LIKE_ONNX");
    if (path == nullptr) GTEST_SKIP() << "KILN_BERT_LIKE_ONNX is not set (ctest bert_like_recognize sets it)";
    program before = parse_onnx_file(path);
    program after = copy_program(before);
    program unrecognized = copy_program(before);
    run_passes(after, generic_passes(compile_options{}), {.validate = true, .dump_dir = ""});
    run_passes(unrecognized, generic_passes(compile_options{}),
               {.validate = true, .disabled = {"recognize_patterns"}, .dump_dir = ""});
    std::cout << "instructions: " << count_instructions(before) << " parsed, " << count_instructions(unrecognized)
              << " after the generic passes without recognize_patterns, " << count_instructions(after)
              << " with it\n";
    for (const char* op : {"layernorm", "gelu", "attention", "softmax", "reduce_mean", "erf", "dot"})
        std::cout << op << ": " << count_ops(before, op) << " -> " << count_ops(after, op) << "\n";
    // 2 layers: 2 layer norms, 1 GELU and 1 attention each.
    EXPECT_EQ(count_ops(after, "layernorm"), 4u);
    EXPECT_EQ(count_ops(after, "gelu"), 2u);
    EXPECT_EQ(count_ops(after, "attention"), 2u);
    for (const char* op : {"softmax", "reduce_mean", "erf", "sqrt", "pow"}) EXPECT_EQ(count_ops(after, op), 0u) << op;
    // q, k, v, output and two FFN projections per layer stay matmuls; the attention ones are gone.
    EXPECT_EQ(count_ops(after, "dot"), 12u);
    for (std::uint64_t seed : {1, 2, 3}) expect_same_results(before, after, seed, 1e-5);
}

}  // namespace
}  // namespace kiln
