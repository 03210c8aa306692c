// tree_ensemble, as ai.onnx.ml TreeEnsemble (opset 5). Declared here for typed access (lowering);
// the body and its rules in tree_ensemble.cpp.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct tree_ensemble {
    static constexpr std::string_view name = "tree_ensemble";
    std::vector<double> splits;
    std::vector<std::int64_t> featureids, modes, truenodeids, falsenodeids, trueleafs, falseleafs;
    std::vector<std::int64_t> missing_tracks_true;  // empty: never
    std::vector<double> members;                    // the sets of the MEMBER nodes, one after another
    std::vector<std::int64_t> member_counts;        // the size of each MEMBER node's set, in node order
    std::vector<std::int64_t> leaf_targetids;
    std::vector<double> leaf_weights;
    std::vector<std::int64_t> tree_roots;
    std::int64_t n_targets = 1;
    std::int64_t aggregate_function = 1;  // 0 average, 1 sum, 2 min, 3 max
    auto attributes() {
        return fields(field("splits", splits), field("featureids", featureids), field("modes", modes),
                      field("truenodeids", truenodeids), field("falsenodeids", falsenodeids),
                      field("trueleafs", trueleafs), field("falseleafs", falseleafs),
                      field("missing_tracks_true", missing_tracks_true), field("members", members),
                      field("member_counts", member_counts), field("leaf_targetids", leaf_targetids),
                      field("leaf_weights", leaf_weights), field("tree_roots", tree_roots),
                      field("n_targets", n_targets), field("aggregate_function", aggregate_function));
    }

    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;

    // The member set of each MEMBER node (empty for the others), checked against member_counts.
    std::vector<std::vector<double>> member_sets() const;
    // What a target no leaf reaches holds, and where aggregation starts: 0 (sum, average), or the
    // largest (min) or lowest (max) finite value of the output type t.
    double initial_value(dtype t) const;
    // Whether node i sends a row whose feature is x down its true branch.
    bool goes_true(std::size_t i, double x, const std::vector<double>& set) const;
};

}  // namespace kiln::ops
