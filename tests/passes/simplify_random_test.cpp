// Random small graphs (pointwise chains with constants, view chains, convolutions with biases,
// scales and batch norms), built from a seed: the simplification passes must keep their results,
// and must simplify something over the seeds (a test that can fail both ways).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/reflect.hpp"
#include "pass_check.hpp"
#include "passes/simplify/common_subexpression.hpp"
#include "passes/simplify/fold_batch_norm.hpp"
#include "passes/simplify/propagate_constant.hpp"
#include "passes/simplify/simplify_algebra.hpp"
#include "passes/simplify/simplify_reshapes.hpp"

namespace kiln {
namespace {

using lens_t = std::vector<std::size_t>;

class graph_builder {
public:
    explicit graph_builder(std::uint32_t seed, dtype t = dtype::float32) : rng_(seed), type_(t) {}
    module& m() { return p_.main(); }
    program take() { return std::move(p_); }

    std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
    double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }

    // A literal of these lens: random values (integers: -3..3 without 0), or all one special value.
    instruction_ref constant(const lens_t& lens, bool nonzero = false) {
        static const double specials[] = {0.0, 1.0, 2.0, 0.5, -0.25, 4.0};
        shape s(type_, lens);
        std::vector<double> v(s.elements());
        bool special = pick(3) == 0;
        double sv = specials[pick(6)];
        if (nonzero && sv == 0) sv = 2.0;
        double lo = is_float(type_) ? 0.5 : 1, hi = is_float(type_) ? 1.5 : 3.99;
        for (auto& x : v) x = special ? sv : std::floor(uniform(lo, hi) * 100) / 100 * (pick(2) ? 1 : -1);
        if (!is_float(type_))
            for (auto& x : v) x = std::trunc(x);
        return m().add_literal(literal(s, v));
    }
    dtype type() const { return type_; }
    instruction_ref add(const std::string& op, std::vector<instruction_ref> in, const value& attrs = value()) {
        return m().add_instruction(make_op(op, attrs), std::move(in));
    }
    // A constant whose lens broadcast against `lens` (a scalar, the last dim, a middle dim, or all).
    instruction_ref broadcastable(const lens_t& lens, bool nonzero = false) {
        switch (pick(4)) {
        case 0: return constant({1}, nonzero);
        case 1: return constant({lens.back()}, nonzero);
        case 2: {
            lens_t l(lens.size(), 1);
            l[1] = lens[1];
            return constant(l, nonzero);
        }
        default: return constant(lens, nonzero);
        }
    }

private:
    std::mt19937 rng_;
    dtype type_;
    program p_;
};

// x -> a chain of pointwise ops with constants (identities, powers, negations, converts).
program pointwise_chain(std::uint32_t seed, dtype t) {
    graph_builder g(seed, t);
    bool ints = !is_float(t);
    lens_t lens{2, 3, 4};
    auto y = g.m().add_parameter("x", shape(t, lens));
    for (std::size_t step = 0, n = 3 + g.pick(5); step < n; ++step) {
        switch (g.pick(7)) {
        case 0: y = g.add("add", {y, g.broadcastable(lens)}); break;
        case 1: y = g.add("sub", {y, g.broadcastable(lens)}); break;
        case 2: y = g.add("mul", {g.broadcastable(lens), y}); break;
        case 3: y = ints ? g.add("mul", {y, g.add("neg", {y})}) : g.add("div", {y, g.broadcastable(lens, true)}); break;
        case 4: y = g.add("neg", {g.pick(2) ? g.add("neg", {y}) : y}); break;
        case 5: {
            static const double exps[] = {1.0, 2.0, 0.5};
            double e = exps[g.pick(ints ? 2 : 3)];
            y = g.add("pow", {y, g.m().add_literal(literal(shape(t, lens_t{1}), std::vector<double>{e}))});
            break;
        }
        default: {
            auto wide = g.add("convert", {y}, value{{"target_type", ints ? "int64" : "double"}});
            y = g.add("convert", {wide}, value{{"target_type", std::string(dtype_name(t))}});
        }
        }
    }
    g.m().add_return({y});
    return g.take();
}

// x -> transposes, reshapes, squeezes, pointwise ops and copies.
program view_chain(std::uint32_t seed) {
    graph_builder g(seed);
    auto y = g.m().add_parameter("x", shape(dtype::float32, lens_t{2, 3, 4}));
    for (std::size_t step = 0, n = 3 + g.pick(6); step < n; ++step) {
        const auto& lens = y->get_shape().lens();
        std::vector<std::int64_t> perm(lens.size());
        for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::int64_t>(i);
        std::shuffle(perm.begin(), perm.end(), std::mt19937(seed + static_cast<std::uint32_t>(step)));
        switch (g.pick(6)) {
        case 0: y = g.add("transpose", {y}, value{{"permutation", to_value(perm)}}); break;
        case 1: y = g.add("reshape", {y}, value{{"dims", to_value(std::vector<std::int64_t>{2, -1, 2})}}); break;
        case 2: y = g.add("unsqueeze", {y}, value{{"axes", to_value(std::vector<std::int64_t>{0})}}); break;
        case 3: y = lens.front() == 1 ? g.add("squeeze", {y}, value{{"axes", to_value(std::vector<std::int64_t>{0})}})
                                      : g.add("relu", {y});
                break;
        case 4: y = g.add("contiguous", {y}); break;
        default: y = g.add("mul", {y, g.broadcastable(lens)});
        }
    }
    // Half the graphs return the view itself: program outputs keep their layout.
    g.m().add_return({g.pick(2) ? y : g.add("exp", {y})});
    return g.take();
}

// x -> convolution -> maybe a bias add, a per-channel scale, a batch norm -> relu.
program conv_block(std::uint32_t seed) {
    graph_builder g(seed);
    auto x = g.m().add_parameter("x", shape(dtype::float32, lens_t{1, 3, 5, 5}));
    std::size_t c = 2 + g.pick(3);
    auto w = g.constant({c, 3, 3, 3});
    value attrs{{"padding", to_value(std::vector<std::int64_t>{1, 1})}};
    auto y = g.add("convolution", {x, w}, attrs);
    if (g.pick(2)) y = g.add("add", {y, g.constant({c, 1, 1})});
    if (g.pick(2)) y = g.add("mul", {g.constant(g.pick(2) ? lens_t{c, 1, 1} : lens_t{1}), y});
    if (g.pick(3)) {
        std::vector<double> var(c);
        for (auto& v : var) v = g.uniform(0.2, 2.0);
        auto v = g.m().add_literal(literal(shape(dtype::float32, lens_t{c}), var));
        y = g.add("batch_norm_inference", {y, g.constant({c}), g.constant({c}), g.constant({c}), v},
                  value{{"epsilon", 1e-3}});
    }
    if (g.pick(2)) y = g.add("add", {y, g.constant({c, 1, 1})});
    g.m().add_return({g.add("relu", {y})});
    return g.take();
}

void check_family(const char* family, program (*make)(std::uint32_t), int seeds) {
    std::size_t before_total = 0, after_total = 0;
    for (int s = 1; s <= seeds; ++s) {
        auto seed = static_cast<std::uint32_t>(s);
        SCOPED_TRACE(std::string(family) + " graph seed " + std::to_string(seed));
        program before = make(seed);
        program after = before.clone();
        run_passes(after,
                   {simplify_reshapes{}, simplify_algebra{}, fold_batch_norm{}, propagate_constant{},
                    eliminate_common_subexpression{}},
                   {.validate = true, .dump_dir = ""});
        expect_same_results(before, after, seed);
        before_total += count_instructions(before);
        after_total += count_instructions(after);
    }
    EXPECT_LT(after_total, before_total) << family << ": the passes simplified nothing";
    std::cout << family << ": " << before_total << " -> " << after_total << " instructions over " << seeds
              << " seeds" << std::endl;
}

program float_chain(std::uint32_t seed) { return pointwise_chain(seed, dtype::float32); }
program int_chain(std::uint32_t seed) { return pointwise_chain(seed, dtype::int32); }

TEST(simplify_random, pointwise_chains_keep_their_results) { check_family("pointwise", float_chain, 200); }
TEST(simplify_random, integer_chains_keep_their_results) { check_family("integer", int_chain, 200); }
TEST(simplify_random, view_chains_keep_their_results) { check_family("views", view_chain, 200); }
TEST(simplify_random, conv_blocks_keep_their_results) { check_family("conv", conv_block, 100); }

}  // namespace
}  // namespace kiln
