// What the gpu target's rewrite tests share: the run's seed, a program's text, ref's results.
#pragma once
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "core/module.hpp"
#include "core/printer.hpp"
#include "core/random.hpp"
#include "core/target.hpp"
#include "ops_test_util.hpp"

namespace kiln::gpu_test {

using lens_t = std::vector<std::size_t>;
using ints = std::vector<std::int64_t>;

// One per process, KILN_SEED repeats one (ops_test_util.hpp).
inline std::uint64_t seed() { return run_seed(); }

// Adds to module m: fresh random float32 literals (each from the run's seed and its own index)
// and instructions by op name.
struct builder {
    module& m;
    std::size_t k = 0;
    instruction_ref lit(const lens_t& lens) {
        return m.add_literal(literal(random_argument(shape(dtype::float32, lens), seed(), k++)));
    }
    instruction_ref op(const char* name, std::vector<instruction_ref> in, value attrs = value()) {
        return m.add_instruction(make_op(name, attrs), std::move(in));
    }
};

inline std::string printed(const program& p) {
    std::ostringstream os;
    print(os, p, 0);
    return os.str();
}

// `p` on the ref target, its results copied out.
inline std::vector<argument> run_ref(program p, const param_map& in) {
    auto exe = make_target("ref")->compile(std::move(p), compile_options{});
    std::vector<argument> r;
    for (auto& a : exe->run(in)) r.push_back(a.copy());
    return r;
}

}  // namespace kiln::gpu_test
