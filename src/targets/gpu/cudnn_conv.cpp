#include "targets/gpu/cudnn_conv.hpp"

#include <cstring>

#include "core/error.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/libraries.hpp"

namespace kiln::gpu {
namespace {

cudnnDataType_t dnn_type(dtype t, const std::string& where) {
    switch (t) {
        case dtype::float32: return CUDNN_DATA_FLOAT;
        case dtype::float16: return CUDNN_DATA_HALF;
        case dtype::bfloat16: return CUDNN_DATA_BFLOAT16;
        case dtype::float64: return CUDNN_DATA_DOUBLE;
        default: fail("gpu: cuDNN convolution does not take ", dtype_name(t), " (", where, ")");
    }
}

std::vector<int> ints(const std::vector<std::size_t>& v) { return {v.begin(), v.end()}; }

std::vector<int> standard_strides(const std::vector<int>& lens) {
    std::vector<int> s(lens.size(), 1);
    for (std::size_t d = lens.size() - 1; d-- > 0;) s[d] = s[d + 1] * lens[d + 1];
    return s;
}

// NHWC strides of {N, C, H, W} lens.
std::vector<int> channels_last_strides(const std::vector<int>& l) { return {l[1] * l[2] * l[3], 1, l[3] * l[1], l[1]}; }

std::string list(const std::vector<int>& v) {
    std::string s;
    for (int x : v) s += (s.empty() ? "" : "x") + std::to_string(x);
    return s;
}

constexpr std::size_t max_workspace = 256u << 20;

// `Perf`: cuDNN's ranking entries; `query(n, &found, perf)` ranks, `workspace(algo, &bytes)` sizes.
template <class Perf, class Algo, int Count, class Query, class Workspace>
dnn_algorithm choose(library_handles& libs, const dnn_convolution& c, const char* what, Query query, Workspace workspace) {
    std::string problem = cat(what, ' ', c.problem);
    dnn_algorithm r;
    if (const std::string* saved = libs.plans.saved(problem); saved && saved->size() == sizeof(int)) {
        std::memcpy(&r.algo, saved->data(), sizeof(int));
        // A plan cuDNN no longer takes (another cuDNN version) is asked of the heuristic again.
        if (r.algo >= 0 && r.algo < Count && workspace(static_cast<Algo>(r.algo), &r.workspace) == CUDNN_STATUS_SUCCESS &&
            r.workspace <= max_workspace) {
            libs.plans.use(problem, *saved, true);
            libs.reserve_workspace(r.workspace);
            return r;
        }
    }
    std::string msg = cat("choosing the ", what, " algorithm of ", c.where);
    int found = 0;
    Perf perf[Count];
    KILN_GPU_CHECK(query(Count, &found, perf), msg);
    for (int i = 0; i < found; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > max_workspace) continue;
        if (c.exact_fp32 && perf[i].mathType == CUDNN_TENSOR_OP_MATH) continue;
        r.algo = static_cast<int>(perf[i].algo);
        KILN_GPU_CHECK(workspace(perf[i].algo, &r.workspace), msg);
        libs.plans.use(problem, std::string(reinterpret_cast<const char*>(&r.algo), sizeof(int)), false);
        libs.reserve_workspace(r.workspace);
        return r;
    }
    fail("gpu: cuDNN has no ", what, " algorithm for ", c.where);
}

}  // namespace

dnn_convolution::dnn_convolution(dtype t, std::vector<std::size_t> xl, std::vector<std::size_t> wl,
                                 std::vector<std::size_t> yl, std::vector<std::size_t> pad, std::vector<std::size_t> stride,
                                 std::vector<std::size_t> dilation, std::size_t group, bool allow_tf32, std::string where_,
                                 bool channels_last)
    : where(std::move(where_)) {
    if (channels_last && xl.size() != 4) fail("gpu: an NHWC convolution takes 2 spatial dims (", where, ")");
    cudnnDataType_t dt = dnn_type(t, where);
    type_ = dt;
    f64 = dt == CUDNN_DATA_DOUBLE;
    exact_fp32 = dt == CUDNN_DATA_FLOAT && !allow_tf32;
    if (xl.size() == 3) {   // the spatial dim of 1 added in front
        for (auto* v : {&xl, &wl, &yl}) v->insert(v->begin() + 2, 1);
        pad.insert(pad.begin(), 0);
        stride.insert(stride.begin(), 1);
        dilation.insert(dilation.begin(), 1);
    }
    std::vector<int> xi = ints(xl), wi = ints(wl), yi = ints(yl), p = ints(pad), s = ints(stride), d = ints(dilation);
    y_lens_ = yi;
    cudnnMathType_t math = dt == CUDNN_DATA_FLOAT ? (allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH) : CUDNN_TENSOR_OP_MATH;
    problem = cat(dtype_name(t), " x ", list(xi), " w ", list(wi), " y ", list(yi), " pad ", list(p), " stride ", list(s),
                  " dilation ", list(d), " group ", group, " math ", static_cast<int>(math), channels_last ? " nhwc" : "");
    auto strides = channels_last ? channels_last_strides : standard_strides;
    std::string msg = cat("describing the convolution of ", where);
    KILN_GPU_CHECK(cudnnCreateTensorDescriptor(&x), msg);
    KILN_GPU_CHECK(cudnnCreateTensorDescriptor(&y), msg);
    KILN_GPU_CHECK(cudnnCreateFilterDescriptor(&w), msg);
    KILN_GPU_CHECK(cudnnCreateConvolutionDescriptor(&conv), msg);
    KILN_GPU_CHECK(cudnnSetTensorNdDescriptor(x, dt, static_cast<int>(xi.size()), xi.data(), strides(xi).data()), msg);
    KILN_GPU_CHECK(cudnnSetTensorNdDescriptor(y, dt, static_cast<int>(yi.size()), yi.data(), strides(yi).data()), msg);
    // The filter's dims are given as {M, C, kH, kW} in either format.
    KILN_GPU_CHECK(cudnnSetFilterNdDescriptor(w, dt, channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                              static_cast<int>(wi.size()), wi.data()),
                   msg);
    KILN_GPU_CHECK(cudnnSetConvolutionNdDescriptor(conv, static_cast<int>(p.size()), p.data(), s.data(), d.data(),
                                                   CUDNN_CROSS_CORRELATION, f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT),
                   msg);
    KILN_GPU_CHECK(cudnnSetConvolutionGroupCount(conv, static_cast<int>(group)), msg);
    KILN_GPU_CHECK(cudnnSetConvolutionMathType(conv, math), msg);
}

