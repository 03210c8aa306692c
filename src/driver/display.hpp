// How the driver shows programs and tensors to a person.
#pragma once
#include <cstddef>
#include <string>

#include "core/argument.hpp"
#include "core/module.hpp"

namespace kiln::driver {

// The text form with literals of more than `max_values` elements shown as `@literal{ ... }`
// (as MIGraphX's driver does), so that a model's weights do not bury its structure.
std::string brief_program(const program& p, std::size_t max_values = 16);

// "{0.25, -1, 3.5}": the first `limit` elements in row-major order (all when limit is 0),
// floats with 6 significant digits, then ", ..." when some are left out.
std::string format_values(const argument& a, std::size_t limit);

// A parameter's name, by value: module::parameter_name returns a reference into a temporary.
std::string param_name(const instruction& param);

// Writes `text` to `path`, or to stdout when path is empty; throws naming the file on failure.
void write_text(const std::string& text, const std::string& path);

}  // namespace kiln::driver
