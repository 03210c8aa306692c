// Checks a memory plan by execution: the executor (runtime/executor.hpp) runs the module with
// every result computed into its planned arena offset, so a plan that lets a live buffer be
// overwritten gives different outputs than evaluate().
#pragma once
#include "core/eval.hpp"
#include "passes/analysis/memory_plan.hpp"
#include "runtime/executor.hpp"

namespace kiln {

// check_memory_plan, then run_with_plan against evaluate (exactly equal) on `inputs`.
void expect_plan_holds(const module& m, const memory_plan& plan, const param_map& inputs);

}  // namespace kiln
