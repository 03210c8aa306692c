// Reads the printed form of a program (see printer.cpp) back. Syntax errors name the line and
// column; semantic errors (unknown op, bad attribute, shape mismatch) name the line too.
#pragma once
#include <string_view>

#include "core/module.hpp"

namespace kiln {

program parse_text(std::string_view text);
// Reads a file; throws naming the file when it cannot be read.
program parse_text_file(const std::string& path);

}  // namespace kiln
