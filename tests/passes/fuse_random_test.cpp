// Random DAGs of pointwise ops, broadcasts, scalars, reductions, dots and gemms, built from a seed, run
// through fuse_epilogues, fuse_reduce and fuse_pointwise: results agree with the unfused program
// on random inputs, the IR validates after each pass, the fused program round-trips as text, and
// no more kernels launch than before, and no body is left that nothing calls. A failure names its seed.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "fuse_check.hpp"
#include "pass_check.hpp"
#include "passes/fuse/fuse_epilogues.hpp"
#include "passes/fuse/fuse_pointwise.hpp"
#include "passes/fuse/fuse_reduce.hpp"
#include "passes/analysis/kernel_count.hpp"

namespace kiln {
namespace {

class dag_builder {
public:
    explicit dag_builder(std::uint32_t seed) : rng_(seed) {
        os_ << "x0 = @param:x0 -> float_type, {3, 4}\n"
               "x1 = @param:x1 -> float_type, {3, 4}\n"
               "s = @param:s -> float_type, {3, 1}\n"
               "v = @param:v -> float_type, {4}\n"
               "w = @param:w -> float_type, {4, 4}\n";
        values_ = {{"x0", true}, {"x1", true}, {"s", false}};
    }

    std::string build(int steps) {
        for (int i = 0; i < steps; ++i) step();
        std::string ret = last_;
        for (int k = pick(3); k > 0; --k) ret += "," + values_[pick(values_.size())].name;
        os_ << "@" << n_ << " = @return(" << ret << ")\n";
        return os_.str();
    }

private:
    struct val {
        std::string name;
        bool full;   // {3, 4}; else {3, 1}
    };

    std::size_t pick(std::size_t n) { return rng_() % n; }
    const val& any() { return values_[pick(values_.size())]; }
    const val& full() {
        while (true)
            if (const val& v = any(); v.full) return v;
    }
    std::string add(const std::string& text, bool is_full) {
        std::string name = "@" + std::to_string(n_++);
        os_ << name << " = " << text << "\n";
        values_.push_back({name, is_full});
        return last_ = name;
    }

    void step() {
        static const char* unary[] = {"tanh", "sin", "neg", "abs", "relu", "sigmoid"};
        static const char* binary[] = {"add", "mul", "sub", "max"};
        switch (pick(8)) {
        case 0: case 1: {
            const val& a = any();
            add(std::string(unary[pick(6)]) + "(" + a.name + ")", a.full);
            break;
        }
        case 2: case 3: {
            const val a = any(), b = any();   // copies: add() grows values_
            add(std::string(binary[pick(4)]) + "(" + a.name + "," + b.name + ")", a.full || b.full);
            break;
        }
        case 4: {   // a broadcast view of a vector or of a reduced value, then a binary op
            const val a = full();
            std::string src = pick(2) ? "v" : any().name;
            std::string b = add("multibroadcast[out_lens={3, 4}](" + src + ")", true);
            add(std::string(binary[pick(4)]) + "(" + a.name + "," + b + ")", true);
            break;
        }
        case 5: {   // a scalar literal, broadcast implicitly
            const val a = any();
            std::string c = add("@literal{" + std::to_string(0.25 * (1 + pick(6))) + "} -> float_type, {}", false);
            values_.pop_back();   // not a value to build on
            add(std::string(binary[pick(4)]) + "(" + a.name + "," + c + ")", a.full);
            break;
        }
        case 6: {
            std::string op = pick(2) ? "reduce_sum" : "reduce_max";
            add(op + "[axes={1}](" + full().name + ")", false);
            break;
        }
        default: {   // picks in sequence, so that a seed gives one program whatever the compiler
            const val a = full();
            if (pick(2)) {
                add("dot(" + a.name + ",w)", true);
            } else {
                const val c = any();
                add("gemm[alpha=0.5,beta=1.0](" + a.name + ",w," + c.name + ")", true);
            }
        }
        }
    }

    std::mt19937 rng_;
    std::ostringstream os_;
    std::vector<val> values_;
    std::string last_ = "x0";
    int n_ = 0;
};

TEST(fuse_random, random_dags_fuse_and_agree) {
    std::size_t before_total = 0, after_total = 0;
    for (std::uint32_t seed = 1; seed <= 150; ++seed) {
        std::string ir = dag_builder(seed).build(6 + static_cast<int>(seed % 20));
        SCOPED_TRACE("seed " + std::to_string(seed) + ", program:\n" + ir);
        program before = parse_text(ir);
        before.main().remove_dead_code();   // the passes drop dead code too; count only live kernels
        program p = run_and_check(ir, {fuse_epilogues{}, fuse_reduce{}, fuse_pointwise{}}, 1e-6, 1);
        std::size_t k0 = kernel_count(before.main()), k1 = kernel_count(p.main());
        EXPECT_LE(k1, k0);
        before_total += k0;
        after_total += k1;
        expect_text_round_trip(p);
        if (HasFailure()) return;
    }
    std::cout << "150 random DAGs: " << before_total << " kernels before fusion, " << after_total << " after\n";
    EXPECT_LT(after_total * 4, before_total * 3);   // fusion does happen: at least a quarter fewer kernels
}

}  // namespace
}  // namespace kiln
