// ONNX normalizations: BatchNormalization (inference, or training_mode's batch statistics),
// InstanceNormalization, LayerNormalization, GroupNormalization, RMSNormalization,
// LpNormalization and MeanVarianceNormalization. Each maps
// to its kiln op; what the op lacks (per-activation batch norm, LayerNormalization's Mean and
// InvStdDev outputs, opset 18's per-group scale) is composed from elementwise and reduce ops.
#include <onnx/onnx_pb.h>

#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"
#include "frontends/onnx/nn_common.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

// A scalar literal of type t holding v.
instruction_ref scalar(context& ctx, dtype t, double v) {
    std::vector<double> d{v};
    return ctx.add_literal(literal(shape(t), d));
}

instruction_ref convert(context& ctx, instruction_ref x, dtype t) {
    if (x->get_shape().type() == t) return x;
    return ctx.add("convert", value{{"target_type", std::string(dtype_name(t))}}, {x});
}

// Outputs the node asks for: the non-empty output names.
std::size_t requested_outputs(const node_info& n) {
    std::size_t count = 0;
    for (const auto& o : n.proto().output()) count += !o.empty();
    return count;
}

// Before opset 9, spatial=0 gives mean, var, scale and bias one value per activation:
// [C, D1, ..., Dn], which broadcasts (numpy rules) against x [N, C, D1, ..., Dn].
instruction_ref per_activation_batch_norm(context& ctx, const inputs_t& in, float epsilon) {
    auto var = in.at(4);
    auto eps = scalar(ctx, var->get_shape().type(), epsilon);
    auto inv_std = ctx.add("recip", {ctx.add("sqrt", {ctx.add("add", {var, eps})})});
    auto normalized = ctx.add("mul", {ctx.add("sub", {in.at(0), in.at(3)}), inv_std});
    return ctx.add("add", {ctx.add("mul", {normalized, in.at(1)}), in.at(2)});
}

// training_mode=1 (opset 14 on): y from the batch's own mean and (population) variance over every
// dim but the channels; the optional outputs are the running statistics moved towards them,
// running * momentum + batch * (1 - momentum), as ONNX's reference computes them.
inputs_t training_batch_norm(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(5, 5);
    auto x = in[0];
    dtype t = x->get_shape().type();
    std::vector<std::int64_t> axes;
    for (std::size_t d = 0; d < x->get_shape().ndim(); ++d)
        if (d != 1) axes.push_back(static_cast<std::int64_t>(d));
    value attrs{{"axes", to_value(axes)}, {"keepdims", false}};
    auto mean = ctx.add("reduce_mean", attrs, {x});
    std::vector<std::int64_t> unsq;
    for (std::size_t d = 1; d + 1 < x->get_shape().ndim(); ++d) unsq.push_back(static_cast<std::int64_t>(d));
    auto centred = ctx.add("sub", {x, ctx.add("unsqueeze", value{{"axes", to_value(unsq)}}, {mean})});
    auto var = ctx.add("reduce_mean", attrs, {ctx.add("mul", {centred, centred})});
    float epsilon = n.attr_float("epsilon", 1e-5f);
    auto y = ctx.add("batch_norm_inference", value{{"epsilon", epsilon}}, {x, in[1], in[2], mean, var});
    auto m = scalar(ctx, t, n.attr_float("momentum", 0.9f)), rest = scalar(ctx, t, 1 - n.attr_float("momentum", 0.9f));
    auto moved = [&](instruction_ref running, instruction_ref batch) {
        return ctx.add("add", {ctx.add("mul", {running, m}), ctx.add("mul", {batch, rest})});
    };
    return {y, moved(in[3], mean), moved(in[4], var)};
}

// Inference: y from the running mean and variance. Statistics outputs without training_mode (the
// opsets before 14 asked for them to train) are refused.
KILN_ONNX_OP("", "BatchNormalization", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    if (n.attr_int("training_mode", 0) != 0) return training_batch_norm(n, ctx, in);
    if (requested_outputs(n) > 1)
        fail(requested_outputs(n), " outputs are requested; kiln supports inference only, whose one output is Y "
             "(the others are training statistics)");
    float epsilon = n.attr_float("epsilon", 1e-5f);
    if (n.attr_int("spatial", 1) == 0) return {per_activation_batch_norm(ctx, in, epsilon)};
    return {ctx.add("batch_norm_inference", value{{"epsilon", epsilon}}, {in.at(0), in.at(1), in.at(2), in.at(3), in.at(4)})};
})

KILN_ONNX_OP("", "InstanceNormalization", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("instancenorm", value{{"epsilon", n.attr_float("epsilon", 1e-5f)}}, {in.at(0), in.at(1), in.at(2)})};
})

