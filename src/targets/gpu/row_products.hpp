// Products of rows taken in another order as one GEMM on the gpu target. A dot whose left operand
// is a transpose keeping the last dim (x's rows in another order: torch's batch-second multi-head
// attention feeds its [S, B, E] projection from a [B, S, E] layer norm) reaches cuBLASLt as a
// strided batch of small products, as no single row stride walks the rows: ViT-B/16's q/k/v
// projection at batch 64 ran as 197 products of 64 rows at a third of the tensor cores' rate. The
// order of the rows commutes with the product by one matrix and with pointwise ops whose other
// operands are constant along the rows (a bias), so the pass computes those in x's order, one GEMM
// (and its epilogue), and transposes the result, where every view reading it stays a view.
#pragma once
#include "core/module.hpp"

namespace kiln::gpu {

struct row_products {
    static constexpr std::string_view name = "gpu_row_products";
    void apply(module& m) const;
};

}  // namespace kiln::gpu
