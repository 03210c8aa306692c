// The whole generic pipeline preserves results on random small graphs: pointwise chains with
// constants, broadcasts, reductions, softmax, transposes and reshapes, convolutions followed by
// batch norm, and matmuls. Each graph comes from a seed (printed on failure), so a failing
// graph is rebuilt by running the test with that seed.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/reflect.hpp"
#include "core/target.hpp"
#include "pass_check.hpp"
#include "passes/pipeline.hpp"

namespace kiln {
namespace {

class graph_builder {
public:
    explicit graph_builder(std::uint64_t seed) : gen_(seed) {}

    program build() {
        program p;
        module& m = p.main();
        pool_.push_back(m.add_parameter("x", shape(dtype::float32, {2, 4, 3, 3})));
        pool_.push_back(m.add_parameter("y", shape(dtype::float32, {2, 4, 3, 3})));
        int steps = 6 + static_cast<int>(gen_() % 14);
        for (int i = 0; i < steps; ++i) step(m);
        std::vector<instruction_ref> outs{pool_.back()};
        if (gen_() % 2) outs.push_back(pool_[gen_() % pool_.size()]);
        m.add_return(outs);
        return p;
    }

private:
    std::size_t pick(std::size_t n) { return static_cast<std::size_t>(gen_() % n); }
    double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(gen_() >> 11) * 0x1.0p-53; }

    instruction_ref constant(module& m, std::vector<std::size_t> lens, double lo = -1, double hi = 1) {
        shape s(dtype::float32, std::move(lens));
        std::vector<double> v(s.elements());
        for (auto& x : v) x = uniform(lo, hi);
        return m.add_literal(literal(s, v));
    }

    instruction_ref add(module& m, std::string_view op, std::vector<instruction_ref> in, const value& attrs = value()) {
        auto ins = m.add_instruction(make_op(op, attrs), std::move(in));
        pool_.push_back(ins);
        return ins;
    }

    // Another value with the same lens as `a`, or a constant of that shape.
    instruction_ref partner(module& m, instruction_ref a) {
        std::vector<instruction_ref> same;
        for (auto v : pool_)
            if (v != a && v->get_shape().lens() == a->get_shape().lens()) same.push_back(v);
        if (!same.empty() && gen_() % 3) return same[pick(same.size())];
        auto lens = a->get_shape().lens();
        switch (pick(3)) {
        case 0: return constant(m, {1});
        case 1: lens.assign(lens.size(), 1); lens[lens.size() > 1 ? 1 : 0] = a->get_shape().lens()[lens.size() > 1 ? 1 : 0]; return constant(m, lens);
        default: return constant(m, lens);
        }
    }

