#include "core/limits.hpp"

#include <unistd.h>

#include <atomic>

#include "core/error.hpp"
#include "core/shape.hpp"

namespace kiln {

namespace {

std::size_t physical_memory() {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return static_cast<std::size_t>(-1);
    return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

std::atomic<std::size_t>& limit() {
    static std::atomic<std::size_t> bytes{physical_memory()};
    return bytes;
}

}  // namespace

std::size_t max_tensor_bytes() { return limit().load(); }

void set_max_tensor_bytes(std::size_t bytes) { limit().store(bytes); }

void check_tensor_bytes(const shape& s) {
    if (s.dynamic()) return;
    std::size_t bytes = s.bytes();
    if (bytes > max_tensor_bytes())
        fail("a tensor of ", to_string(s), " needs ", bytes, " bytes, more than the limit of ", max_tensor_bytes(),
             " bytes (max_tensor_bytes: the machine's memory unless set)");
}

}  // namespace kiln
