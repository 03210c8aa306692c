// The inputs `kiln run` feeds a program: seeded random values, or all 0s / all 1s per input.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/module.hpp"

namespace kiln::driver {

// Inputs named by --fill0/--fill1; `all` when the option was given without names.
struct fill_spec {
    bool all = false;
    std::set<std::string> names;
};

struct input_options {
    std::uint64_t seed = 0;
    fill_spec zeros, ones;
    std::map<std::string, std::vector<std::size_t>> dims;   // --input-dim, by input name
};

struct generated_input {
    std::string name;
    argument arg;
    std::string how;   // "uniform in [-1, 1]", "1s", ...
};

// One argument per parameter of `m`, in declaration order. Each random input has its own
// generator seeded from (seed, its index), so filling one input does not change the others.
// Throws naming the input when a name is unknown or a dynamic input has no --input-dim.
std::vector<generated_input> make_inputs(const module& m, const input_options& opts);

}  // namespace kiln::driver
