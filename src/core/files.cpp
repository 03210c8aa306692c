#include "core/files.hpp"

#include <filesystem>

#include "core/error.hpp"

namespace kiln {

void check_input_file(const std::string& path) {
    std::error_code ec;
    auto st = std::filesystem::status(path, ec);
    if (std::filesystem::is_directory(st)) fail("'", path, "' is a directory, not a model file");
}

}  // namespace kiln
