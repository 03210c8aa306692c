// tfidf_vectorizer: one thread per output element [row, column] scans the row's windows (every
// skip, start and n-gram size, as ref does, ops/tfidf.cpp), finds each window's first equal
// n-gram in the pool (a table uploaded once) and counts it when that n-gram's column is its own;
// then the mode's weighting. Correct, not fast: every column rescans the row.
#include "core/argument.hpp"
#include "core/error.hpp"
#include "ops/tfidf.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

void lower_tfidf(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::tfidf_vectorizer>();
    const shape& x = ins.inputs()[0]->get_shape();
    const std::size_t cols = op.columns(), c = x.lens().back(), rows = x.ndim() == 2 ? x.lens()[0] : 1;
    const std::int64_t row_stride = x.ndim() == 2 ? std::int64_t(x.strides()[0]) : 0, tok_stride = std::int64_t(x.strides().back());
    // Per n-gram: its size, where its tokens start in the table, its column; then the tokens.
    auto grams = op.grams();
    std::vector<std::int64_t> table;
    std::vector<std::int64_t> tokens;
    for (std::size_t k = 0; k < grams.size(); ++k) {
        table.insert(table.end(), {std::int64_t(grams[k].size()), std::int64_t(tokens.size()), op.ngram_indexes[k]});
        tokens.insert(tokens.end(), grams[k].begin(), grams[k].end());
    }
    const std::size_t tokens_at = table.size();
    table.insert(table.end(), tokens.begin(), tokens.end());
    std::string weight = op.weights.empty() ? "1.0" : "(double)W[col]";
    std::string code = cat(
        "#include \"kiln_elementwise.cuh\"\n",
        "extern \"C\" __global__ void __launch_bounds__(256) kiln_tfidf(float* __restrict__ y, const ", device_type(x.type()),
        "* __restrict__ x, const kiln::i64* __restrict__ G, const float* __restrict__ W) {\n",
        "    for (kiln::index_t i = kiln::global_thread(); i < ", rows * cols, "ull; i += kiln::grid_threads()) {\n",
        "        const kiln::i64 col = (kiln::i64)(i % ", cols, "ull), r = (kiln::i64)(i / ", cols, "ull);\n",
        "        const kiln::i64 base = r * ", row_stride, "ll;\n",
        "        double count = 0;\n",
        "        for (kiln::i64 d = 1; d <= ", op.max_skip + 1, "ll; ++d)\n",
        "            for (kiln::i64 start = 0; start < ", c, "ll; ++start)\n",
        "                for (kiln::i64 n = d > 1 && ", op.min_gram, "ll < 2 ? 2 : ", op.min_gram, "ll; n <= ", op.max_gram,
        "ll && start + (n - 1) * d < ", c, "ll; ++n)\n",
        "                    for (kiln::i64 k = 0; k < ", grams.size(), "ll; ++k) {\n",
        "                        const kiln::i64* g = G + k * 3;\n",
        "                        if (g[0] != n) continue;\n",
        "                        bool same = true;\n",
        "                        for (kiln::i64 t = 0; t < n && same; ++t)\n",
        "                            same = (kiln::i64)x[base + (start + t * d) * ", tok_stride, "ll] == G[", tokens_at, "ll + g[1] + t];\n",
        "                        if (!same) continue;\n",
        "                        if (g[2] == col) count += 1;\n",
        "                        break;\n",
        "                    }\n",
        op.mode == "IDF" ? cat("        const double v = count > 0 ? ", weight, " : 0.0;\n")
        : op.mode == "TFIDF" ? cat("        const double v = count * ", weight, ";\n")
                             : "        const double v = count;\n",
        "        kiln::store(y[i], v);\n    }\n}\n");
    std::byte* g = ctx.upload(literal(shape(dtype::int64, std::vector<std::size_t>{table.size()}), std::span<const std::int64_t>(table)).get_argument(),
                              cat(ctx.where(ins), " (the n-gram pool)"));
    std::vector<double> w(op.weights.begin(), op.weights.end());
    if (w.empty()) w.push_back(0);
    std::byte* wp = ctx.upload(literal(shape(dtype::float32, std::vector<std::size_t>{w.size()}), std::span<const double>(w)).get_argument(),
                               cat(ctx.where(ins), " (the weights)"));
    ctx.add_kernel(ins, {"kiln_tfidf", code, ctx.where(ins)}, elementwise_launch(rows * cols),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0]), g, wp});
}

const gpu_lowering_registrar tfidf_lowering{{
    "tfidf_vectorizer (generated kernel, one thread per output element)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::tfidf_vectorizer>() && ins.get_shape().standard(); },
    lower_tfidf,
}};

}  // namespace
}  // namespace kiln::gpu
