// The library handles an executable owns: cuBLASLt and cuDNN, bound to its stream, and one
// workspace they share (steps run one after another on the stream).
#pragma once
#include <cublasLt.h>
#include <cudnn.h>

#include "targets/gpu/device.hpp"

namespace kiln::gpu {

struct library_handles {
    explicit library_handles(cudaStream_t s);
    ~library_handles();
    library_handles(const library_handles&) = delete;
    library_handles& operator=(const library_handles&) = delete;

    // Created on first use (cuDNN's start-up costs ~100 ms; a program without GEMMs needs neither).
    cublasLtHandle_t blas();
    cudnnHandle_t dnn();
    cudaStream_t stream;
    bool allow_tf32 = false;

    // The shared workspace, grown at load time to the largest a step asked for.
    void reserve_workspace(std::size_t bytes);
    std::byte* workspace() const { return workspace_.data(); }
    std::size_t workspace_bytes() const { return workspace_.bytes(); }

private:
    cublasLtHandle_t blas_ = nullptr;
    cudnnHandle_t dnn_ = nullptr;
    device_buffer workspace_;
};

}  // namespace kiln::gpu
