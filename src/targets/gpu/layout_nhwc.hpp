// Channels-last (NHWC) layouts for the gpu target. cuDNN's tensor-core convolutions on Hopper run
// fastest with NHWC activations and filters in float16/bfloat16, so those convolutions compute in
// NHWC, and the values between them stay NHWC: an NHWC tensor is the IR's NCHW-logical tensor with
// permuted strides, which generated kernels read and write as any strided tensor. Only the
// layout of buffers in the arena changes, decided when main is lowered (choose_layouts); weights
// are transposed in the IR by the pass `gpu_nhwc_weights`, so a saved program holds them so.
#pragma once
#include <unordered_map>

#include "core/module.hpp"
#include "core/pass.hpp"

namespace kiln::gpu {

// s ({N, C, H, W}) with channels-last strides: {H*W*C, 1, W*C, C}.
shape channels_last(const shape& s);
bool is_channels_last(const shape& s);
// Whether a and b address the same elements at the same offsets (the strides of dims of length 1
// do not matter: {N, C, 1, 1} is the same memory NCHW and NHWC).
bool same_layout(const shape& a, const shape& b);

// Whether a convolution of input x runs in NHWC: 2 spatial dims, float16 or bfloat16 (float32
// stays NCHW: without TF32 cuDNN has no tensor-core kernels to gain). A model's first convolution
// over 3 colour channels too: NCHW, cuDNN transposed its input and result itself and the max
// pooling after it read NCHW, 0.64 ms of resnet50's 2.71 at batch 64 (docs/gpu.md).
// KILN_GPU_NHWC=0 (a debugging variable, docs/gpu.md) keeps every convolution NCHW, to measure
// what NHWC saves.
bool channels_last_convolution(const shape& x, std::int64_t group);
// The convolution a main instruction computes: itself or a fused epilogue's anchor; else null.
const instruction* convolution_of(const instruction& ins);
// Whether the convolution `ins` computes (convolution_of) runs in NHWC (above).
bool nhwc_convolution(const instruction& ins);

// The buffers of main that hold their value channels-last, with that layout (every other
// instruction's buffer has its IR shape's layout). NHWC: the convolutions above whose users all
// read any strides, and pointwise regions and poolings whose users all do and that read an NHWC
// value or feed an NHWC convolution (so the transpose at the edge is done by a kernel that runs
// anyway). Never a value main returns or a view reads.
std::unordered_map<const instruction*, shape> choose_layouts(const module& main);

// The pass that gives each NHWC convolution's literal filter channels-last strides: a new
// literal {M, kH, kW, C/group} viewed through a transpose as {M, C/group, kH, kW}.
struct nhwc_weights {
    static constexpr std::string_view name = "gpu_nhwc_weights";
    void apply(module& m) const;
};

}  // namespace kiln::gpu
