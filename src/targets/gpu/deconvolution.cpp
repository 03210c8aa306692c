// Deconvolution (ONNX ConvTranspose) through cuDNN 9: the gradient of a convolution with respect
// to its input (cudnnConvolutionBackwardData) is a transposed convolution, with the deconvolution's
// input as the gradient and its weights [C, M/group, k...] as the filter. cuDNN pads
// symmetrically, so it computes the full, unpadded result (length (n - 1) * stride + dilated
// kernel per dim) into scratch, and one generated kernel crops the padding off and appends
// output_padding's zeros. NCHW, 1-3 spatial dims, groups, dilation; float32 without TF32 unless
// allowed, float16/bfloat16 accumulating in float32, float64.
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

std::vector<int> ints(const std::vector<std::size_t>& v) { return {v.begin(), v.end()}; }

// cuDNN wants at least 4 dims: 1-d problems get a spatial dim of 1 in front.
std::vector<std::size_t> at_least_4(std::vector<std::size_t> v) {
    if (v.size() == 3) v.insert(v.begin() + 2, 1);
    return v;
}

struct deconv_plan {
    cudnnHandle_t h = nullptr;
    cudnnTensorDescriptor_t dy = nullptr, dx = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    cudnnConvolutionBwdDataAlgo_t algo{};
    std::size_t workspace = 0;
    bool f64 = false;
    std::string where;
    ~deconv_plan() {
        if (dy) cudnnDestroyTensorDescriptor(dy);
        if (dx) cudnnDestroyTensorDescriptor(dx);
        if (w) cudnnDestroyFilterDescriptor(w);
        if (conv) cudnnDestroyConvolutionDescriptor(conv);
    }
};

cudnnDataType_t dnn_type(dtype t, const std::string& where) {
    switch (t) {
        case dtype::float32: return CUDNN_DATA_FLOAT;
        case dtype::float16: return CUDNN_DATA_HALF;
        case dtype::bfloat16: return CUDNN_DATA_BFLOAT16;
        case dtype::float64: return CUDNN_DATA_DOUBLE;
        default: fail("gpu: cuDNN deconvolution does not take ", dtype_name(t), " (", where, ")");
    }
}

// The cuDNN call computing the full deconvolution of x by w into `full`.
void add_backward_data(lowering_context& ctx, const instruction& ins, const ops::deconvolution& op, const body_operand& x,
                       const body_operand& w, std::byte* full, const std::vector<std::size_t>& full_lens,
                       const ops::window& win) {
    std::string where = ctx.where(ins);
    auto plan = std::make_shared<deconv_plan>();
    plan->where = where;
    auto& libs = ctx.libraries();
    plan->h = libs.dnn();
    cudnnDataType_t t = dnn_type(x.s.type(), where);
    cudnnDataType_t acc = t == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    plan->f64 = t == CUDNN_DATA_DOUBLE;
    std::string msg = cat("planning the deconvolution of ", where);
    auto yl = at_least_4(x.s.lens()), xl = at_least_4(full_lens), wl = at_least_4(w.s.lens());
    auto ys = shape::standard_strides(yl), xs = shape::standard_strides(xl);
    KILN_GPU_CHECK(cudnnCreateTensorDescriptor(&plan->dy), msg);
    KILN_GPU_CHECK(cudnnCreateTensorDescriptor(&plan->dx), msg);
    KILN_GPU_CHECK(cudnnCreateFilterDescriptor(&plan->w), msg);
    KILN_GPU_CHECK(cudnnCreateConvolutionDescriptor(&plan->conv), msg);
    KILN_GPU_CHECK(cudnnSetTensorNdDescriptor(plan->dy, t, static_cast<int>(yl.size()), ints(yl).data(), ints(ys).data()), msg);
    KILN_GPU_CHECK(cudnnSetTensorNdDescriptor(plan->dx, t, static_cast<int>(xl.size()), ints(xl).data(), ints(xs).data()), msg);
    KILN_GPU_CHECK(cudnnSetFilterNdDescriptor(plan->w, t, CUDNN_TENSOR_NCHW, static_cast<int>(wl.size()), ints(wl).data()), msg);
    std::vector<int> p(win.stride.size(), 0), s = ints(win.stride), d = ints(win.dilation);
    if (s.size() == 1) {   // the spatial dim of 1 added in front
        p.insert(p.begin(), 0);
        s.insert(s.begin(), 1);
        d.insert(d.begin(), 1);
    }
    KILN_GPU_CHECK(cudnnSetConvolutionNdDescriptor(plan->conv, static_cast<int>(p.size()), p.data(), s.data(), d.data(),
                                                   CUDNN_CROSS_CORRELATION, acc),
                   msg);
    KILN_GPU_CHECK(cudnnSetConvolutionGroupCount(plan->conv, static_cast<int>(op.group)), msg);
    cudnnMathType_t math = t == CUDNN_DATA_FLOAT ? (libs.allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH) : CUDNN_TENSOR_OP_MATH;
    KILN_GPU_CHECK(cudnnSetConvolutionMathType(plan->conv, math), msg);
    int found = 0;
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    KILN_GPU_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(plan->h, plan->w, plan->dy, plan->conv, plan->dx,
                                                               CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, perf),
                   msg);
    bool chosen = false;
    for (int i = 0; i < found && !chosen; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > (256u << 20)) continue;
        // fp32 without TF32: only algorithms that keep full fp32 math.
        if (t == CUDNN_DATA_FLOAT && !libs.allow_tf32 && perf[i].mathType == CUDNN_TENSOR_OP_MATH) continue;
        plan->algo = perf[i].algo;
        chosen = true;
    }
    if (!chosen) fail("gpu: cuDNN has no deconvolution (backward data) algorithm for ", where);
    KILN_GPU_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(plan->h, plan->w, plan->dy, plan->conv, plan->dx, plan->algo,
                                                                &plan->workspace),
                   msg);
    libs.reserve_workspace(plan->workspace);
    ctx.add_step(ins, [plan, xp = x.ptr, wp = w.ptr, full, &libs](cudaStream_t) {
        float one = 1, zero = 0;
        double one_d = 1, zero_d = 0;
        const bool f64 = plan->f64;
        KILN_GPU_CHECK(cudnnConvolutionBackwardData(plan->h, f64 ? static_cast<void*>(&one_d) : &one, plan->w, wp, plan->dy, xp,
                                                    plan->conv, plan->algo, libs.workspace(), plan->workspace,
                                                    f64 ? static_cast<void*>(&zero_d) : &zero, plan->dx, full),
                       cat("running the deconvolution of ", plan->where));
    });
}

