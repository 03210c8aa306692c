"""Cases for src/ops/tree_ensemble.cpp and src/ops/tfidf.cpp, computed with onnx's reference
TreeEnsemble (ai.onnx.ml opset 5) and TfIdfVectorizer."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx_oracle import run_node

r = rng(43)
cases = []


def tree(name, x, attrs, n_targets, aggregate=1, membership=None, missing=None):
    """attrs: splits, featureids, modes, truenodeids, falsenodeids, trueleafs, falseleafs, leaf_targetids,
    leaf_weights, tree_roots."""
    onnx_attrs = dict(
        nodes_splits=numpy_helper.from_array(np.array(attrs["splits"], x.dtype)),
        nodes_featureids=attrs["featureids"],
        nodes_modes=numpy_helper.from_array(np.array(attrs["modes"], np.uint8)),
        nodes_truenodeids=attrs["truenodeids"], nodes_falsenodeids=attrs["falsenodeids"],
        nodes_trueleafs=attrs["trueleafs"], nodes_falseleafs=attrs["falseleafs"],
        leaf_targetids=attrs["leaf_targetids"],
        leaf_weights=numpy_helper.from_array(np.array(attrs["leaf_weights"], x.dtype)),
        tree_roots=attrs["tree_roots"], n_targets=n_targets, aggregate_function=aggregate)
    if membership is not None:
        onnx_attrs["membership_values"] = numpy_helper.from_array(np.array(membership, x.dtype))
    if missing is not None:
        onnx_attrs["nodes_missing_value_tracks_true"] = missing
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", **onnx_attrs)
    t = helper.np_dtype_to_tensor_dtype(x.dtype)
    g = helper.make_graph([node], "t", [helper.make_tensor_value_info("X", t, x.shape)],
                          [helper.make_tensor_value_info("Y", t, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5)])
    (y,) = ReferenceEvaluator(m).run(None, {"X": x})
    kiln_attrs = dict(attrs, n_targets=n_targets, aggregate_function=aggregate)
    kiln_attrs["splits"] = [float(s) for s in attrs["splits"]]
    kiln_attrs["leaf_weights"] = [float(w) for w in attrs["leaf_weights"]]
    if membership is not None:   # kiln: the values without ONNX's NaN ends, and each set's size
        sets = np.split(np.array(membership, np.float64), np.nonzero(np.isnan(membership))[0] + 1)[:-1]
        kiln_attrs["members"] = [float(v) for st in sets for v in st[:-1]]
        kiln_attrs["member_counts"] = [len(st) - 1 for st in sets]
    if missing is not None:
        kiln_attrs["missing_tracks_true"] = missing
    cases.append(case(name, "tree_ensemble", [tensor(x)], [tensor(np.asarray(y))], kiln_attrs, rtol=1e-6))


# Two trees over 3 features: tree 0 splits on feature 0 then 1; tree 1 is one split on feature 2.
two_trees = dict(splits=[0.2, -0.5, 0.1], featureids=[0, 1, 2], modes=[0, 3, 1], truenodeids=[1, 0, 2],
                 falsenodeids=[1, 1, 3], trueleafs=[0, 1, 1], falseleafs=[1, 1, 1], leaf_targetids=[0, 1, 1, 0],
                 leaf_weights=[1.5, -2.0, 0.25, 3.0], tree_roots=[0, 2])
x = r.standard_normal((7, 3))
for agg, agg_name in [(0, "average"), (1, "sum"), (2, "min"), (3, "max")]:
    tree(f"two_trees_{agg_name}", x, two_trees, n_targets=2, aggregate=agg)
tree("two_trees_f32", x.astype(np.float32), two_trees, n_targets=2)
# Set membership on feature 0 (values 1, 3 or 4 go true) and NaN tracking true on node 1.
member = dict(splits=[0.0, 2.5], featureids=[0, 1], modes=[6, 5], truenodeids=[0, 1], falsenodeids=[1, 2],
              trueleafs=[1, 1], falseleafs=[0, 1], leaf_targetids=[0, 0, 1], leaf_weights=[10.0, 20.0, 30.0],
              tree_roots=[0])
xm = np.array([[1, 0], [3, 2.5], [2, 7], [4, np.nan], [np.nan, np.nan], [0, 1]], np.float64)
tree("membership_and_missing", xm, member, n_targets=2, membership=[1, 3, 4, np.nan], missing=[0, 1])
cases.append(error_case("tree_bad_feature", "tree_ensemble", [shape_only("float64", [2, 2])], "reads feature 2 of 2",
                        dict(two_trees, n_targets=2)))
cases.append(error_case("tree_int_input", "tree_ensemble", [shape_only("int32", [2, 3])], "expected a float type",
                        dict(two_trees, n_targets=2)))


def tfidf(name, x, mode, min_gram, max_gram, max_skip, counts, indexes, pool, weights=None):
    attrs = dict(mode=mode, min_gram_length=min_gram, max_gram_length=max_gram, max_skip_count=max_skip,
                 ngram_counts=counts, ngram_indexes=indexes, pool_int64s=pool)
    if weights is not None:
        attrs["weights"] = weights
    (y,) = run_node("TfIdfVectorizer", [x], opset=9, **attrs)
    kiln = dict(mode=mode, min_gram=min_gram, max_gram=max_gram, max_skip=max_skip, ngram_counts=counts,
                ngram_indexes=indexes, pool=pool, weights=weights or [])
    cases.append(case(name, "tfidf_vectorizer", [tensor(x)], [tensor(y)], kiln))


tokens = r.integers(2, 8, (2, 12)).astype(np.int32)
pool = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3]   # 4 unigrams, then 4 bigrams
tfidf("tf_uni_and_bigrams_skip2", tokens, "TF", 1, 2, 2, [0, 4], list(range(8)), pool)
tfidf("tf_bigrams_only", tokens, "TF", 2, 2, 0, [0, 4], list(range(8)), pool)
tfidf("idf_weights", tokens[0].astype(np.int64), "IDF", 1, 2, 1, [0, 4], [0, 1, 2, 3, 4, 5, 6, 7], pool,
      weights=[0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4])
tfidf("tfidf_shared_columns", tokens, "TFIDF", 1, 2, 3, [0, 4], [0, 1, 2, 0, 3, 4, 3, 5], pool,
      weights=[1, 2, 3, 4, 5, 6])
# String tokens: the same counting over pool_strings (a repeated pool string is one token).
words = np.array(["the", "cat", "sat", "on", "the", "mat", "dog", "sat", "the", "cat", "x", ""], object)
spool = ["the", "cat", "sat", "mat", "the", "cat", "cat", "sat", "on", "the"]   # 4 unigrams, then 3 bigrams
for name, x, mode, mn, mx, skip, w in [("strings_tf_skip1", words, "TF", 1, 2, 1, None),
                                        ("strings_tfidf_2d", words.reshape(2, 6), "TFIDF", 1, 2, 2,
                                         [1, 2, 3, 4, 5, 6, 7])]:
    attrs = dict(mode=mode, min_gram_length=mn, max_gram_length=mx, max_skip_count=skip, ngram_counts=[0, 4],
                 ngram_indexes=list(range(7)), pool_strings=spool)
    if w is not None:
        attrs["weights"] = w
    (y,) = run_node("TfIdfVectorizer", [x], opset=9, **attrs)
    cases.append(case(name, "tfidf_vectorizer", [tensor(x)], [tensor(y)],
                      dict(mode=mode, min_gram=mn, max_gram=mx, max_skip=skip, ngram_counts=[0, 4],
                           ngram_indexes=list(range(7)), pool_strings=spool, weights=w or [])))
cases.append(error_case("tfidf_strings_without_pool", "tfidf_vectorizer", [shape_only("string", [3])],
                        "string tokens need pool_strings", dict(ngram_counts=[0], ngram_indexes=[0], pool=[1])))
cases.append(error_case("tfidf_float_input", "tfidf_vectorizer", [shape_only("float32", [3])], "expected int32, int64 or string",
                        dict(ngram_counts=[0], ngram_indexes=[0], pool=[1])))
cases.append(error_case("tfidf_bad_counts", "tfidf_vectorizer", [shape_only("int64", [3])], "not a whole number of 2-grams",
                        dict(max_gram=2, ngram_counts=[0, 1], ngram_indexes=[0, 1], pool=[1, 2, 3, 4])))
write("ml", cases)
