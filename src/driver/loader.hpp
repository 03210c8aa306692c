// Loading the program a command works on (its FILE argument).
#pragma once
#include <vector>

#include "core/module.hpp"
#include "driver/args.hpp"

namespace kiln::driver {

// The options every loading command takes (file formats).
std::vector<option_spec> loader_options();
// Reads the command's FILE; throws naming the file (and line and column for syntax errors).
program load_program(const parsed_args& args);

}  // namespace kiln::driver
