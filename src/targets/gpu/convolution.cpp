// Convolution through cuDNN 9 (the legacy convolution API of libcudnn_cnn): NCHW (any spatial
// rank 1-3), groups, dilation, symmetric or asymmetric padding (asymmetric by padding the input
// into scratch first). float32 computes without TF32 unless allowed; float16/bfloat16 accumulate
// in float32. The algorithm comes from cuDNN's heuristic at load.
#include <cudnn.h>

#include <memory>

#include "core/error.hpp"
#include "ops/convolution.hpp"
#include "ops/window.hpp"
#include "targets/gpu/contraction.hpp"
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

// cuDNN wants at least 4 dims: 1-d convolutions get a spatial dim of 1 in front.
std::vector<std::size_t> at_least_4(std::vector<std::size_t> v, std::size_t fill) {
    if (v.size() == 3) v.insert(v.begin() + 2, fill);
    return v;
}

struct conv_plan {
    cudnnHandle_t h = nullptr;
    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    cudnnConvolutionFwdAlgo_t algo{};
    std::size_t workspace = 0;
    bool f64 = false;
    std::string where;
    ~conv_plan() {
        if (x) cudnnDestroyTensorDescriptor(x);
        if (y) cudnnDestroyTensorDescriptor(y);
        if (w) cudnnDestroyFilterDescriptor(w);
        if (conv) cudnnDestroyConvolutionDescriptor(conv);
    }
};

}  // namespace

