// tfidf_vectorizer, as ONNX TfIdfVectorizer over integer or string tokens. Declared here for typed
// access (lowering); the body and its rules in tfidf.cpp.
#pragma once
#include <string>

#include "ops/common.hpp"

namespace kiln::ops {

struct tfidf_vectorizer {
    static constexpr std::string_view name = "tfidf_vectorizer";
    std::int64_t min_gram = 1;
    std::int64_t max_gram = 1;
    std::int64_t max_skip = 0;
    std::string mode = "TF";
    std::vector<std::int64_t> ngram_counts, ngram_indexes, pool;
    std::vector<float> weights;
    std::vector<std::string> pool_strings;   // the pool when the tokens are strings (pool is then empty)
    auto attributes() {
        return fields(field("min_gram", min_gram), field("max_gram", max_gram), field("max_skip", max_skip),
                      field("mode", mode), field("ngram_counts", ngram_counts), field("ngram_indexes", ngram_indexes),
                      field("pool", pool), field("weights", weights), field("pool_strings", pool_strings));
    }
    op_traits traits() const { return {.strings = true}; }

    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;

    // The output's columns: max(ngram_indexes) + 1.
    std::size_t columns() const;
    // The pool's n-grams in order (checked against ngram_counts), as pool ids.
    std::vector<std::vector<std::int64_t>> grams() const;
    // The pool as integers: `pool`, or each string's first position in pool_strings.
    std::vector<std::int64_t> pool_ids() const;
    // The tokens as integers: a string token is its pool id, -1 (no pool entry) when it has none.
    std::vector<std::int64_t> tokens(const argument& x) const;
};

}  // namespace kiln::ops