    void step(module& m) {
        auto a = pool_[pool_.size() - 1 - pick(std::min<std::size_t>(pool_.size(), 3))];
        const auto& lens = a->get_shape().lens();
        std::size_t rank = lens.size();
        static const char* unary[] = {"relu", "neg", "sigmoid", "tanh", "abs", "exp"};
        static const char* binary[] = {"add", "mul", "sub", "max"};
        switch (pick(9)) {
        case 0: add(m, unary[pick(std::size(unary))], {a}); break;
        case 1:
        case 2: {
            auto b = partner(m, a);
            add(m, binary[pick(std::size(binary))], gen_() % 2 ? std::vector{a, b} : std::vector{b, a});
            break;
        }
        case 3: {   // x - mean(x) over a random axis: a reduction and a broadcast
            value axes = value_array{value(static_cast<std::int64_t>(pick(rank)))};
            auto r = add(m, gen_() % 2 ? "reduce_mean" : "reduce_sum", {a}, value_object{{"axes", axes}});
            add(m, "sub", {a, r});
            break;
        }
        case 4: add(m, "softmax", {a}, value_object{{"axis", value(static_cast<std::int64_t>(pick(rank)))}}); break;
        case 5: {   // a transpose, and sometimes its inverse
            std::vector<std::int64_t> perm(rank);
            for (std::size_t i = 0; i < rank; ++i) perm[i] = static_cast<std::int64_t>(i);
            std::shuffle(perm.begin(), perm.end(), gen_);
            auto t = add(m, "transpose", {a}, value_object{{"permutation", to_value(perm)}});
            if (gen_() % 2) {
                std::vector<std::int64_t> inv(rank);
                for (std::size_t i = 0; i < rank; ++i) inv[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
                add(m, "transpose", {t}, value_object{{"permutation", to_value(inv)}});
            }
            break;
        }
        case 6: {   // flatten the trailing dims, and sometimes back
            if (rank < 2) break;
            std::vector<std::int64_t> flat{static_cast<std::int64_t>(lens[0]), -1};
            auto r = add(m, "reshape", {a}, value_object{{"dims", to_value(flat)}});
            if (gen_() % 2) {
                std::vector<std::int64_t> back(lens.begin(), lens.end());
                add(m, "reshape", {r}, value_object{{"dims", to_value(back)}});
            }
            break;
        }
        case 7: {   // convolution with constant weights, then often a batch norm
            if (rank != 4 || lens[1] != 4) break;
            bool k3 = gen_() % 2;
            auto w = constant(m, {4, 4, k3 ? 3u : 1u, k3 ? 3u : 1u}, -0.5, 0.5);
            std::vector<std::int64_t> pad(4, k3 ? 1 : 0);
            auto c = add(m, "convolution", {a, w}, value_object{{"padding", to_value(pad)}});
            if (gen_() % 3) {
                auto scale = constant(m, {4}, 0.5, 1.5), bias = constant(m, {4});
                auto mean = constant(m, {4}), var = constant(m, {4}, 0.1, 2.0);
                add(m, "batch_norm_inference", {c, scale, bias, mean, var});
            }
            break;
        }
        default: {   // a matmul over the last dim with a constant weight
            auto w = constant(m, {lens.back(), lens.back()}, -0.5, 0.5);
            add(m, "dot", {a, w});
            break;
        }
        }
    }

    std::mt19937_64 gen_;
    std::vector<instruction_ref> pool_;
};

TEST(pipeline, random_graphs_keep_their_results) {
    compile_options opts;
    std::set<std::string, std::less<>> seen;
    for (std::uint64_t seed = 1; seed <= 150; ++seed) {
        SCOPED_TRACE("graph seed " + std::to_string(seed));
        program before = graph_builder(seed).build();
        for (const auto& ins : before.main()) seen.emplace(ins.name());
        ASSERT_NO_THROW(before.validate()) << to_string(before);
        program after = before.clone();
        try {
            run_passes(after, generic_passes(opts), {.validate = true, .dump_dir = ""});
        } catch (const error& e) {
            FAIL() << e.what() << "\nbefore:\n" << to_string(before);
        }
        expect_same_results(before, after, seed, 1e-5);
        if (HasFailure()) {
            ADD_FAILURE() << "before:\n" << to_string(before);
            return;
        }
    }
    // The generator really makes every kind of graph it promises.
    for (const char* op : {"convolution", "batch_norm_inference", "dot", "softmax", "transpose", "reshape",
                           "reduce_mean", "sub", "exp"})
        EXPECT_TRUE(seen.count(op)) << op << " never generated";
}

// The same graphs compiled for the cpu target (its pipeline, oneDNN kernels, generated code, the
// memory plan with in-place reuse) against ref evaluating the graph as built.
TEST(pipeline, random_graphs_on_cpu_match_ref) {
    auto cpu = make_target("cpu");
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        SCOPED_TRACE("graph seed " + std::to_string(seed));
        program before = graph_builder(seed).build();
        auto inputs = random_inputs(before.main(), seed);
        auto want = evaluate(before, inputs);
        auto exe = cpu->compile(before.clone());
        auto got = exe->run(inputs);
        ASSERT_EQ(got.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i) {
            ASSERT_EQ(got[i].get_shape().lens(), want[i].get_shape().lens()) << "output " << i;
            EXPECT_LE(relative_l2(got[i], want[i]), 1e-5) << "output " << i << "\n" << to_string(before);
        }
        if (HasFailure()) return;
    }
}

}  // namespace
}  // namespace kiln