dnn_convolution::~dnn_convolution() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (act) cudnnDestroyActivationDescriptor(act);
}

void dnn_convolution::fuse_epilogue(bool relu_) {
    relu = relu_;
    std::string msg = cat("describing the fused epilogue of ", where);
    // One value per output channel, of the output's type (cuDNN's bias takes y's type for every
    // floating-point configuration).
    std::vector<int> lens(y_lens_.size(), 1);
    lens[1] = y_lens_[1];
    KILN_GPU_CHECK(cudnnCreateTensorDescriptor(&bias), msg);
    KILN_GPU_CHECK(cudnnSetTensorNdDescriptor(bias, type_, static_cast<int>(lens.size()), lens.data(), standard_strides(lens).data()),
                   msg);
    KILN_GPU_CHECK(cudnnCreateActivationDescriptor(&act), msg);
    // A NaN stays NaN through the relu, as ref's max(x, 0) keeps it.
    KILN_GPU_CHECK(cudnnSetActivationDescriptor(act, relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY, CUDNN_PROPAGATE_NAN, 0.0),
                   msg);
}

dnn_algorithm choose_forward(library_handles& libs, const dnn_convolution& c) {
    cudnnHandle_t h = libs.dnn();
    return choose<cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgo_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT>(
        libs, c, "convolution (forward)",
        [&](int n, int* found, cudnnConvolutionFwdAlgoPerf_t* perf) {
            return cudnnGetConvolutionForwardAlgorithm_v7(h, c.x, c.w, c.conv, c.y, n, found, perf);
        },
        [&](cudnnConvolutionFwdAlgo_t a, std::size_t* bytes) {
            return cudnnGetConvolutionForwardWorkspaceSize(h, c.x, c.w, c.conv, c.y, a, bytes);
        });
}

dnn_algorithm choose_backward_data(library_handles& libs, const dnn_convolution& c) {
    cudnnHandle_t h = libs.dnn();
    return choose<cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT>(
        libs, c, "deconvolution (backward data)",
        [&](int n, int* found, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
            return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, c.w, c.y, c.conv, c.x, n, found, perf);
        },
        [&](cudnnConvolutionBwdDataAlgo_t a, std::size_t* bytes) {
            return cudnnGetConvolutionBackwardDataWorkspaceSize(h, c.w, c.y, c.conv, c.x, a, bytes);
        });
}

cudnnStatus_t run_fused(library_handles& libs, const dnn_convolution& c, dnn_algorithm a, const dnn_fused_operands& p) {
    // Without a residual z is y's memory with alpha2 = 0: cuDNN then does not read it.
    return cudnnConvolutionBiasActivationForward(libs.dnn(), c.one(), c.x, p.x, c.w, p.w, c.conv,
                                                 static_cast<cudnnConvolutionFwdAlgo_t>(a.algo), libs.workspace(), a.workspace,
                                                 p.z ? c.one() : c.zero(), c.y, p.z ? p.z : p.y, c.bias, p.bias, c.act, c.y, p.y);
}

std::optional<dnn_algorithm> choose_fused(library_handles& libs, const dnn_convolution& c, const dnn_fused_operands& p) {
    std::vector<dnn_algorithm> candidates;
    if (c.relu) candidates.push_back(choose_forward(libs, c));
    dnn_algorithm precomp{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 0};
    if (candidates.empty() || candidates[0].algo != precomp.algo) {
        cudnnStatus_t st = cudnnGetConvolutionForwardWorkspaceSize(libs.dnn(), c.x, c.w, c.conv, c.y,
                                                                   CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &precomp.workspace);
        if (st == CUDNN_STATUS_SUCCESS && precomp.workspace <= max_workspace) candidates.push_back(precomp);
    }
    for (const dnn_algorithm& a : candidates) {
        libs.reserve_workspace(a.workspace);
        cudnnStatus_t st = run_fused(libs, c, a, p);
        if (st == CUDNN_STATUS_SUCCESS) return a;
        // cuDNN declines with a NOT_SUPPORTED status (3000-3999) or BAD_PARAM (an algorithm it does not fuse
        // with the identity); anything else is a real failure.
        bool declined = (st >= CUDNN_STATUS_NOT_SUPPORTED && st < CUDNN_STATUS_INTERNAL_ERROR) || st == CUDNN_STATUS_BAD_PARAM;
        if (!declined)
            KILN_GPU_CHECK(st, cat("trying cuDNN's fused convolution of ", c.where));
    }
    return std::nullopt;
}

}  // namespace kiln::gpu
