// Which attention instructions the flash-attention kernel takes (flash_attention.cpp); float32 and
// float64 go to gemm_attention.hpp's GEMMs, the others to window_kernels.cpp's row kernel.
#pragma once
#include <string>

#include "core/module.hpp"

namespace kiln::gpu {

// float16/bfloat16 q, k, v and result of static shape, head sizes (of q·k and of v) multiples of
// 16 up to 128, at least one query and one key.
bool flash_attention_takes(const instruction& ins);
// Why the flash kernel does not take attention `ins` ("float_type (half_type/bf16_type only)"); empty
// when it does.
std::string flash_attention_declines(const instruction& ins);
// The compile report's line: how many attention instructions of `m` run on each kernel and why
// the first few that take the row kernel do; empty without attention.
std::string attention_kernels_note(const module& m);

}  // namespace kiln::gpu
