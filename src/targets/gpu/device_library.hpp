// The device library: the .cuh headers of src/targets/gpu/device (and the ops' scalar helpers),
// embedded in the binary by cmake/embed_files.cmake, which generated kernels include.
#pragma once
#include <span>
#include <string_view>

namespace kiln::gpu {

struct embedded_file {
    std::string_view name;   // as kernels #include it ("kiln_tensor.cuh")
    std::string_view text;
};

std::span<const embedded_file> device_library();

}  // namespace kiln::gpu
