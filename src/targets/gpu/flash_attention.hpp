// Which attention instructions the flash-attention kernel takes (flash_attention.cpp); the others
// go to window_kernels.cpp's kernel.
#pragma once
#include "core/module.hpp"

namespace kiln::gpu {

// float16/bfloat16 q, k, v and result of static shape, head sizes (of q·k and of v) multiples of
// 16 up to 128, at least one query and one key.
bool flash_attention_takes(const instruction& ins);

}  // namespace kiln::gpu
