// Checks on a path given as a model or program file, before a loader opens it.
#pragma once
#include <string>

namespace kiln {

// Throws naming the path when it is a directory: reading one fails in ways that say neither
// ("No such device", an empty model). A missing file is left to the loader's own message.
void check_input_file(const std::string& path);

}  // namespace kiln