void lower_deconvolution(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::deconvolution>();
    std::string where = ctx.where(ins);
    body_operand x{ctx.address(*ins.inputs()[0]), ins.inputs()[0]->get_shape()};
    body_operand w{ctx.address(*ins.inputs()[1]), ins.inputs()[1]->get_shape()};
    if (!x.s.standard()) x = materialize(ctx, ins, x);
    if (!w.s.standard()) w = materialize(ctx, ins, w);
    const shape& y = ins.get_shape();
    std::size_t dims = x.s.ndim() - 2;
    if (dims < 1 || dims > 3) fail("gpu: cuDNN deconvolution takes 1 to 3 spatial dims: ", where);
    auto win = ops::window::make(dims, op.padding, op.stride, op.dilation);
    std::vector<std::size_t> full_lens{y.lens()[0], y.lens()[1]};
    bool direct = y.standard();
    for (std::size_t d = 0; d < dims; ++d) {
        full_lens.push_back((x.s.lens()[d + 2] - 1) * win.stride[d] + win.dilation[d] * (w.s.lens()[d + 2] - 1) + 1);
        direct = direct && win.pad_begin[d] == 0 && full_lens.back() == y.lens()[d + 2];
    }
    shape full(y.type(), full_lens);
    std::byte* fp = direct ? ctx.address(ins) : ctx.scratch(full.bytes(), "a full deconvolution");
    add_backward_data(ctx, ins, op, x, w, fp, full_lens, win);
    if (direct) return;
    // y[c] = full[c + pad_begin] where that lies inside the full result, else 0 (output_padding).
    std::string ty = device_type(y.type());
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n",
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_deconv_crop(", ty, "* __restrict__ y, const ",
                           ty, "* __restrict__ full) {\n",
                           "    for (kiln::index_t i = kiln::global_thread(); i < ", y.elements(), "ull; i += kiln::grid_threads()) {\n",
                           "        kiln::index_t r = i; kiln::i64 off = 0, yoff = 0; bool inside = true;\n");
    for (std::size_t d = y.ndim(); d-- > 0;) {
        std::size_t pb = d >= 2 ? win.pad_begin[d - 2] : 0;
        code += cat("        { const kiln::i64 c = (kiln::i64)(r % ", y.lens()[d], "ull); r /= ", y.lens()[d], "ull; yoff += c * ",
                    y.strides()[d], "ll; inside = inside && c + ", pb, "ll < ", full_lens[d], "ll; off += (c + ", pb, "ll) * ",
                    full.strides()[d], "ll; }\n");
    }
    code += cat("        y[yoff] = inside ? full[off] : kiln::storer<", ty, ">::from(0.0f);\n    }\n}\n");
    ctx.add_kernel(ins, {"kiln_deconv_crop", code, where}, elementwise_launch(y.elements()), {ctx.address(ins), fp});
}

const gpu_lowering_registrar deconvolution_lowering{{
    "deconvolution (cuDNN backward data, then a generated crop)",
    [](const instruction& ins) {
        return ins.get_operator().get_if<ops::deconvolution>() && ins.inputs().size() == 2 &&
               is_float(ins.get_shape().type()) && !ins.get_shape().dynamic();
    },
    lower_deconvolution, true}};

}  // namespace
}  // namespace kiln::gpu
