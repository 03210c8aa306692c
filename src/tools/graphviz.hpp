// The program as a Graphviz DOT graph (kiln read/compile --graphviz): main's instructions as
// nodes, their inputs as edges, and each fused region (an instruction whose op has the fusion
// trait) as a cluster holding its submodule's instructions.
#pragma once
#include <string>

#include "core/module.hpp"

namespace kiln {

std::string program_to_dot(const program& p);

}  // namespace kiln
