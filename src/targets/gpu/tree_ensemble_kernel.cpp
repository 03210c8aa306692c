// tree_ensemble: one thread per row walks every tree from its root to a leaf and aggregates the
// leaves' weights per target in double (a row of scratch memory), as ref does
// (ops/tree_ensemble.cpp); the trees are tables uploaded once. A walk longer than the node count
// (a cycle) is a run-time error naming the tree's root, as ref's is.
#include "core/argument.hpp"
#include "core/error.hpp"
#include "ops/tree_ensemble.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

constexpr std::size_t node_fields = 9;   // feature, mode, true id, false id, true leaf, false leaf, missing true, set begin, set end

void lower_tree_ensemble(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::tree_ensemble>();
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& y = ins.get_shape();
    const std::size_t nodes = op.splits.size(), leaves = op.leaf_weights.size(), rows = y.lens()[0];
    const std::size_t targets = std::size_t(op.n_targets), roots = op.tree_roots.size();
    auto sets = op.member_sets();
    std::vector<std::int64_t> ints;
    std::vector<double> reals(op.splits.begin(), op.splits.end());
    reals.insert(reals.end(), op.leaf_weights.begin(), op.leaf_weights.end());
    for (std::size_t i = 0; i < nodes; ++i) {
        auto begin = std::int64_t(reals.size());
        reals.insert(reals.end(), sets[i].begin(), sets[i].end());
        ints.insert(ints.end(), {op.featureids[i], op.modes[i], op.truenodeids[i], op.falsenodeids[i], op.trueleafs[i],
                                 op.falseleafs[i], op.missing_tracks_true.empty() ? 0 : op.missing_tracks_true[i], begin,
                                 std::int64_t(reals.size())});
    }
    ints.insert(ints.end(), op.leaf_targetids.begin(), op.leaf_targetids.end());
    ints.insert(ints.end(), op.tree_roots.begin(), op.tree_roots.end());
    if (reals.empty()) reals.push_back(0);
    const std::size_t targets_at = node_fields * nodes, roots_at = targets_at + leaves, weights_at = nodes;
    const std::string agg = std::to_string(op.aggregate_function);
    std::string code = cat(
        "#include \"kiln_elementwise.cuh\"\n#include \"kiln_error.cuh\"\n",
        "extern \"C\" __global__ void __launch_bounds__(256) kiln_tree_ensemble(", device_type(y.type()), "* __restrict__ y, const ",
        device_type(x.type()), "* __restrict__ x, const kiln::i64* __restrict__ I, const double* __restrict__ D, ",
        "double* __restrict__ scratch, kiln::error_slot* err) {\n",
        "    for (kiln::index_t r = kiln::global_thread(); r < ", rows, "ull; r += kiln::grid_threads()) {\n",
        "        double* acc = scratch + r * ", targets, "ull;\n",
        "        for (kiln::index_t t = 0; t < ", targets, "ull; ++t) acc[t] = ", double_literal(op.initial_value(y.type())), ";\n",
        "        for (kiln::index_t k = 0; k < ", roots, "ull; ++k) {\n",
        "            const kiln::i64 root = I[", roots_at, "ull + k];\n",
        "            kiln::i64 i = root, leaf = 0;\n",
        "            const kiln::i64* nd = I + i * ", node_fields, ";\n",
        // A root whose two branches are the same leaf is a tree of one leaf.
        "            bool at_leaf = nd[4] && nd[5] && nd[2] == nd[3];\n",
        "            if (at_leaf) leaf = nd[2];\n",
        "            bool cycle = false;\n",
        "            for (kiln::index_t steps = 0; !at_leaf; ++steps) {\n",
        "                if (steps > ", nodes, "ull) { kiln::raise(err, kiln::error_index_out_of_range, root, r); cycle = true; break; }\n",
        "                nd = I + i * ", node_fields, ";\n",
        "                const double v = (double)kiln::load(x[(kiln::i64)r * ", x.strides()[0], "ll + nd[0] * ", x.strides()[1], "ll]);\n",
        "                const double s = D[i];\n",
        "                bool right;\n",
        "                if (v != v && nd[6]) right = true;\n",
        "                else switch (nd[1]) {\n",
        "                    case 0: right = v <= s; break;\n",
        "                    case 1: right = v < s; break;\n",
        "                    case 2: right = v >= s; break;\n",
        "                    case 3: right = v > s; break;\n",
        "                    case 4: right = v == s; break;\n",
        "                    case 5: right = v != s; break;\n",
        "                    default: right = false; for (kiln::i64 m = nd[7]; m < nd[8]; ++m) right = right || D[m] == v;\n",
        "                }\n",
        "                at_leaf = right ? nd[4] : nd[5];\n",
        "                i = right ? nd[2] : nd[3];\n",
        "                if (at_leaf) leaf = i;\n",
        "            }\n",
        "            if (cycle) continue;\n",
        "            double& a = acc[I[", targets_at, "ull + leaf]];\n",
        "            const double w = D[", weights_at, "ull + leaf];\n",
        agg == "2"   ? "            a = w < a ? w : a;\n"
        : agg == "3" ? "            a = a < w ? w : a;\n"
        : agg == "0" ? cat("            a += w / ", roots, ".0;\n")
                     : "            a += w;\n",
        "        }\n",
        "        for (kiln::index_t t = 0; t < ", targets, "ull; ++t) kiln::store(y[r * ", targets, "ull + t], acc[t]);\n",
        "    }\n}\n");
    auto upload = [&](const literal& l, const char* what) { return ctx.upload(l.get_argument(), cat(ctx.where(ins), " (", what, ")")); };
    std::byte* ip = upload(literal(shape(dtype::int64, std::vector<std::size_t>{ints.size()}), std::span<const std::int64_t>(ints)), "tree tables");
    std::byte* dp = upload(literal(shape(dtype::float64, std::vector<std::size_t>{reals.size()}), std::span<const double>(reals)), "tree values");
    std::byte* scratch = ctx.scratch(std::max<std::size_t>(1, rows * targets) * sizeof(double), "tree_ensemble's sums");
    void* err = ctx.error_slot(ins, [](const error_slot& s) { return cat("tree from root ", s.value, " has a cycle"); });
    ctx.add_kernel(ins, {"kiln_tree_ensemble", code, ctx.where(ins)}, elementwise_launch(rows),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0]), ip, dp, scratch, err});
}

const gpu_lowering_registrar tree_ensemble_lowering{{
    "tree_ensemble (generated kernel, one thread per row)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::tree_ensemble>() && ins.get_shape().standard(); },
    lower_tree_ensemble,
}};

}  // namespace
}  // namespace kiln::gpu