void lower_convolution(lowering_context& ctx, const instruction& ins, const operation& op,
                       const std::vector<body_operand>& in, const body_operand& out) {
    const auto& c = op.get<ops::convolution>();
    std::string where = ctx.where(ins);
    body_operand x = in.at(0), w = in.at(1);
    if (!x.s.standard()) x = materialize(ctx, ins, x);
    if (!w.s.standard()) w = materialize(ctx, ins, w);
    std::size_t dims = x.s.lens().size() - 2;
    if (dims < 1 || dims > 3) fail("gpu: cuDNN convolution takes 1 to 3 spatial dims: ", where);
    auto win = ops::window::make(dims, c.padding, c.stride, c.dilation);
    if (win.pad_begin != win.pad_end) {
        // cuDNN pads symmetrically: pad the input explicitly (zeros) and convolve unpadded.
        std::vector<std::size_t> lens = x.s.lens();
        for (std::size_t d = 0; d < dims; ++d) lens[d + 2] += win.pad_begin[d] + win.pad_end[d];
        shape padded(x.s.type(), lens);
        body_operand p{ctx.scratch(padded.bytes(), "a padded convolution input"), padded};
        // y[i] = inside ? x[i - pad_begin] : 0, written as a gather over the padded index.
        std::string body = "kiln::index_t r = i; kiln::i64 off = 0; bool inside = true;\n";
        for (std::size_t d = lens.size(); d-- > 0;) {
            std::size_t pb = d >= 2 ? win.pad_begin[d - 2] : 0;
            body += cat("        { kiln::i64 c = (kiln::i64)(r % ", lens[d], "ull) - ", pb, "; r /= ", lens[d],
                        "ull; inside = inside && c >= 0 && c < ", x.s.lens()[d], "; off += c * ", x.s.strides()[d], "; }\n");
        }
        body += "        const auto y = inside ? kiln::load(p0[off]) : 0.0f;";
        elementwise_spec spec{{}, padded, body};
        auto src = make_elementwise_kernel(spec, where);
        // The input is read through the gather above, not as an elementwise operand.
        std::string sig = cat(", const ", device_type(x.s.type()), "* __restrict__ p0)");
        src.code.replace(src.code.find(") {"), 3, sig + " {");
        ctx.add_kernel(ins, std::move(src), elementwise_launch(padded.elements()), {p.ptr, x.ptr});
        x = p;
        std::fill(win.pad_begin.begin(), win.pad_begin.end(), 0);
    }
    auto plan = std::make_shared<conv_plan>();
    plan->where = where;
    auto& libs = ctx.libraries();
    plan->h = libs.dnn();
    cudnnDataType_t t = dnn_type(x.s.type(), where);
    cudnnDataType_t acc = t == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    plan->f64 = t == CUDNN_DATA_DOUBLE;
    std::string ctx_msg = cat("planning the convolution of ", where);
    auto xl = at_least_4(x.s.lens(), 1), yl = at_least_4(out.s.lens(), 1), wl = at_least_4(w.s.lens(), 1);
    auto xs = shape::standard_strides(xl), ys = shape::standard_strides(yl);
    KILN_GPU_CHECK(cudnnCreateTensorDescriptor(&plan->x), ctx_msg);
    KILN_GPU_CHECK(cudnnCreateTensorDescriptor(&plan->y), ctx_msg);
    KILN_GPU_CHECK(cudnnCreateFilterDescriptor(&plan->w), ctx_msg);
    KILN_GPU_CHECK(cudnnCreateConvolutionDescriptor(&plan->conv), ctx_msg);
    KILN_GPU_CHECK(cudnnSetTensorNdDescriptor(plan->x, t, static_cast<int>(xl.size()), ints(xl).data(), ints(xs).data()), ctx_msg);
    KILN_GPU_CHECK(cudnnSetTensorNdDescriptor(plan->y, t, static_cast<int>(yl.size()), ints(yl).data(), ints(ys).data()), ctx_msg);
    KILN_GPU_CHECK(cudnnSetFilterNdDescriptor(plan->w, t, CUDNN_TENSOR_NCHW, static_cast<int>(wl.size()), ints(wl).data()), ctx_msg);
    std::vector<int> p = ints(win.pad_begin), s = ints(win.stride), d = ints(win.dilation);
    if (dims == 1) {   // the spatial dim of 1 added in front
        p.insert(p.begin(), 0);
        s.insert(s.begin(), 1);
        d.insert(d.begin(), 1);
    }
    KILN_GPU_CHECK(cudnnSetConvolutionNdDescriptor(plan->conv, static_cast<int>(p.size()), p.data(), s.data(), d.data(),
                                                   CUDNN_CROSS_CORRELATION, acc),
                   ctx_msg);
    KILN_GPU_CHECK(cudnnSetConvolutionGroupCount(plan->conv, static_cast<int>(c.group)), ctx_msg);
    cudnnMathType_t math = t == CUDNN_DATA_FLOAT ? (libs.allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH)
                                                  : CUDNN_TENSOR_OP_MATH;
    KILN_GPU_CHECK(cudnnSetConvolutionMathType(plan->conv, math), ctx_msg);
    int found = 0;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    KILN_GPU_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(plan->h, plan->x, plan->w, plan->conv, plan->y,
                                                          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
                   ctx_msg);
    bool chosen = false;
    for (int i = 0; i < found && !chosen; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > (256u << 20)) continue;
        // fp32 without TF32: only algorithms that keep full fp32 math.
        if (t == CUDNN_DATA_FLOAT && !libs.allow_tf32 && perf[i].mathType == CUDNN_TENSOR_OP_MATH) continue;
        plan->algo = perf[i].algo;
        chosen = true;
    }
    if (!chosen) fail("gpu: cuDNN has no convolution algorithm for ", where);
    KILN_GPU_CHECK(cudnnGetConvolutionForwardWorkspaceSize(plan->h, plan->x, plan->w, plan->conv, plan->y, plan->algo,
                                                           &plan->workspace),
                   ctx_msg);
    libs.reserve_workspace(plan->workspace);
    ctx.add_step(ins, [plan, xp = x.ptr, wp = w.ptr, yp = out.ptr, &libs](cudaStream_t) {
        float one = 1, zero = 0;
        double one_d = 1, zero_d = 0;
        const bool f64 = plan->f64;
        KILN_GPU_CHECK(cudnnConvolutionForward(plan->h, f64 ? static_cast<void*>(&one_d) : &one, plan->x, xp, plan->w, wp,
                                               plan->conv, plan->algo, libs.workspace(), plan->workspace,
                                               f64 ? static_cast<void*>(&zero_d) : &zero, plan->y, yp),
                       cat("running the convolution of ", plan->where));
    });
}

}  // namespace kiln::gpu
