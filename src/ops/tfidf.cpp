// tfidf_vectorizer, as ONNX TfIdfVectorizer over integer tokens: X ([C] or [B, C]) is scanned for
// the n-grams of `pool` (n from min_gram to max_gram); an n-gram's tokens lie `skip` + 1 apart
// for every skip up to max_skip (unigrams are counted once). pool holds the n-grams by size:
// ngram_counts[i] is where the (i+1)-grams start; the k-th n-gram of the pool (all sizes, in
// order) counts into output column ngram_indexes[k]. The float32 output ([out] or [B, out], out =
// max(ngram_indexes) + 1) is the count (TF), weights[column] where the count is not 0 (IDF) or
// weights[column] * count (TFIDF); without weights, 1 stands for each weight. With string tokens
// the pool is pool_strings; the op numbers each distinct string (its first position in the pool)
// and counts as for integers, a token outside the pool matching nothing.
#include <algorithm>
#include <map>

#include "ops/tfidf.hpp"

namespace kiln::ops {

std::vector<std::int64_t> tfidf_vectorizer::pool_ids() const {
    if (pool_strings.empty()) return pool;
    std::vector<std::int64_t> ids;
    for (const auto& s : pool_strings)
        ids.push_back(std::find(pool_strings.begin(), pool_strings.end(), s) - pool_strings.begin());
    return ids;
}

std::vector<std::int64_t> tfidf_vectorizer::tokens(const argument& x) const {
    if (x.get_shape().type() != dtype::string) return to_int64s(x);
    std::map<std::string, std::int64_t> id;
    for (std::size_t i = pool_strings.size(); i-- > 0;) id[pool_strings[i]] = static_cast<std::int64_t>(i);
    std::vector<std::int64_t> out;
    for (const auto& s : to_strings(x)) {
        auto it = id.find(s);
        out.push_back(it == id.end() ? -1 : it->second);
    }
    return out;
}

std::size_t tfidf_vectorizer::columns() const {
    return std::size_t(*std::max_element(ngram_indexes.begin(), ngram_indexes.end())) + 1;
}

shape tfidf_vectorizer::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    check_static(in);
    bool strings = in[0].type() == dtype::string;
    if (in[0].type() != dtype::int32 && in[0].type() != dtype::int64 && !strings)
        fail("input 0 is ", dtype_name(in[0].type()), "; expected int32, int64 or string tokens");
    if (strings != !pool_strings.empty() || (!pool.empty() && !pool_strings.empty()))
        fail("input 0 holds ", dtype_name(in[0].type()), " tokens and the pool has ", pool.size(), " integers and ",
             pool_strings.size(), " strings; string tokens need pool_strings only, integer tokens pool only");
    if (in[0].ndim() < 1 || in[0].ndim() > 2) fail("input 0 has ", in[0].ndim(), " dims; expected [C] or [B, C]");
    if (mode != "TF" && mode != "IDF" && mode != "TFIDF") fail("mode='", mode, "'; expected TF, IDF or TFIDF");
    if (min_gram < 1 || max_gram < min_gram || max_skip < 0)
        fail("min_gram=", min_gram, ", max_gram=", max_gram, ", max_skip=", max_skip,
             "; expected 1 <= min_gram <= max_gram and max_skip >= 0");
    if (ngram_indexes.empty() || ngram_indexes.size() != grams().size())
        fail("ngram_indexes has ", ngram_indexes.size(), " entries for the ", grams().size(), " n-grams of pool");
    for (auto c : ngram_indexes)
        if (c < 0) fail("ngram_indexes holds ", c, "; expected columns >= 0");
    if (!weights.empty() && weights.size() != columns())
        fail("weights has ", weights.size(), " entries; expected one per output column (", columns(), ")");
    if (in[0].ndim() == 1) return {dtype::float32, std::vector<std::size_t>{columns()}};
    return {dtype::float32, {in[0].lens()[0], columns()}};
}

std::vector<std::vector<std::int64_t>> tfidf_vectorizer::grams() const {
    std::vector<std::vector<std::int64_t>> out;
    std::vector<std::int64_t> ids = pool_ids();
    for (std::size_t i = 0; i < ngram_counts.size(); ++i) {
        std::size_t n = i + 1, begin = std::size_t(ngram_counts[i]);
        std::size_t end = i + 1 < ngram_counts.size() ? std::size_t(ngram_counts[i + 1]) : ids.size();
        if (begin > end || end > ids.size() || (end - begin) % n != 0)
            fail("ngram_counts ", i, " gives pool entries [", begin, ", ", end, "), not a whole number of ", n,
                 "-grams in the pool of ", ids.size());
        for (std::size_t k = begin; k < end; k += n)
            out.emplace_back(ids.begin() + std::ptrdiff_t(k), ids.begin() + std::ptrdiff_t(k + n));
    }
    return out;
}

argument tfidf_vectorizer::compute(const shape& out, std::span<const argument> args) const {
    auto x = tokens(args[0]);
    const auto& lens = args[0].get_shape().lens();
    std::size_t rows = lens.size() == 2 ? lens[0] : 1, c = lens.back(), cols = columns();
    std::map<std::vector<std::int64_t>, std::size_t> column_of;
    auto gs = grams();
    for (std::size_t k = 0; k < gs.size(); ++k) column_of.emplace(gs[k], std::size_t(ngram_indexes[k]));
    std::vector<double> y(rows * cols, 0.0);
    std::vector<std::int64_t> gram;
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t d = 1; d <= std::size_t(max_skip) + 1; ++d)
            for (std::size_t start = 0; start < c; ++start)
                for (std::size_t n = std::max<std::size_t>(std::size_t(min_gram), d > 1 ? 2 : 1);
                     n <= std::size_t(max_gram) && start + (n - 1) * d < c; ++n) {
                    gram.clear();
                    for (std::size_t k = 0; k < n; ++k) gram.push_back(x[r * c + start + k * d]);
                    if (auto it = column_of.find(gram); it != column_of.end()) y[r * cols + it->second] += 1;
                }
    for (std::size_t i = 0; i < y.size(); ++i) {
        double w = weights.empty() ? 1.0 : double(weights[i % cols]);
        if (mode == "IDF")
            y[i] = y[i] > 0 ? w : 0;
        else if (mode == "TFIDF")
            y[i] *= w;
    }
    return from_doubles(out, y);
}

KILN_REGISTER_OP(tfidf_vectorizer)

}  // namespace kiln::ops
