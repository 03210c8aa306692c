#include "pass_check.hpp"

#include <cmath>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/text_parser.hpp"

namespace kiln {

double relative_l2(const argument& a, const argument& b) {
    // Strings: 0 when equal, else infinitely far.
    if (a.get_shape().type() == dtype::string || b.get_shape().type() == dtype::string)
        return a.same_values(b) ? 0.0 : INFINITY;
    auto x = to_doubles(a);
    auto y = to_doubles(b);
    if (x.size() != y.size()) return INFINITY;
    double num = 0, den = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (std::isnan(x[i]) || std::isnan(y[i])) {
            if (std::isnan(x[i]) != std::isnan(y[i])) return INFINITY;
            continue;
        }
        if (std::isinf(x[i]) || std::isinf(y[i])) {
            if (x[i] != y[i]) return INFINITY;
            continue;
        }
        num += (x[i] - y[i]) * (x[i] - y[i]);
        den += y[i] * y[i];
    }
    return num == 0 ? 0 : std::sqrt(num / (den == 0 ? 1 : den));
}

void expect_same_results(const program& before, const program& after, std::uint64_t seed, double tol) {
    auto inputs = random_inputs(before.main(), seed);
    auto want = evaluate(before, inputs);
    auto got = evaluate(after, inputs);
    ASSERT_EQ(got.size(), want.size()) << "seed " << seed;
    for (std::size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(got[i].get_shape().lens(), want[i].get_shape().lens()) << "output " << i << ", seed " << seed;
        ASSERT_EQ(got[i].get_shape().type(), want[i].get_shape().type()) << "output " << i << ", seed " << seed;
        bool exact = !is_float(want[i].get_shape().type());
        double err = relative_l2(got[i], want[i]);
        EXPECT_LE(err, exact ? 0.0 : tol) << "output " << i << " differs after the passes (seed " << seed
                                          << ")\nafter:\n" << to_string(after);
    }
}

program run_and_check(std::string_view text, const std::vector<pass>& pipeline, double tol, int seeds) {
    program before = parse_text(text);
    program after = before.clone();
    run_passes(after, pipeline, {.validate = true, .dump_dir = ""});
    for (int s = 1; s <= seeds; ++s) expect_same_results(before, after, static_cast<std::uint64_t>(s), tol);
    return after;
}

std::size_t count_ops(const program& p, std::string_view op_name) {
    std::size_t n = 0;
    for (const auto& ins : p.main())
        if (ins.name() == op_name) ++n;
    return n;
}

std::size_t count_instructions(const program& p) {
    std::size_t n = 0;
    for (const auto& ins : p.main())
        if (!ins.get_operator().traits().builtin) ++n;
    return n;
}

}  // namespace kiln
