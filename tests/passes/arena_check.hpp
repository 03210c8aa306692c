// Checks a memory plan by execution: runs a module with every buffer's result copied into its
// planned arena offset right after it is computed (views recomputed from the arena copies), so
// a plan that lets a live buffer be overwritten gives different outputs than evaluate().
#pragma once
#include "core/eval.hpp"
#include "passes/memory_plan.hpp"

namespace kiln {

std::vector<argument> run_in_arena(const module& m, const memory_plan& plan, const param_map& inputs);

// check_memory_plan, then run_in_arena against evaluate (exactly equal) on `inputs`.
void expect_plan_holds(const module& m, const memory_plan& plan, const param_map& inputs);

}  // namespace kiln
