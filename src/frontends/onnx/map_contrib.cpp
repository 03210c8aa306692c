// ONNX Runtime contrib ops (domain com.microsoft) that ORT-optimized transformer models carry,
// mapped onto kiln's ops: the GELU family and the fused residual normalizations.
#include <onnx/onnx_pb.h>

#include "core/error.hpp"
#include "frontends/onnx/context.hpp"
#include "frontends/onnx/nn_common.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;
const std::string ms = "com.microsoft";

// x + in[i] when optional input i is given, else x.
instruction_ref add_optional(context& ctx, instruction_ref x, const inputs_t& in, std::size_t i) {
    return present(ctx, in, i) ? ctx.add("add", {x, in[i]}) : x;
}

instruction_ref gelu(context& ctx, instruction_ref x, const char* approximate) {
    return ctx.add("gelu", value{{"approximate", approximate}}, {x});
}

KILN_ONNX_OP(ms, "Gelu", 1, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    return {gelu(ctx, in.at(0), "none")};
})
// gelu(A + B), B a bias broadcast over A.
KILN_ONNX_OP(ms, "BiasGelu", 1, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    return {gelu(ctx, ctx.add("add", {in.at(0), in.at(1)}), "none")};
})
// The tanh approximation of gelu(X + bias), bias optional.
KILN_ONNX_OP(ms, "FastGelu", 1, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    return {gelu(ctx, add_optional(ctx, in.at(0), in, 1), "tanh")};
})
// x * sigmoid(alpha * x).
KILN_ONNX_OP(ms, "QuickGelu", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    auto x = in.at(0);
    auto alpha =
        ctx.add_literal(literal(shape(x->get_shape().type()), std::vector<double>{n.attr_float("alpha", 1.702f)}));
    return {ctx.add("mul", {x, ctx.add("sigmoid", {ctx.add("mul", {x, alpha})})})};
})

// The residual sum input + skip (+ bias) and its normalization over the last axis. Outputs:
// output, mean and inv_std_var (training statistics, not supported), input_skip_bias_sum.
op_mapping skip_norm(bool simplified) {
    return [simplified](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
        for (int i : {1, 2})
            if (n.proto().output_size() > i && !n.proto().output(i).empty())
                fail("output ", i, " (", i == 1 ? "mean" : "inv_std_var",
                     ") is a training statistic; kiln supports output and input_skip_bias_sum");
        // SkipLayerNormalization: input, skip, gamma, beta, bias; the simplified form has no beta.
        std::size_t bias = simplified ? 3 : 4;
        auto sum = add_optional(ctx, ctx.add("add", {in.at(0), in.at(1)}), in, bias);
        value attrs{{"axis", -1}, {"epsilon", n.attr_float("epsilon", 1e-12f)}};
        inputs_t args{sum, in.at(2)};
        if (!simplified && present(ctx, in, 3)) args.push_back(in[3]);
        auto y = ctx.add(simplified ? "rms_norm" : "layernorm", attrs, args);
        return {y, ctx.none(), ctx.none(), sum};
    };
}
KILN_ONNX_OP(ms, "SkipLayerNormalization", 1, skip_norm(false))
KILN_ONNX_OP(ms, "SkipSimplifiedLayerNormalization", 1, skip_norm(true))

}  // namespace
}  // namespace kiln::onnx_fe
