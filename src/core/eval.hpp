// The interpreter: evaluates a module with every op's reference compute. The ref target runs
// programs with it, and constant folding evaluates constant subgraphs with it.
#pragma once
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/module.hpp"

namespace kiln {

using param_map = std::map<std::string, argument, std::less<>>;

// Runs `m` on named inputs and returns its outputs. A missing or mis-shaped input is an error
// naming the parameter; dynamic dims are bound from the inputs' actual lens.
std::vector<argument> evaluate(const module& m, const param_map& inputs);
// Same with inputs in parameter declaration order (how submodules are called).
std::vector<argument> evaluate(const module& m, std::span<const argument> inputs);
std::vector<argument> evaluate(const program& p, const param_map& inputs);

// Called after each instruction of the evaluated module (parameters and literals included, its
// submodules' instructions not) with its result and the time its compute took: perf times
// instructions with it, verify looks at intermediate values.
using instruction_observer = std::function<void(const instruction& ins, const argument& result, double ms)>;
std::vector<argument> evaluate(const program& p, const param_map& inputs, const instruction_observer& observe);

// Evaluates one op on concrete arguments (as the interpreter does for each instruction).
argument compute_op(const operation& op, std::span<const argument> args, std::span<module* const> mods = {});
// Same with the output shape known, submodules run by `run`, and the result made in the planned
// buffers `into` (none: freshly allocated; see result_buffer_scope). Packed 4-bit values are
// computed 8 bits wide and packed into `into` afterwards.
argument compute_op(const operation& op, const shape& out, std::span<const argument> args,
                    std::span<module* const> mods, const module_runner& run, std::span<const planned_buffer> into);

// The inputs in parameter declaration order; a missing or unknown name is an error naming it.
std::vector<argument> order_inputs(const module& m, const param_map& inputs);
// Checks an input against its parameter (dtype, lens; binds dynamic dims) and returns it; an error
// names the parameter.
argument bind_input(const module& m, const instruction& param, const argument& a);

// Describes an instruction for error messages: "@4 = dot (node 'MatMul_3')".
std::string describe(const module& m, const instruction& ins);

}  // namespace kiln
