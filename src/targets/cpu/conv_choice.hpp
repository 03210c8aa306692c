// The cpu target's choice among the implementations oneDNN lists for a convolution with the
// activation layouts already chosen (onednn_kernels.cpp's convolution_kernel): a fixed preference
// for depthwise convolutions, and for the others a measured one (conv_choice.cpp says why).
#pragma once
#include <functional>
#include <optional>

#include "targets/cpu/onednn_util.hpp"

namespace kiln {

struct cpu_context;

using conv_pd = dnnl::convolution_forward::primitive_desc;
// Makes `pd` again for the output and input descriptors given (the weights' layout left to oneDNN).
using conv_remake = std::function<void(const memory::desc& y, const memory::desc& x)>;

// jit_dw where oneDNN picks brdgmm_dw and jit_dw takes the same layouts.
void prefer_jit_dw(std::optional<conv_pd>& pd, const conv_remake& make);
// The fastest of the optimised implementations for the same layouts, timed now, where 5% ahead of
// oneDNN's pick; only for convolutions of at most 3e7 multiply-adds (`work`), without binary post-ops.
void prefer_measured(std::optional<conv_pd>& pd, const conv_remake& make, double work, bool binaries,
                     cpu_context& ctx);

}  // namespace kiln
