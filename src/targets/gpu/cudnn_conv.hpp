// cuDNN's legacy convolution API as convolution.cpp (forward) and deconvolution.cpp (backward
// data, a transposed convolution) use it: the descriptors of one NCHW problem, and the choice of
// its algorithm, kept in the executable's library plans so that a saved program asks no heuristic;
// and the fused call y = act(conv(x) + z + bias) that conv_epilogue.cpp uses.
#pragma once
#include <cudnn.h>

#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace kiln::gpu {

struct library_handles;

// The descriptors of y = conv(x, w) (a deconvolution computes x from y). Lens are N, C and 1-3
// spatial dims, all standard, or with `channels_last` (2 spatial dims only) x and y NHWC and the
// filter {M, kH, kW, C/group}; 1-d problems get a spatial dim of 1 in front (cuDNN wants at least
// 4 dims). Padding is symmetric (`pad` per spatial dim): callers pad asymmetric cases themselves.
// float32 computes without TF32 unless allowed; float16/bfloat16 accumulate in float32.
struct dnn_convolution {
    dnn_convolution(dtype t, std::vector<std::size_t> x, std::vector<std::size_t> w, std::vector<std::size_t> y,
                    std::vector<std::size_t> pad, std::vector<std::size_t> stride, std::vector<std::size_t> dilation,
                    std::size_t group, bool allow_tf32, std::string where, bool channels_last = false);
    ~dnn_convolution();
    dnn_convolution(const dnn_convolution&) = delete;
    dnn_convolution& operator=(const dnn_convolution&) = delete;

    // alpha = 1 and beta = 0 in the compute type (double for float64).
    const void* one() const { return f64 ? static_cast<const void*>(&one_d) : &one_f; }
    const void* zero() const { return f64 ? static_cast<const void*>(&zero_d) : &zero_f; }

    // Describes the bias and the activation (relu, else identity) of y = act(conv(x) + z + bias).
    void fuse_epilogue(bool relu);

    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    // Those of cuDNN's fused call (fuse_epilogue): the bias {1, C, 1...} and the activation.
    cudnnTensorDescriptor_t bias = nullptr;
    cudnnActivationDescriptor_t act = nullptr;
    bool relu = false;
    bool f64 = false;
    bool exact_fp32 = false;   // float32 without TF32: only algorithms that keep full fp32 math
    std::string where;         // the instruction and its ONNX node
    std::string problem;       // everything the algorithm choice depends on (library_plans' key)

private:
    std::vector<int> y_lens_;
    cudnnDataType_t type_;
    float one_f = 1, zero_f = 0;
    double one_d = 1, zero_d = 0;
};

// An algorithm and the workspace it needs.
struct dnn_algorithm {
    int algo = 0;
    std::size_t workspace = 0;
};

// The algorithm of the forward convolution / of the backward data: the saved program's when it
// has one cuDNN still takes for this problem, else the first of cuDNN's heuristic ranking that
// succeeds, needs at most 256 MiB of workspace and keeps exact fp32 where asked. Either way it is
// recorded in libs.plans and the shared workspace grows to fit it.
dnn_algorithm choose_forward(library_handles& libs, const dnn_convolution& c);
dnn_algorithm choose_backward_data(library_handles& libs, const dnn_convolution& c);

// The device memory of y = act(conv(x, w) + z + bias) (z null: no residual, alpha2 = 0).
struct dnn_fused_operands {
    const void* x = nullptr;
    const void* w = nullptr;
    const void* z = nullptr;
    const void* bias = nullptr;
    void* y = nullptr;
};

// cudnnConvolutionBiasActivationForward of c (after c.fuse_epilogue) with algorithm a.
cudnnStatus_t run_fused(library_handles& libs, const dnn_convolution& c, dnn_algorithm a, const dnn_fused_operands& p);

// The algorithm of c's fused call, the first of these that cuDNN runs on these operands: with a
// relu the forward algorithm (choose_forward), then the implicit precomputed GEMM, the only one
// cuDNN fuses an identity with. Each candidate is run once (cuDNN refuses a fusion it has no
// engine for only when the call runs). None: the caller runs the convolution and a kernel for
// the rest.
std::optional<dnn_algorithm> choose_fused(library_handles& libs, const dnn_convolution& c, const dnn_fused_operands& p);

}  // namespace kiln::gpu