// LayerNormalization's Mean and InvStdDev over dims axis..end (kept as 1), computed in the
// stash_type, which is also their output type.
std::pair<instruction_ref, instruction_ref> layer_norm_statistics(const node_info& n, context& ctx, instruction_ref x,
                                                                  std::int64_t axis, float epsilon) {
    dtype stash = onnx_dtype(static_cast<int>(n.attr_int("stash_type", 1)));
    auto rank = static_cast<std::int64_t>(x->get_shape().ndim());
    if (axis < -rank || axis >= rank) fail("axis=", axis, " is out of range for ", rank, " dims");
    std::vector<std::int64_t> axes;
    for (std::int64_t k = axis < 0 ? axis + rank : axis; k < rank; ++k) axes.push_back(k);
    value attrs{{"axes", to_value(axes)}, {"keepdims", true}};
    auto xs = convert(ctx, x, stash);
    auto mean = ctx.add("reduce_mean", attrs, {xs});
    auto d = ctx.add("sub", {xs, mean});
    auto var = ctx.add("reduce_mean", attrs, {ctx.add("mul", {d, d})});
    auto inv_std = ctx.add("recip", {ctx.add("sqrt", {ctx.add("add", {var, scalar(ctx, stash, epsilon)})})});
    return {mean, inv_std};
}

// Y from kiln's layernorm; Mean and InvStdDev composed only when asked for.
inputs_t layer_norm(const node_info& n, context& ctx, const inputs_t& in) {
    std::int64_t axis = n.attr_int("axis", -1);
    float epsilon = n.attr_float("epsilon", 1e-5f);
    inputs_t args{in.at(0), in.at(1)};
    if (present(ctx, in, 2)) args.push_back(in[2]);
    inputs_t outs{ctx.add("layernorm", value{{"axis", axis}, {"epsilon", epsilon}}, args)};
    if (requested_outputs(n) > 1) {
        auto [mean, inv_std] = layer_norm_statistics(n, ctx, in[0], axis, epsilon);
        outs.push_back(mean);
        outs.push_back(inv_std);
    }
    return outs;
}
KILN_ONNX_OP("", "LayerNormalization", 17, layer_norm)

// Opset 18 gives scale and bias one value per group; kiln's group_norm (opset 21) takes one per
// channel, so each group's value is repeated over its C / num_groups channels.
instruction_ref per_channel(context& ctx, instruction_ref per_group, std::int64_t groups, const shape& x) {
    if (x.ndim() < 2 || !x.dims()[1].is_fixed())
        fail("input 0 ", to_string(x), " needs a static channel dim (dim 1) to expand the per-group scale and bias");
    auto channels = static_cast<std::int64_t>(x.dims()[1].min);
    if (groups <= 0 || channels % groups != 0)
        fail("num_groups=", groups, " does not divide the ", channels, " channels of input 0");
    std::vector<std::int64_t> group_of(static_cast<std::size_t>(channels));
    for (std::int64_t c = 0; c < channels; ++c) group_of[static_cast<std::size_t>(c)] = c / (channels / groups);
    auto idx = ctx.add_literal(literal(shape(dtype::int64, std::vector<std::size_t>{group_of.size()}), group_of));
    return ctx.add("gather", value{{"axis", 0}}, {per_group, idx});
}

op_mapping group_norm(bool scale_per_group) {
    return [scale_per_group](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
        std::int64_t groups = n.attr("num_groups").i();
        instruction_ref scale = in.at(1), bias = in.at(2);
        if (scale_per_group) {
            scale = per_channel(ctx, scale, groups, in[0]->get_shape());
            bias = per_channel(ctx, bias, groups, in[0]->get_shape());
        }
        return {ctx.add("group_norm", value{{"num_groups", groups}, {"epsilon", n.attr_float("epsilon", 1e-5f)}},
                        {in.at(0), scale, bias})};
    };
}
KILN_ONNX_OP("", "GroupNormalization", 18, group_norm(true))
KILN_ONNX_OP("", "GroupNormalization", 21, group_norm(false))

KILN_ONNX_OP("", "RMSNormalization", 23, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("rms_norm", value{{"axis", n.attr_int("axis", -1)}, {"epsilon", n.attr_float("epsilon", 1e-5f)}},
                    {in.at(0), in.at(1)})};
})

KILN_ONNX_OP("", "LpNormalization", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("lp_normalization", value{{"axis", n.attr_int("axis", -1)}, {"p", n.attr_int("p", 2)}}, {in.at(0)})};
})

KILN_ONNX_OP("", "MeanVarianceNormalization", 9, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("mean_variance_normalization", value{{"axes", to_value(n.attr_ints("axes", {0, 2, 3}))}},
                    {in.at(0)})};
})

}  // namespace
}  // namespace kiln::onnx_fe
