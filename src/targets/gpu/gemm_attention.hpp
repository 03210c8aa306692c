// Attention in float32/float64 as two cuBLASLt GEMMs around a softmax kernel (gemm_attention.cpp).
#pragma once
#include <string>

#include "targets/gpu/lowering.hpp"

namespace kiln::gpu {

// float32/float64 q, k, v and result of static shape, as many key heads as query heads, not empty,
// and scores (with the operands' copies) within 2 GiB.
bool gemm_attention_takes(const instruction& ins);
// Why the GEMMs do not take attention `ins`; empty when they do.
std::string gemm_attention_declines(const instruction& ins);
// The kernel between the GEMMs: each query row of the scores scaled, soft-capped, masked and
// normalised in place (a function of its own so that it compiles without a device).
kernel_source attention_softmax_kernel(lowering_context& ctx, const instruction& ins);

}  // namespace kiln::gpu
