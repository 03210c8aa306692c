#include "targets/gpu/libraries.hpp"

#include "targets/gpu/gpu_error.hpp"

namespace kiln::gpu {

library_handles::library_handles(cudaStream_t s) : stream(s) {
    KILN_GPU_CHECK(cublasLtCreate(&blas), "creating the cuBLASLt handle");
}

library_handles::~library_handles() {
    if (dnn_) cudnnDestroy(dnn_);
    if (blas) cublasLtDestroy(blas);
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
