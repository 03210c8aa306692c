// The JSON form of a program, as `kiln read --json` prints it:
//   {"modules": [{"name": "main", "instructions": [
//       {"name": "x", "op": "@param", "attributes": {...}, "inputs": [], "shape": {...}},
//       {"name": "@0", "op": "@literal", "inputs": [], "shape": {...}, "values": [0.5, -1.25]},
//       {"name": "@1", "op": "add", "inputs": ["x", "@0"], "shape": {...}},
//       {"name": "@2", "op": "if", "inputs": ["c", "x"], "modules": ["then_0", "else_0"], ...},
//       {"name": "@3", "op": "@return", "inputs": ["@1"]}]}]}
// Instruction names are the text form's (parameters by name, others @0, @1, ... in order).
#pragma once
#include <string>

#include "core/module.hpp"

namespace kiln::driver {

// One instruction per line, so that large programs stay readable and diffable.
std::string program_to_json(const program& p);
// Reads that form back (kiln --kiln-json); errors name `path` and the instruction.
program program_from_json(const std::string& text, const std::string& path);

}  // namespace kiln::driver
