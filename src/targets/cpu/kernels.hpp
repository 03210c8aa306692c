// What the cpu target's kernels share: the oneDNN engine and the thread count, and the choice of
// a kernel for each instruction (oneDNN primitive, generated pointwise code, or none: reference).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/pass.hpp"
#include "core/target.hpp"
#include "runtime/executor.hpp"

namespace kiln {

struct onednn_state;   // engine and stream (onednn_kernels.cpp)

struct cpu_context {
    explicit cpu_context(std::size_t threads);
    ~cpu_context();
    std::size_t threads;
    std::unique_ptr<onednn_state> dnnl;
};

struct cpu_kernel {
    host_kernel run;     // empty: the instruction runs its reference compute
    std::string where;   // "onednn", "generated code": for the compile report
};

// Builds the instruction's kernel (primitives created and weights reordered now, once).
cpu_kernel make_cpu_kernel(const instruction& ins, cpu_context& ctx);
// oneDNN's kernels for attention, layer norm and softmax (onednn_transformer.cpp).
host_kernel make_onednn_transformer_kernel(const instruction& ins, cpu_context& ctx);
// Lets consecutive oneDNN primitives pass their blocked layouts on (no reorder between them) where
// every user of a result is a primitive reading it in that layout, and the layout fits its buffer.
// Then the arena holds that result in oneDNN's layout: only those primitives read it.
void keep_blocked_layouts(const module& m, cpu_context& ctx);
// oneDNN's part of it: convolution, matmul, pooling and the epilogues its post-ops express.
cpu_kernel make_onednn_kernel(const instruction& ins, cpu_context& ctx);

}  // namespace kiln
