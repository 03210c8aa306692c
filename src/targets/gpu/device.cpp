#include "targets/gpu/device.hpp"

#include <mutex>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "targets/gpu/gpu_error.hpp"

namespace kiln::gpu {
namespace {

struct device_query {
    std::vector<device_info> devices;
    std::string error;   // why there is no device
};

const device_query& query() {
    static const device_query q = [] {
        device_query r;
        int n = 0;
        if (cudaError_t e = cudaGetDeviceCount(&n); e != cudaSuccess || n == 0) {
            r.error = e != cudaSuccess ? cat("cudaGetDeviceCount: ", cudaGetErrorName(e), ": ", cudaGetErrorString(e))
                                       : std::string("cudaGetDeviceCount found 0 devices");
            cudaGetLastError();
            return r;
        }
        for (int i = 0; i < n; ++i) {
            cudaDeviceProp p{};
            KILN_GPU_CHECK(cudaGetDeviceProperties(&p, i), cat("querying device ", i));
            r.devices.push_back({i, p.name, cat("sm_", p.major, p.minor), p.major, p.minor, p.multiProcessorCount,
                                 p.totalGlobalMem});
        }
        return r;
    }();
    return q;
}

}  // namespace

const device_info& select_device(int ordinal) {
    const auto& q = query();
    if (!q.error.empty()) fail("gpu: no CUDA device: ", q.error, " (the gpu target needs an NVIDIA GPU and its driver)");
    if (ordinal < 0 || ordinal >= static_cast<int>(q.devices.size())) {
        std::string have;
        for (const auto& d : q.devices) have += cat(have.empty() ? "" : ", ", d.ordinal, " (", d.name, ")");
        fail("gpu: --device ", ordinal, ": this machine has ", q.devices.size(), " CUDA device",
             q.devices.size() == 1 ? "" : "s", ": ", have);
    }
    use_device(q.devices[static_cast<std::size_t>(ordinal)]);
    return q.devices[static_cast<std::size_t>(ordinal)];
}

const device_info& current_device() { return select_device(0); }

void use_device(const device_info& d) {
    KILN_GPU_CHECK(cudaSetDevice(d.ordinal), cat("selecting CUDA device ", d.ordinal));
}

std::string check_device_pointer(const void* p, const device_info& d) {
    cudaPointerAttributes a{};
    if (cudaError_t e = cudaPointerGetAttributes(&a, p); e != cudaSuccess) {
        cudaGetLastError();
        return cat("cudaPointerGetAttributes failed (", cudaGetErrorName(e), ")");
    }
    if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
        return a.type == cudaMemoryTypeHost ? "it is pinned host memory, not device memory"
                                            : "it is not CUDA device memory (a host pointer?)";
    if (a.device != d.ordinal) return cat("it is memory of CUDA device ", a.device, ", the program runs on device ", d.ordinal);
    return "";
}

bool device_available() { return query().error.empty(); }

void copy_to_device(void* dst, const void* src, std::size_t bytes, const std::string& what) {
    KILN_GPU_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), what);
    // From pageable memory cudaMemcpy returns once the bytes are staged, before the DMA to `dst`
    // completes, and the executables' streams are non-blocking (not ordered after the legacy
    // stream): wait for the DMA so that kernels launched next on them read the copied bytes.
    KILN_GPU_CHECK(cudaStreamSynchronize(nullptr), what);
}
void copy_to_host(void* dst, const void* src, std::size_t bytes, const std::string& what) {
    KILN_GPU_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), what);
}

device_buffer::device_buffer(std::size_t bytes, const char* what) : bytes_(bytes) {
    if (bytes == 0) return;
    void* p = nullptr;
    KILN_GPU_CHECK(cudaMalloc(&p, bytes), cat("allocating ", bytes, " device bytes for ", what));
    ptr_ = static_cast<std::byte*>(p);
}
device_buffer::~device_buffer() {
    if (ptr_) cudaFree(ptr_);
}
device_buffer& device_buffer::operator=(device_buffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
}

pinned_buffer::pinned_buffer(std::size_t bytes, const char* what) : bytes_(bytes) {
    if (bytes == 0) return;
    void* p = nullptr;
    KILN_GPU_CHECK(cudaMallocHost(&p, bytes), cat("allocating ", bytes, " pinned host bytes for ", what));
    ptr_ = static_cast<std::byte*>(p);
}
pinned_buffer::~pinned_buffer() {
    if (ptr_) cudaFreeHost(ptr_);
}
pinned_buffer& pinned_buffer::operator=(pinned_buffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
}

stream::stream() { KILN_GPU_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "creating the stream"); }
stream::~stream() {
    if (s_) cudaStreamDestroy(s_);
}
void stream::synchronize(const std::string& where) const { KILN_GPU_CHECK(cudaStreamSynchronize(s_), where); }

}  // namespace kiln::gpu
