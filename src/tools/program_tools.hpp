// Cutting programs down, for verify's bisect and reduce, -i and the driver's --trim; and
// naming instructions as the printed form does.
#pragma once
#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/module.hpp"

namespace kiln {

// A copy whose main returns the value of main's instruction at `position` (counting every
// instruction from 0), with what that value does not need removed: later instructions and
// unused parameters.
program program_prefix(const program& p, std::size_t position);
// The instruction at `position` alone: a program whose parameters in0, in1, ... are its
// distinct non-literal inputs (literals stay literals), each with the position in p's main of
// the instruction whose value it takes.
struct isolated_instruction {
    program prog;
    std::vector<std::pair<std::string, std::size_t>> inputs;
};
isolated_instruction isolate_instruction(const program& p, std::size_t position);

// The printed names of a module's instructions: parameters by name, others @0, @1, ...
std::unordered_map<const instruction*, std::string> instruction_names(const module& m);
// One line of the printed form: "@3 = add(x,@2) -> float_type, {2, 3}, {3, 1}" (a literal's
// values as "{ ... }").
std::string instruction_line(const module& m, const instruction& ins,
                             const std::unordered_map<const instruction*, std::string>& names);
// Whether it is a computing instruction (not a parameter, literal or return).
bool is_computing(const instruction& ins);

}  // namespace kiln
