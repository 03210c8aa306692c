// Matrix products through cuBLASLt: C[b] = alpha * A[b] B[b] (+ beta * C[b]) for row-major
// operands of any strides whose last two dims are a strided matrix (one stride 1) and whose batch
// dims flatten to one stride (0 when broadcast). float32 computes without TF32 unless allowed;
// float16 and bfloat16 accumulate in float32. The plan (layouts, the heuristic's algorithm) is
// made once at load (or taken from a saved program's library plans); run() only calls cublasLtMatmul.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "core/shape.hpp"

typedef struct cublasLtContext* cublasLtHandle_t;
typedef struct CUstream_st* cudaStream_t;

namespace kiln::gpu {

class library_plans;
class tuning_store;

// --exhaustive-tune: where the candidates are timed (the operands' real device memory, at load).
struct matmul_tuning {
    tuning_store* store;
    const void *a, *b, *c_in;   // c_in: C when it is not the output, else null
    void* c;
    const void* bias;   // the epilogue's, or null
    void* workspace;
    cudaStream_t stream;
};

// What cuBLASLt applies to the product (after adding beta * C) before writing it: a bias per
// output column (of C's type, [N]), then optionally relu or GELU. cuBLASLt's GELU is the tanh
// form (gelu[approximate=tanh]); erf's GELU stays in the generated kernel after the GEMM.
enum class matmul_epilogue { none, bias, bias_relu, relu, gelu, bias_gelu };

struct matmul_problem {
    shape a, b, c;            // [batch..., M, K], [batch..., K, N], [batch..., M, N]; batch dims as C's
    float alpha = 1, beta = 0;
    bool allow_tf32 = false;
    matmul_epilogue epilogue = matmul_epilogue::none;
};

// Whether cuBLASLt can read this operand as it is (else materialise it standard first).
bool matmul_operand_ok(const shape& s);

class matmul_plan {
public:
    // `plans`: where a saved program's algorithm is looked up and the one chosen recorded (null: none).
    // `tune`: time cuBLASLt's first 8 candidates instead of taking its first (a saved program's
    // algorithm is still taken as it is).
    matmul_plan(cublasLtHandle_t h, const matmul_problem& p, std::size_t max_workspace, const std::string& where,
                library_plans* plans = nullptr, const matmul_tuning* tune = nullptr);
    ~matmul_plan();
    matmul_plan(matmul_plan&&) noexcept;
    std::size_t workspace_bytes() const;
    // `bias`: the epilogue's [N] vector (ignored without one); set once, at the first run.
    // `c_in`: C when it is not the output (a residual added with beta = 1); null: C is `c`.
    void run(const void* a, const void* b, void* c, void* workspace, cudaStream_t s, const void* bias = nullptr,
             const void* c_in = nullptr) const;

    struct impl;   // cuBLASLt's descriptors and the chosen algorithm (matmul.cpp)

private:
    std::unique_ptr<impl> impl_;
};

}  // namespace kiln::gpu
