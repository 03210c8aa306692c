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
#include "targets/gpu/cudnn_conv.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/libraries.hpp"

namespace kiln::gpu {
namespace {

// The cuDNN call computing the full deconvolution of x by w into `full`.
void add_backward_data(lowering_context& ctx, const instruction& ins, const ops::deconvolution& op, const body_operand& x,
                       const body_operand& w, std::byte* full, const std::vector<std::size_t>& full_lens,
                       const ops::window& win) {
    auto& libs = ctx.libraries();
    // The convolution whose input gradient this is: its input is the full result, its output x.
    auto plan = std::make_shared<dnn_convolution>(x.s.type(), full_lens, w.s.lens(), x.s.lens(),
                                                  std::vector<std::size_t>(win.stride.size(), 0), win.stride, win.dilation,
                                                  op.group, libs.allow_tf32, ctx.where(ins));
    dnn_algorithm algo = choose_backward_data(libs, *plan);
    ctx.add_step(ins, [plan, algo, h = libs.dnn(), xp = x.ptr, wp = w.ptr, full, &libs](cudaStream_t) {
        KILN_GPU_CHECK(cudnnConvolutionBackwardData(h, plan->one(), plan->w, wp, plan->y, xp, plan->conv,
                                                    static_cast<cudnnConvolutionBwdDataAlgo_t>(algo.algo), libs.workspace(),
                                                    algo.workspace, plan->zero(), plan->x, full),
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
