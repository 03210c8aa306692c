#include "targets/gpu/gpu_error.hpp"

#include "core/error.hpp"

namespace kiln::gpu {

void fail_call(std::string_view call, std::string_view status, std::string_view where) {
    std::string_view name = call.substr(0, call.find('('));
    fail("gpu: ", name, " failed (", status, ") ", where.empty() ? "" : "while ", where, "\n  call: ", call);
}

}  // namespace kiln::gpu
