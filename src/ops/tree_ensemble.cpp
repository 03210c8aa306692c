// tree_ensemble, as ai.onnx.ml TreeEnsemble (opset 5): X (N, F) runs down every tree; each tree
// ends in a leaf (weight, target), and the leaves' weights are aggregated per target: sum,
// average (sum / trees), min or max, into (N, n_targets) of X's type. A node compares feature
// `featureids[i]` of the row with its split by its mode (<=, <, >=, >, ==, !=, or membership in
// its set); NaN features take the true branch where missing_tracks_true says so. Targets no leaf
// reaches keep 0 (sum, average) or the type's largest (min) / lowest (max) value, as ONNX's
// reference does. Only post_transform NONE is taken (the frontend checks).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/tree_ensemble.hpp"

namespace kiln::ops {
namespace {

// The largest finite value of a float type.
double largest(dtype t) {
    switch (t) {
        case dtype::float16:
            return 65504.0;
        case dtype::bfloat16:
            return 3.3895313892515355e38;
        case dtype::float32:
            return std::numeric_limits<float>::max();
        default:
            return std::numeric_limits<double>::max();
    }
}

}  // namespace

shape tree_ensemble::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    check_static(in);
    check_rank(in, 0, 2);
    check_type(in, 0, float_type, "a float type");
    std::size_t nodes = splits.size(), leaves = leaf_weights.size();
    for (const auto* v : {&featureids, &modes, &truenodeids, &falsenodeids, &trueleafs, &falseleafs})
        if (v->size() != nodes) fail("the node attributes must all have ", nodes, " entries (one per split)");
    if (!missing_tracks_true.empty() && missing_tracks_true.size() != nodes)
        fail("missing_tracks_true has ", missing_tracks_true.size(), " entries; expected ", nodes);
    if (leaf_targetids.size() != leaves) fail("leaf_targetids and leaf_weights differ in length");
    if (n_targets < 1 || aggregate_function < 0 || aggregate_function > 3)
        fail("n_targets=", n_targets, ", aggregate_function=", aggregate_function,
             "; expected n_targets >= 1 and aggregate_function 0..3");
    for (std::size_t i = 0; i < nodes; ++i) {
        if (modes[i] < 0 || modes[i] > 6) fail("node ", i, " has mode ", modes[i], "; expected 0..6");
        if (featureids[i] < 0 || std::size_t(featureids[i]) >= in[0].lens()[1])
            fail("node ", i, " reads feature ", featureids[i], " of ", in[0].lens()[1]);
        for (auto [id, leaf] : {std::pair{truenodeids[i], trueleafs[i]}, std::pair{falsenodeids[i], falseleafs[i]}})
            if (id < 0 || std::size_t(id) >= (leaf ? leaves : nodes))
                fail("node ", i, " points to ", leaf ? "leaf " : "node ", id, ", which does not exist");
    }
    for (auto t : leaf_targetids)
        if (t < 0 || t >= n_targets) fail("leaf target ", t, " is outside [0, ", n_targets, ")");
    for (auto r : tree_roots)
        if (r < 0 || std::size_t(r) >= nodes) fail("tree root ", r, " is not a node");
    return {in[0].type(), {in[0].lens()[0], std::size_t(n_targets)}};
}

std::vector<std::vector<double>> tree_ensemble::member_sets() const {
    std::vector<std::vector<double>> sets(splits.size());
    std::size_t set = 0, at = 0;
    for (std::size_t i = 0; i < splits.size(); ++i) {
        if (modes[i] != 6) continue;
        if (set >= member_counts.size() || member_counts[set] < 0 ||
            at + std::size_t(member_counts[set]) > members.size())
            fail("node ", i, " has no member set in members / member_counts");
        auto n = std::size_t(member_counts[set++]);
        sets[i].assign(members.begin() + std::ptrdiff_t(at), members.begin() + std::ptrdiff_t(at + n));
        at += n;
    }
    return sets;
}

double tree_ensemble::initial_value(dtype t) const {
    return aggregate_function == 2 ? largest(t) : aggregate_function == 3 ? -largest(t) : 0.0;
}

bool tree_ensemble::goes_true(std::size_t i, double x, const std::vector<double>& set) const {
    if (std::isnan(x) && !missing_tracks_true.empty() && missing_tracks_true[i]) return true;
    double s = splits[i];
    switch (modes[i]) {
        case 0:
            return x <= s;
        case 1:
            return x < s;
        case 2:
            return x >= s;
        case 3:
            return x > s;
        case 4:
            return x == s;
        case 5:
            return x != s;
        default:
            return std::find(set.begin(), set.end(), x) != set.end();
    }
}

argument tree_ensemble::compute(const shape& out, std::span<const argument> args) const {
    auto x = to_doubles(args[0]);
    std::size_t n = out.lens()[0], f = args[0].get_shape().lens()[1], t = std::size_t(n_targets);
    auto sets = member_sets();
    double init = initial_value(out.type());
    std::vector<double> y(n * t, init);
    for (std::size_t r = 0; r < n; ++r) {
        for (auto root : tree_roots) {
            auto i = std::size_t(root);
            std::size_t leaf = 0;
            // A root whose two branches are the same leaf is a tree of one leaf.
            bool at_leaf = trueleafs[i] && falseleafs[i] && truenodeids[i] == falsenodeids[i];
            if (at_leaf) leaf = std::size_t(truenodeids[i]);
            for (std::size_t steps = 0; !at_leaf; ++steps) {
                if (steps > splits.size()) fail("tree from root ", root, " has a cycle");
                bool right = goes_true(i, x[r * f + std::size_t(featureids[i])], sets[i]);
                at_leaf = right ? trueleafs[i] : falseleafs[i];
                i = std::size_t(right ? truenodeids[i] : falsenodeids[i]);
                if (at_leaf) leaf = i;
            }
            double& acc = y[r * t + std::size_t(leaf_targetids[leaf])];
            double w = leaf_weights[leaf];
            if (aggregate_function == 2)
                acc = std::min(acc, w);
            else if (aggregate_function == 3)
                acc = std::max(acc, w);
            else
                acc += aggregate_function == 0 ? w / double(tree_roots.size()) : w;
        }
    }
    return from_doubles(out, y);
}
KILN_REGISTER_OP(tree_ensemble)

}  // namespace kiln::ops
