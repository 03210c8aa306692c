// How many kernels a target launches for a module: one per instruction that computes. Parameters,
// literals, the return, views (ops whose output aliases an input) and get_tuple_elem launch none;
// a fused instruction is one kernel, whatever its submodule holds.
#pragma once
#include <cstddef>

#include "core/module.hpp"

namespace kiln {

std::size_t kernel_count(const module& m);

}  // namespace kiln
