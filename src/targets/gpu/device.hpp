// The CUDA device and the memory an executable owns on it: device buffers (cudaMalloc), pinned
// host buffers (cudaMallocHost) for staging, and a stream. All of them free themselves.
#pragma once
#include <cstddef>
#include <string>

typedef struct CUstream_st* cudaStream_t;

namespace kiln::gpu {

struct device_info {
    int ordinal = 0;
    std::string name;       // "NVIDIA H100 80GB HBM3"
    std::string arch;       // "sm_90"
    int major = 0, minor = 0;
    int multiprocessors = 0;
    std::size_t memory_bytes = 0;
};

// Device 0, queried once, made the calling thread's device. Throws a clear error when there is
// none ("gpu: no CUDA device: ...") so that making the gpu target fails where no GPU is.
const device_info& current_device();
// The device with this ordinal (--device N), made the calling thread's device; an ordinal the
// machine lacks is an error naming the devices it has.
const device_info& select_device(int ordinal);
// Makes `d` the calling thread's device again (CUDA's current device is per thread).
void use_device(const device_info& d);
// Whether `p` points into memory of device `d` (device or managed memory); otherwise why not.
std::string check_device_pointer(const void* p, const device_info& d);
// Whether a device is present, without throwing (tests skip on false).
bool device_available();

// Synchronous copies, checked (tests and load-time uploads).
void copy_to_device(void* dst, const void* src, std::size_t bytes, const std::string& what);
void copy_to_host(void* dst, const void* src, std::size_t bytes, const std::string& what);

class device_buffer {
public:
    device_buffer() = default;
    device_buffer(std::size_t bytes, const char* what);
    ~device_buffer();
    device_buffer(device_buffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; o.bytes_ = 0; }
    device_buffer& operator=(device_buffer&& o) noexcept;
    std::byte* data() const { return ptr_; }
    std::size_t bytes() const { return bytes_; }

private:
    std::byte* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

class pinned_buffer {
public:
    pinned_buffer() = default;
    pinned_buffer(std::size_t bytes, const char* what);
    ~pinned_buffer();
    pinned_buffer(pinned_buffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; o.bytes_ = 0; }
    pinned_buffer& operator=(pinned_buffer&& o) noexcept;
    std::byte* data() const { return ptr_; }
    std::size_t bytes() const { return bytes_; }

private:
    std::byte* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

class stream {
public:
    stream();
    ~stream();
    stream(const stream&) = delete;
    stream& operator=(const stream&) = delete;
    cudaStream_t get() const { return s_; }
    void synchronize(const std::string& where) const;

private:
    cudaStream_t s_ = nullptr;
};

}  // namespace kiln::gpu
