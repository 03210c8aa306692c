// verify: a target's results against ref's (the interpreter, no passes) on the same inputs; with
// the whole program, each instruction alone (-i), or searching for the first instruction whose
// value diverges (--bisect) and cutting the program down to it (--reduce).
#pragma once
#include <string>
#include <vector>

#include "core/target.hpp"
#include "tools/compare.hpp"

namespace kiln {

struct verify_options {
    compile_options options;            // how the target compiles (ref never runs passes)
    tolerance_overrides tolerances;     // over the defaults by dtype and precision
};

struct checked_value {
    std::string label;                  // "#output_0", or an instruction line
    comparison cmp;
};

struct verify_result {
    bool pass = true;
    std::vector<checked_value> outputs;
};

// Compiles a copy of `p` for `t` and runs it and ref on `inputs` (extra inputs are ignored).
verify_result verify_program(const program& p, const target& t, const param_map& inputs, const verify_options& o);

// Each computing instruction of main alone, on ref's values of its inputs.
verify_result verify_instructions(const program& p, const target& t, const param_map& inputs,
                                  const verify_options& o);

struct bisect_result {
    bool found = false;                 // false: every output passes
    std::size_t position = 0;           // in p's main
    std::string instruction;            // its line in the printed form
    std::string node;                   // the frontend's name for it (an ONNX node), if any
    std::vector<std::string> inputs;    // "@2: float_type, {2, 3}, {3, 1}" for each input
    std::string kernel;                 // the compiled instruction that produced it (a fused
                                        // kernel's line when the target fused it)
    comparison cmp;
    std::size_t checks = 0;             // prefix programs compiled and compared
};

// The first instruction (in main) whose value diverges while every input's value matches:
// a binary search over prefix programs (each returns one instruction's value) finds a diverging
// one, then a walk back through diverging inputs finds where divergence starts.
bisect_result bisect_program(const program& p, const target& t, const param_map& inputs, const verify_options& o);

// The program cut at the bisected instruction, without what it does not need: a smaller
// program that still fails.
program reduce_program(const program& p, const bisect_result& b);

}  // namespace kiln
