// Patch convolutions as one GEMM on the gpu target. A convolution whose kernel equals its stride
// (no padding, no dilation, one group: ViT's patch embedding, the stems and downsampling layers of
// Swin and ConvNeXt) reads every input element once, so it is a matrix product of the patches,
// laid out as rows, and the filters: cuDNN ran ViT-B/16's 16x16 stride-16 stem over 64 images in
// 0.48 ms plus 0.19 ms of its own layout copies, where the product is 15 GFLOP (tens of µs on
// cuBLASLt). The pass rewrites such a convolution in the IR as a copy of the patches (a reshape
// of a transposed view), a dot with the filters' transposed view, and views back to the
// convolution's lens: the result lies patch-major (channels last), and the views of its users
// follow that layout, so ViT's flatten and transpose to [N, patches, channels] copy nothing.
#pragma once
#include "core/module.hpp"

namespace kiln::gpu {

// Whether convolution `ins` is a patch convolution the pass rewrites: static float16, bfloat16,
// float32 or float64 input and filter, kernel equal to stride in every spatial dim with more than one element in the kernel (a
// 1x1 stride-1 convolution stays on cuDNN), padding 0, dilation 1, group 1.
bool is_patch_convolution(const instruction& ins);

struct patch_convolutions {
    static constexpr std::string_view name = "gpu_patch_convolutions";
    void apply(module& m) const;
};

}  // namespace kiln::gpu
