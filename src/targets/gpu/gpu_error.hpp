// Every CUDA, cuBLASLt, cuDNN and NVRTC call of the gpu target is checked; a failure is a
// kiln::error naming the call, its status and where it happened: the instruction it ran for (with
// its ONNX node, from describe()) or what the executable was doing ("uploading literals").
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nvrtc.h>

#include <string>
#include <string_view>

namespace kiln::gpu {

[[noreturn]] void fail_call(std::string_view call, std::string_view status, std::string_view where);

inline void check(cudaError_t e, const char* call, std::string_view where) {
    if (e != cudaSuccess) fail_call(call, std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e), where);
}
inline void check(cublasStatus_t e, const char* call, std::string_view where) {
    if (e != CUBLAS_STATUS_SUCCESS) fail_call(call, cublasLtGetStatusName(e), where);
}
inline void check(cudnnStatus_t e, const char* call, std::string_view where) {
    if (e != CUDNN_STATUS_SUCCESS) fail_call(call, cudnnGetErrorString(e), where);
}
inline void check(nvrtcResult e, const char* call, std::string_view where) {
    if (e != NVRTC_SUCCESS) fail_call(call, nvrtcGetErrorString(e), where);
}

}  // namespace kiln::gpu

// KILN_GPU_CHECK(cudaMemcpyAsync(...), where): the call's text goes into the message.
#define KILN_GPU_CHECK(call, where) ::kiln::gpu::check((call), #call, (where))
