#include "targets/gpu/matmul.hpp"

#include <cublasLt.h>

#include <cstring>
#include <optional>

#include "core/error.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/libraries.hpp"
#include "targets/gpu/tuning_store.hpp"

namespace kiln::gpu {
namespace {

// The batch stride of an operand's dims before the last two: one stride for all of them (0 when
// broadcast), or -1 when they do not flatten.
long long batch_stride(const shape& s) {
    const auto& l = s.lens();
    const auto& st = s.strides();
    std::size_t nb = l.size() - 2;
    long long stride = -1;
    std::size_t expect = 0;
    for (std::size_t d = nb; d-- > 0;) {
        if (l[d] == 1) continue;
        if (stride < 0) {
            stride = static_cast<long long>(st[d]);
            expect = st[d] * l[d];
        } else if (stride == 0 ? st[d] != 0 : st[d] != expect) {
            return -1;
        } else {
            expect = st[d] * l[d];
        }
    }
    return stride < 0 ? 0 : stride;
}

// A row-major-ish matrix [rows, cols] with strides (sr, sc) as cuBLAS's column-major operand that
// gives its transpose: {stored rows, stored cols, ld, op}.
struct cm_operand {
    std::uint64_t rows, cols;
    long long ld;
    cublasOperation_t op;
};
std::optional<cm_operand> transposed_view(std::size_t rows, std::size_t cols, std::size_t sr, std::size_t sc) {
    if (sc == 1 || cols == 1) return cm_operand{cols, rows, static_cast<long long>(std::max<std::size_t>(rows == 1 ? cols : sr, cols)), CUBLAS_OP_N};
    if (sr == 1 || rows == 1) return cm_operand{rows, cols, static_cast<long long>(std::max<std::size_t>(cols == 1 ? rows : sc, rows)), CUBLAS_OP_T};
    return std::nullopt;
}

cudaDataType_t cuda_type(dtype t, const std::string& where) {
    switch (t) {
        case dtype::float32: return CUDA_R_32F;
        case dtype::float16: return CUDA_R_16F;
        case dtype::bfloat16: return CUDA_R_16BF;
        case dtype::float64: return CUDA_R_64F;
        default: fail("gpu: cuBLASLt matmul does not take ", dtype_name(t), " (", where, ")");
    }
}

// The row stride of A [batch..., M, K] read as one matrix [batch * M, K] (its rows evenly spaced
// across the batch, each row contiguous), or none.
std::optional<std::size_t> folded_rows(const shape& a, std::size_t batch, std::size_t M, std::size_t K) {
    std::size_t n = a.lens().size();
    long long sb = batch_stride(a);
    if (batch < 2 || sb <= 0 || (a.strides()[n - 1] != 1 && K != 1)) return std::nullopt;
    std::size_t rows = M == 1 ? static_cast<std::size_t>(sb) : a.strides()[n - 2];
    if (rows < K || static_cast<std::size_t>(sb) != M * rows) return std::nullopt;
    return rows;
}

}  // namespace

bool matmul_operand_ok(const shape& s) {
    if (s.lens().size() < 2 || batch_stride(s) < 0) return false;
    std::size_t n = s.lens().size();
    return transposed_view(s.lens()[n - 2], s.lens()[n - 1], s.strides()[n - 2], s.strides()[n - 1]).has_value();
}

struct matmul_plan::impl {
    cublasLtHandle_t h;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
    cublasLtMatmulAlgo_t algo{};
    std::size_t workspace = 0;
    float alpha_f, beta_f;
    double alpha_d, beta_d;
    bool f64 = false;
    const void* bias = nullptr;
    std::string where;
    ~impl() {
        if (la) cublasLtMatrixLayoutDestroy(la);
        if (lb) cublasLtMatrixLayoutDestroy(lb);
        if (lc) cublasLtMatrixLayoutDestroy(lc);
        if (desc) cublasLtMatmulDescDestroy(desc);
    }
};

namespace {

void set_bias(matmul_plan::impl& I, const void* bias) {
    KILN_GPU_CHECK(cublasLtMatmulDescSetAttribute(I.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
                   cat("setting the bias of the matmul of ", I.where));
    I.bias = bias;
}

// The fastest of cuBLASLt's candidates on the real operands (or the tuning store's earlier choice).
void tune_algorithm(matmul_plan::impl& I, const std::string& problem,
                    const std::vector<cublasLtMatmulHeuristicResult_t>& results, const matmul_tuning& t) {
    if (t.bias) set_bias(I, t.bias);
    std::vector<std::string> candidates;
    for (const auto& r : results) candidates.emplace_back(reinterpret_cast<const char*>(&r.algo), sizeof(r.algo));
    auto workspace_of = [&](const std::string& plan) {
        for (const auto& r : results)
            if (std::memcmp(&r.algo, plan.data(), sizeof(r.algo)) == 0) return r.workspaceSize;
        return std::size_t{0};
    };
    auto run = [&](const std::string& plan, cudaStream_t s) {
        cublasLtMatmulAlgo_t algo;
        std::memcpy(&algo, plan.data(), sizeof(algo));
        const void* alpha = I.f64 ? static_cast<const void*>(&I.alpha_d) : &I.alpha_f;
        const void* beta = I.f64 ? static_cast<const void*>(&I.beta_d) : &I.beta_f;
        KILN_GPU_CHECK(cublasLtMatmul(I.h, I.desc, alpha, t.b, I.la, t.a, I.lb, beta, t.c_in ? t.c_in : t.c, I.lc, t.c, I.lc, &algo,
                                      t.workspace, workspace_of(plan), s),
                       cat("timing a candidate for the matmul of ", I.where));
    };
    std::string plan = t.store->choose(cat("cublasLt ", cublasLtGetVersion()), problem, candidates, run, t.stream, I.where).plan;
    cublasLtMatmulHeuristicResult_t check{};
    // A stored choice another problem's heuristic list may not hold: checked as a saved plan is.
    std::memcpy(&I.algo, plan.data(), std::min(plan.size(), sizeof(I.algo)));
    if (plan.size() != sizeof(I.algo) ||
        cublasLtMatmulAlgoCheck(I.h, I.desc, I.la, I.lb, I.lc, I.lc, &I.algo, &check) != CUBLAS_STATUS_SUCCESS)
        fail("gpu: --exhaustive-tune: the tuning store's choice for the matmul of ", I.where,
             " is not one this cuBLASLt takes (remove the cache's tuning folder)");
    I.workspace = check.workspaceSize;
}

}  // namespace

matmul_plan::matmul_plan(cublasLtHandle_t h, const matmul_problem& p, std::size_t max_workspace, const std::string& where,
                         library_plans* plans, const matmul_tuning* tune)
    : impl_(std::make_unique<impl>()) {
    auto& I = *impl_;
    I.h = h;
    I.where = where;
    const std::string ctx = cat("planning the matmul of ", where);
    if (!matmul_operand_ok(p.a) || !matmul_operand_ok(p.b) || !p.c.standard())
        fail("gpu: matmul operands in a layout cuBLASLt cannot read (", where, ")");
    std::size_t n = p.c.lens().size();
    std::size_t M = p.c.lens()[n - 2], N = p.c.lens()[n - 1], K = p.a.lens()[n - 1];
    std::size_t batch = p.c.elements() / std::max<std::size_t>(1, M * N);
    shape a_mat = p.a;
    if (auto rows = folded_rows(p.a, batch, M, K); rows && batch_stride(p.b) == 0) {
        // One weight for every batch item (a linear layer over [batch, seq, hidden]): one GEMM of
        // batch * M rows. cuBLASLt picks its tiles for the problem it is given, and a strided batch
        // of 64 products of 128 rows runs at a fraction of the rate of one product of 8192 rows.
        M *= batch;
        batch = 1;
        a_mat = shape(p.a.type(), {M, K}, {*rows, 1});
    }
    cudaDataType_t t = cuda_type(p.c.type(), where);
    I.f64 = t == CUDA_R_64F;
    cublasComputeType_t compute = I.f64 ? CUBLAS_COMPUTE_64F
                                  : (t == CUDA_R_32F && p.allow_tf32) ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                       : CUBLAS_COMPUTE_32F;
    cudaDataType_t scale = I.f64 ? CUDA_R_64F : CUDA_R_32F;
    I.alpha_f = p.alpha, I.beta_f = p.beta, I.alpha_d = p.alpha, I.beta_d = p.beta;
    // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS's first operand is B.
    auto b = *transposed_view(K, N, p.b.strides()[n - 2], p.b.strides()[n - 1]);
    std::size_t na = a_mat.lens().size();
    auto a = *transposed_view(M, K, a_mat.strides()[na - 2], a_mat.strides()[na - 1]);
    KILN_GPU_CHECK(cublasLtMatmulDescCreate(&I.desc, compute, scale), ctx);
    KILN_GPU_CHECK(cublasLtMatmulDescSetAttribute(I.desc, CUBLASLT_MATMUL_DESC_TRANSA, &b.op, sizeof(b.op)), ctx);
    KILN_GPU_CHECK(cublasLtMatmulDescSetAttribute(I.desc, CUBLASLT_MATMUL_DESC_TRANSB, &a.op, sizeof(a.op)), ctx);
    KILN_GPU_CHECK(cublasLtMatrixLayoutCreate(&I.la, t, b.rows, b.cols, b.ld), ctx);
    KILN_GPU_CHECK(cublasLtMatrixLayoutCreate(&I.lb, t, a.rows, a.cols, a.ld), ctx);
    KILN_GPU_CHECK(cublasLtMatrixLayoutCreate(&I.lc, t, N, M, static_cast<long long>(N)), ctx);
    if (batch > 1) {
        std::int32_t count = static_cast<std::int32_t>(batch);
        long long sb = batch_stride(p.b), sa = batch_stride(p.a), sc = static_cast<long long>(M * N);
        for (auto [l, s] : {std::pair{I.la, sb}, std::pair{I.lb, sa}, std::pair{I.lc, sc}}) {
            KILN_GPU_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)), ctx);
            KILN_GPU_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &s, sizeof(s)), ctx);
        }
    }
    if (p.epilogue != matmul_epilogue::none) {
        cublasLtEpilogue_t e = p.epilogue == matmul_epilogue::bias        ? CUBLASLT_EPILOGUE_BIAS
                               : p.epilogue == matmul_epilogue::bias_relu ? CUBLASLT_EPILOGUE_RELU_BIAS
                               : p.epilogue == matmul_epilogue::relu      ? CUBLASLT_EPILOGUE_RELU
                               : p.epilogue == matmul_epilogue::gelu      ? CUBLASLT_EPILOGUE_GELU
                                                                          : CUBLASLT_EPILOGUE_GELU_BIAS;
        KILN_GPU_CHECK(cublasLtMatmulDescSetAttribute(I.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)), ctx);
    }
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulHeuristicResult_t result{};
    // The algorithm is plain data: a saved program's is checked against this problem (cheaper than
    // the heuristic) and used; one cuBLASLt no longer takes (another version) is asked for again.
    std::string problem = cat("cublaslt matmul a ", to_string(p.a), " b ", to_string(p.b), " c ", to_string(p.c),
                              p.allow_tf32 ? " tf32" : "", " epilogue ", static_cast<int>(p.epilogue), " workspace ",
                              max_workspace);
    if (const std::string* saved = plans ? plans->saved(problem) : nullptr; saved && saved->size() == sizeof(I.algo)) {
        std::memcpy(&I.algo, saved->data(), sizeof(I.algo));
        if (cublasLtMatmulAlgoCheck(h, I.desc, I.la, I.lb, I.lc, I.lc, &I.algo, &result) == CUBLAS_STATUS_SUCCESS &&
            result.workspaceSize <= max_workspace) {
            I.workspace = result.workspaceSize;
            plans->use(problem, *saved, true);
            return;
        }
    }
    KILN_GPU_CHECK(cublasLtMatmulPreferenceCreate(&pref), ctx);
    std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>, decltype(&cublasLtMatmulPreferenceDestroy)> guard(
        pref, &cublasLtMatmulPreferenceDestroy);
    KILN_GPU_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace,
                                                        sizeof(max_workspace)),
                   ctx);
    int found = 0;
    cublasLtMatmulHeuristicResult_t results[8]{};
    KILN_GPU_CHECK(cublasLtMatmulAlgoGetHeuristic(h, I.desc, I.la, I.lb, I.lc, I.lc, pref, tune ? 8 : 1, results, &found),
                   ctx);
    if (found == 0) fail("gpu: cuBLASLt has no algorithm for the matmul of ", where);
    I.algo = results[0].algo;
    I.workspace = results[0].workspaceSize;
    if (tune) tune_algorithm(I, problem, std::vector(results, results + found), *tune);
    if (plans) plans->use(problem, std::string(reinterpret_cast<const char*>(&I.algo), sizeof(I.algo)), false);
}

matmul_plan::~matmul_plan() = default;
matmul_plan::matmul_plan(matmul_plan&&) noexcept = default;
std::size_t matmul_plan::workspace_bytes() const { return impl_->workspace; }

void matmul_plan::run(const void* a, const void* b, void* c, void* workspace, cudaStream_t s, const void* bias,
                      const void* c_in) const {
    auto& I = *impl_;
    if (bias && I.bias != bias) set_bias(I, bias);
    const void* alpha = I.f64 ? static_cast<const void*>(&I.alpha_d) : &I.alpha_f;
    const void* beta = I.f64 ? static_cast<const void*>(&I.beta_d) : &I.beta_f;
    KILN_GPU_CHECK(cublasLtMatmul(I.h, I.desc, alpha, b, I.la, a, I.lb, beta, c_in ? c_in : c, I.lc, c, I.lc, &I.algo, workspace,
                                  I.workspace, s),
                   cat("running the matmul of ", I.where));
}

}  // namespace kiln::gpu
