// Convolution through cuDNN 9 (the legacy convolution API of libcudnn_cnn): NCHW (any spatial
// rank 1-3), groups, dilation, symmetric or asymmetric padding (asymmetric by padding the input
// into scratch first). float16/bfloat16 with 2 spatial dims run channels-last where
// channels_last_convolution says (NHWC activations and filter: cuDNN's tensor-core kernels on
// Hopper; layout_nhwc.hpp), operands in another layout
// copied into it first and a result the output wants in NCHW copied out. float32 computes
// without TF32 unless allowed; float16/bfloat16 accumulate in float32. The algorithm comes from
// the saved program or cuDNN's heuristic at load (cudnn_conv.hpp). A fused epilogue of a bias,
// a residual and a relu (conv_epilogue.cpp) is cuDNN's fused call where cuDNN has an engine for
// it, tried once at load.
#include <cudnn.h>

#include <cstring>
#include <memory>
#include <optional>

#include "core/error.hpp"
#include "ops/convolution.hpp"
#include "ops/window.hpp"
#include "targets/gpu/contraction.hpp"
#include "targets/gpu/cudnn_conv.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/layout_nhwc.hpp"
#include "targets/gpu/libraries.hpp"

namespace kiln::gpu {

namespace {

// o in `layout`: itself, or a copy in scratch memory.
body_operand in_layout(lowering_context& ctx, const instruction& ins, const body_operand& o, const shape& layout) {
    if (same_layout(o.s, layout)) return o;
    body_operand r{ctx.scratch(layout.bytes(), "a convolution operand in another layout"), layout};
    copy_operand(ctx, ins, o, r);
    return r;
}

// y = act(conv(x, w) + residual + bias) in one cuDNN call, where cuDNN has an engine for it.
bool lower_fused(lowering_context& ctx, const instruction& ins, const std::shared_ptr<dnn_convolution>& plan,
                 const body_operand& x, const body_operand& w, const body_operand& y, const conv_epilogue& epi) {
    plan->fuse_epilogue(epi.relu);
    std::byte* bias = epi.bias;
    if (!bias) {   // cuDNN's call always adds a bias: zeros where the body has none
        argument zeros(shape(y.s.type(), std::vector<std::size_t>{y.s.lens().at(1)}));
        std::memset(zeros.data(), 0, zeros.get_shape().bytes());
        bias = ctx.upload(zeros, ctx.where(ins));
    }
    auto& libs = ctx.libraries();
    dnn_fused_operands p{x.ptr, w.ptr, epi.residual, bias, y.ptr};
    std::optional<dnn_algorithm> algo = choose_fused(libs, *plan, p);
    if (!algo) return false;
    ctx.add_step(ins, [plan, algo = *algo, p, &libs](cudaStream_t) {
        KILN_GPU_CHECK(run_fused(libs, *plan, algo, p), cat("running the fused convolution of ", plan->where));
    });
    return true;
}

}  // namespace

bool lower_convolution(lowering_context& ctx, const instruction& ins, const operation& op,
                       const std::vector<body_operand>& in, const body_operand& out, const conv_epilogue* epi) {
    const auto& c = op.get<ops::convolution>();
    std::string where = ctx.where(ins);
    body_operand x = in.at(0), w = in.at(1);
    const bool nhwc = channels_last_convolution(x.s, c.group);
    auto layout = [&](const shape& s) { return nhwc ? channels_last(s) : s.as_standard(); };
    // The filter is channels-last already where it is a literal (the pass gpu_nhwc_weights).
    w = in_layout(ctx, ins, w, layout(w.s));
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
    x = in_layout(ctx, ins, x, layout(x.s));
    body_operand y = out;
    if (!same_layout(y.s, layout(out.s))) y = {ctx.scratch(out.s.bytes(), "a convolution result in another layout"), layout(out.s)};
    auto& libs = ctx.libraries();
    auto plan = std::make_shared<dnn_convolution>(x.s.type(), x.s.lens(), w.s.lens(), out.s.lens(), win.pad_begin, win.stride,
                                                  win.dilation, c.group, libs.allow_tf32, where, nhwc);
    if (epi && y.ptr == out.ptr && lower_fused(ctx, ins, plan, x, w, y, *epi)) return true;
    dnn_algorithm algo = choose_forward(libs, *plan);
    ctx.add_step(ins, [plan, algo, h = libs.dnn(), xp = x.ptr, wp = w.ptr, yp = y.ptr, &libs](cudaStream_t) {
        KILN_GPU_CHECK(cudnnConvolutionForward(h, plan->one(), plan->x, xp, plan->w, wp, plan->conv,
                                               static_cast<cudnnConvolutionFwdAlgo_t>(algo.algo), libs.workspace(),
                                               algo.workspace, plan->zero(), plan->y, yp),
                       cat("running the convolution of ", plan->where));
    });
    if (y.ptr != out.ptr) copy_operand(ctx, ins, y, out);
    return !epi;
}

}  // namespace kiln::gpu
