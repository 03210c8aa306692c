// Matrix products (bodies in gemm.cpp): dot (batched matmul with numpy batch broadcasting) and
// gemm (ONNX Gemm).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/op.hpp"

namespace kiln::ops {

struct dot {
    static constexpr std::string_view name = "dot";
    op_traits traits() const { return {.contraction = true}; }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

// ONNX Gemm: alpha * A' B' + beta * C, A' = trans_a ? A^T : A (likewise B'); the optional C is
// broadcast to the [M, N] result. beta = 0 ignores C entirely (its NaNs included).
struct gemm {
    static constexpr std::string_view name = "gemm";
    op_traits traits() const { return {.contraction = true}; }
    float alpha = 1.0f;
    float beta = 1.0f;
    bool trans_a = false;
    bool trans_b = false;
    auto attributes() {
        return fields(field("alpha", alpha), field("beta", beta), field("trans_a", trans_a), field("trans_b", trans_b));
    }
    shape compute_shape(std::span<const shape> in) const;
    argument compute(const shape& out, std::span<const argument> args) const;
};

}  // namespace kiln::ops
