// one_hot: one elementwise kernel over the output. Each element reads its index (the indices
// broadcast along the inserted axis) and writes `on` where the index, negative ones counted
// from depth, equals its coordinate along that axis, `off` elsewhere (out-of-range indices too,
// as ONNX says). Float indices truncate toward zero as ref's to_int64s does (NaN gives 0).
#include "core/error.hpp"
#include "ops/one_hot.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

void lower_one_hot(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::one_hot>();
    const shape& out = ins.get_shape();
    const shape& idx = ins.inputs()[0]->get_shape();
    const shape& values = ins.inputs()[1]->get_shape();
    const std::size_t axis = static_cast<std::size_t>(op.axis < 0 ? op.axis + static_cast<std::int64_t>(out.ndim()) : op.axis);
    std::size_t inner = 1;
    for (std::size_t d = axis + 1; d < out.ndim(); ++d) inner *= out.lens()[d];

    elementwise_spec spec;
    spec.output = out;
    // The indices gain the depth dim with stride 0; off and on are single values.
    std::vector<std::size_t> strides = idx.strides();
    strides.insert(strides.begin() + static_cast<std::ptrdiff_t>(axis), 0);
    spec.inputs = {shape(idx.type(), out.lens(), strides), shape(values.type(), out.lens(), std::vector<std::size_t>(out.ndim(), 0)),
                   shape(values.type(), out.lens(), std::vector<std::size_t>(out.ndim(), 0))};
    std::string index = is_float(idx.type())
                            ? "x0 != x0 ? 0ll : (kiln::i64)fmax(fmin((double)x0, 9223372036854774784.0), -9223372036854775808.0)"
                            : "(kiln::i64)x0";
    // `i` is the output element's row-major index.
    spec.body = cat("const kiln::i64 k = ", index, ";\n",
                    "const kiln::i64 at = (kiln::i64)((i / ", inner, "ull) % ", op.depth, "ull);\n",
                    "const auto y = (k < 0 ? k + ", op.depth, "ll : k) == at ? x2 : x1;");
    std::byte* v = ctx.address(*ins.inputs()[1]);
    std::byte* on = v + values.strides()[0] * (dtype_bits(values.type()) / 8);
    ctx.add_kernel(ins, make_elementwise_kernel(spec, ctx.where(ins)), elementwise_launch(out.elements()),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0]), v, on});
}

const gpu_lowering_registrar one_hot_lowering{{
    "one_hot (one generated elementwise kernel)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::one_hot>() && ins.get_shape().standard(); },
    lower_one_hot,
}};

}  // namespace
}  // namespace kiln::gpu
