#include "targets/gpu/error_flags.hpp"

#include <cstring>

#include "core/error.hpp"
#include "targets/gpu/gpu_error.hpp"

namespace kiln::gpu {

error_slot* device_error_flags::slot(const instruction& ins, const std::string& where, error_explainer explain) {
    for (std::size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].ins == &ins) return base_ + i;
    if (entries_.size() == capacity_)
        fail("gpu: more instructions check their data than the ", capacity_, " error slots made for them: ", where);
    entries_.push_back({&ins, where, std::move(explain)});
    return base_ + entries_.size() - 1;
}

std::string index_out_of_range(const error_slot& s, std::size_t dim, std::size_t len) {
    auto n = static_cast<std::int64_t>(len);
    return cat("index ", s.value, " (indices element ", s.position, ") is out of range for dim ", dim, " of size ", len,
               " (valid: ", -n, " to ", n - 1, ")");
}

void device_error_flags::clear(cudaStream_t s) const {
    if (bytes()) KILN_GPU_CHECK(cudaMemsetAsync(base_, 0, bytes(), s), "clearing the run-time checks' error slots");
}

void device_error_flags::read(void* host, cudaStream_t s) const {
    if (bytes())
        KILN_GPU_CHECK(cudaMemcpyAsync(host, base_, bytes(), cudaMemcpyDeviceToHost, s),
                       "copying the run-time checks' error slots to the host");
}

void device_error_flags::check(const void* host) const {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        error_slot s;
        std::memcpy(&s, static_cast<const std::byte*>(host) + i * sizeof(error_slot), sizeof s);
        if (s.code != 0) fail(entries_[i].where, ": ", entries_[i].explain(s));
    }
}

}  // namespace kiln::gpu
