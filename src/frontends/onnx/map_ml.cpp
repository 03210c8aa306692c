// ai.onnx.ml ops composed from kiln ops: Binarizer (1 where x > threshold, else 0, in x's type)
// and ArrayFeatureExtractor (the last axis gathered at the flattened indices; a 1-D input gives
// one row, as ONNX's reference and ONNX Runtime do). TreeEnsemble and TfIdfVectorizer (an
// ai.onnx op of the same kind) map onto kiln ops of their own; LabelEncoder is in map_string.cpp.
#include <onnx/onnx_pb.h>

#include <cmath>

#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;
using ints = std::vector<std::int64_t>;

instruction_ref scalar(context& ctx, dtype t, double v) {
    return ctx.add_literal(literal(shape(t), std::vector<double>{v}));
}

inputs_t binarizer(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, 1);
    dtype t = in.at(0)->get_shape().type();
    auto above = ctx.add("greater", {in[0], scalar(ctx, t, n.attr_float("threshold", 0.0f))});
    return {ctx.add("where", {above, scalar(ctx, t, 1), scalar(ctx, t, 0)})};
}
KILN_ONNX_OP("ai.onnx.ml", "Binarizer", 1, binarizer)

inputs_t array_feature_extractor(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(2, 2);
    auto idx = ctx.add("reshape", value{{"dims", to_value(ints{-1})}}, {in.at(1)});
    auto y = ctx.add("gather", value{{"axis", -1}}, {in.at(0), idx});
    if (in[0]->get_shape().ndim() == 1) y = ctx.add("unsqueeze", value{{"axes", to_value(ints{0})}}, {y});
    return {y};
}
KILN_ONNX_OP("ai.onnx.ml", "ArrayFeatureExtractor", 1, array_feature_extractor)

// The values of a tensor attribute, or an empty list when the node does not have it.
std::vector<double> tensor_values(const node_info& n, const std::string& name) {
    if (!n.has_attr(name)) return {};
    return to_doubles(n.attr_tensor(name).get_argument());
}

inputs_t tree_ensemble(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, 1);
    if (auto p = n.attr_int("post_transform", 0); p != 0)
        fail("post_transform=", p, " is not supported; kiln's tree_ensemble gives the raw scores (NONE)");
    std::vector<std::int64_t> modes;
    for (double m : tensor_values(n, "nodes_modes")) modes.push_back(static_cast<std::int64_t>(m));
    value a = value_object{};
    a.set("splits", to_value(tensor_values(n, "nodes_splits")));
    a.set("modes", to_value(modes));
    for (auto [kiln_name, onnx_name] : {std::pair{"featureids", "nodes_featureids"},
                                        {"truenodeids", "nodes_truenodeids"},
                                        {"falsenodeids", "nodes_falsenodeids"},
                                        {"trueleafs", "nodes_trueleafs"},
                                        {"falseleafs", "nodes_falseleafs"},
                                        {"missing_tracks_true", "nodes_missing_value_tracks_true"},
                                        {"leaf_targetids", "leaf_targetids"},
                                        {"tree_roots", "tree_roots"}})
        a.set(kiln_name, to_value(n.attr_ints(onnx_name)));
    // ONNX ends each MEMBER node's set with a NaN; kiln keeps the values and each set's size.
    std::vector<double> members;
    std::vector<std::int64_t> counts;
    std::int64_t in_set = 0;
    for (double v : tensor_values(n, "membership_values")) {
        if (std::isnan(v)) {
            counts.push_back(in_set);
            in_set = 0;
        } else {
            members.push_back(v);
            ++in_set;
        }
    }
    a.set("members", to_value(members));
    a.set("member_counts", to_value(counts));
    a.set("leaf_weights", to_value(tensor_values(n, "leaf_weights")));
    a.set("n_targets", n.attr_int("n_targets", 1));
    a.set("aggregate_function", n.attr_int("aggregate_function", 1));
    return {ctx.add("tree_ensemble", a, {in[0]})};
}
KILN_ONNX_OP("ai.onnx.ml", "TreeEnsemble", 5, tree_ensemble)

// TfIdfVectorizer (ai.onnx) over integer tokens (pool_int64s) or string tokens (pool_strings).
inputs_t tfidf_vectorizer(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, 1);
    value a = value_object{};
    if (n.has_attr("pool_strings")) a.set("pool_strings", to_value(n.attr_strings("pool_strings")));
    a.set("min_gram", n.attr_int("min_gram_length", 1));
    a.set("max_gram", n.attr_int("max_gram_length", 1));
    a.set("max_skip", n.attr_int("max_skip_count", 0));
    a.set("mode", n.attr_string("mode", "TF"));
    a.set("ngram_counts", to_value(n.attr_ints("ngram_counts")));
    a.set("ngram_indexes", to_value(n.attr_ints("ngram_indexes")));
    if (n.has_attr("pool_int64s")) a.set("pool", to_value(n.attr_ints("pool_int64s")));
    a.set("weights", to_value(n.attr_floats("weights")));
    return {ctx.add("tfidf_vectorizer", a, {in.at(0)})};
}
KILN_ONNX_OP("", "TfIdfVectorizer", 9, tfidf_vectorizer)

}  // namespace
}  // namespace kiln::onnx_fe
