#include "targets/gpu/libraries.hpp"

#include "targets/gpu/gpu_error.hpp"

namespace kiln::gpu {

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
