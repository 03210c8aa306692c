#include "targets/gpu/libraries.hpp"

#include <string_view>

#include "core/error.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/tuning_store.hpp"

namespace kiln::gpu {

const std::string* library_plans::saved(const std::string& problem) const {
    auto it = saved_.find(problem);
    return it == saved_.end() ? nullptr : &it->second;
}

void library_plans::use(const std::string& problem, std::string plan, bool taken_from_saved) {
    ++(taken_from_saved ? from_saved : queried);
    used_.insert_or_assign(problem, std::move(plan));
}

// One line per plan: the problem, a tab, the plan's bytes in hex. Problems are printable text.
std::string library_plans::serialize() const {
    static const char* hex = "0123456789abcdef";
    std::string r;
    for (const auto& [problem, plan] : used_) {
        r += problem + '\t';
        for (unsigned char c : plan) r += {hex[c >> 4], hex[c & 15]};
        r += '\n';
    }
    return r;
}

void library_plans::read_saved(const std::byte* data, std::size_t bytes) {
    std::string_view text(reinterpret_cast<const char*>(data), bytes);
    auto nibble = [](char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        fail("gpu: the saved program's library plans are unreadable (save the program again)");
    };
    while (!text.empty()) {
        std::size_t tab = text.find('\t'), end = text.find('\n');
        if (tab == std::string_view::npos || end == std::string_view::npos || tab > end || (end - tab - 1) % 2)
            fail("gpu: the saved program's library plans are unreadable (save the program again)");
        std::string plan;
        for (std::size_t i = tab + 1; i < end; i += 2) plan += static_cast<char>(nibble(text[i]) * 16 + nibble(text[i + 1]));
        saved_.insert_or_assign(std::string(text.substr(0, tab)), std::move(plan));
        text.remove_prefix(end + 1);
    }
}

library_handles::library_handles(cudaStream_t s) : stream(s) {}

cublasLtHandle_t library_handles::blas() {
    if (!blas_) KILN_GPU_CHECK(cublasLtCreate(&blas_), "creating the cuBLASLt handle");
    return blas_;
}

library_handles::~library_handles() {
    if (dnn_) cudnnDestroy(dnn_);
    if (blas_) cublasLtDestroy(blas_);
}

cudnnHandle_t library_handles::dnn() {
    if (!dnn_) {
        KILN_GPU_CHECK(cudnnCreate(&dnn_), "creating the cuDNN handle");
        KILN_GPU_CHECK(cudnnSetStream(dnn_, stream), "binding cuDNN to the stream");
    }
    return dnn_;
}

void library_handles::reserve_workspace(std::size_t bytes) {
    if (bytes > workspace_.bytes()) workspace_ = device_buffer(bytes, "the cuBLASLt/cuDNN workspace");
}

}  // namespace kiln::gpu
