// Small transformers exported by PyTorch at opset 14 (tests/models/make_bert_like.py: layer norm,
// GELU and attention written out) through the generic pipeline: every layer norm, GELU and
// attention comes back as one op, and the outputs match the unoptimized program. The models are
// made by run_bert_like_test.sh (ctest bert_like_recognize), which passes their folder in
// KILN_BERT_LIKE_DIR; run alone without it, the tests are skipped.
#include <cstdlib>
#include <iostream>
#include <map>

#include <gtest/gtest.h>

#include "../passes/pass_check.hpp"
#include "frontends/onnx/onnx.hpp"
#include "passes/pipeline.hpp"

namespace kiln {
namespace {

// Instructions of `op` in every module, fused regions' bodies included (fusion moves the
// recognised ops into them).
std::size_t count_everywhere(const program& p, std::string_view op) {
    std::size_t n = 0;
    for (const module* m : p.modules())
        for (const auto& ins : *m) n += ins.name() == op;
    return n;
}

// Parses the model, runs the generic pipeline with and without recognize_patterns, prints the
// counts, expects `want` op counts after it and the same outputs as before it.
void check_model(const std::string& file, const std::map<std::string, std::size_t>& want) {
    const char* dir = std::getenv("KILN_BERT_LIKE_DIR");
    if (dir == nullptr) GTEST_SKIP() << "KILN_BERT_LIKE_DIR is not set (ctest bert_like_recognize sets it)";
    program before = parse_onnx_file(std::string(dir) + "/" + file);
    program after = before.clone();
    program unrecognized = before.clone();
    run_passes(after, generic_passes(compile_options{}), {.validate = true, .dump_dir = ""});
    run_passes(unrecognized, generic_passes(compile_options{}),
               {.validate = true, .disabled = {"recognize_patterns"}, .dump_dir = ""});
    std::cout << file << ": " << count_instructions(before) << " instructions parsed, "
              << count_instructions(unrecognized) << " after the generic passes without recognize_patterns, "
              << count_instructions(after) << " with it\n";
    for (const char* op : {"layernorm", "gelu", "attention", "softmax", "reduce_mean", "erf", "tanh", "where", "dot"})
        std::cout << "  " << op << ": " << count_everywhere(unrecognized, op) << " -> " << count_everywhere(after, op)
                  << "\n";
    for (const auto& [op, n] : want) EXPECT_EQ(count_everywhere(after, op), n) << op;
    for (std::uint64_t seed : {1, 2, 3}) expect_same_results(before, after, seed, 1e-5);
}

// 2 post-LN layers: 2 layer norms, 1 erf GELU and 1 masked attention each; q, k, v, output and
// two FFN projections per layer stay matmuls.
TEST(recognize_bert_like, every_pattern_becomes_one_op) {
    check_model("bert_like_opset14.onnx", {{"layernorm", 4}, {"gelu", 2}, {"attention", 2}, {"softmax", 0},
                                           {"reduce_mean", 0}, {"erf", 0}, {"sqrt", 0}, {"pow", 0}, {"dot", 12}});
}

// 2 pre-LN layers and a final layer norm, tanh GELU, causal attention masked by where: the
// where's condition becomes attention's bool mask; a fused qkv and output projection and two FFN
// projections per layer stay matmuls.
TEST(recognize_gpt_like, every_pattern_becomes_one_op) {
    check_model("gpt_like_opset14.onnx", {{"layernorm", 5}, {"gelu", 2}, {"attention", 2}, {"softmax", 0},
                                          {"reduce_mean", 0}, {"tanh", 0}, {"where", 0}, {"dot", 8}});
}

}  // namespace
}  // namespace kiln
