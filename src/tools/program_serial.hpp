// A program as a value tree (JSON) without literal payloads: each literal names a payload by
// index, so that a saved program keeps its weights in binary sections of their own.
#pragma once
#include <cstddef>
#include <functional>
#include <vector>

#include "core/module.hpp"
#include "core/value.hpp"

namespace kiln {

// `payloads` receives each literal in the order of its index.
value program_to_value(const program& p, std::vector<const literal*>& payloads);
// `payload(i, s)` returns literal i (of shape s). Throws naming the module and instruction
// when the tree does not describe a valid program.
program program_from_value(const value& v, const std::function<literal(std::size_t, const shape&)>& payload);

}  // namespace kiln
