// The inputs `kiln run` feeds a program: given arrays (.npy files, test data), seeded random
// values, or all 0s / all 1s per input.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/module.hpp"
#include "driver/loader.hpp"

namespace kiln::driver {

// Inputs named by --fill0/--fill1; `all` when the option was given without names.
struct fill_spec {
    bool all = false;
    std::set<std::string> names;
};

// An input's value given by the user: the option that gave it ("--input x=a.npy"), its file.
struct given_input {
    argument arg;
    std::string source;
    std::string file;
};

struct input_options {
    std::uint64_t seed = 0;
    fill_spec zeros, ones;
    std::map<std::string, given_input> given;   // by input name
    // Sizes of dynamic inputs: every input's dims (--input-dim and the given inputs' shapes),
    // and for a text program the symbolic dims (--dim-param, --default-dim; the ONNX frontend
    // applies those itself).
    dim_options dims;
};

struct generated_input {
    std::string name;
    argument arg;
    std::string how;   // "uniform in [-1, 1]", "1s", ...
};

// One argument per parameter of `m`, in declaration order. Each random input has its own
// generator seeded from (seed, its index), so filling one input does not change the others.
// Throws naming the input when a name is unknown, a dynamic input has no size, or a given
// input's type or shape does not fit.
std::vector<generated_input> make_inputs(const module& m, const input_options& opts);

}  // namespace kiln::driver
