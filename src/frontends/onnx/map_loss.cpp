// ONNX losses: NegativeLogLikelihoodLoss onto kiln's nll_loss, and SoftmaxCrossEntropyLoss as
// logsoftmax over the class axis (its optional second output) followed by nll_loss.
#include "core/error.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

// nll_loss of log-probabilities `x` with the node's reduction and ignore_index.
instruction_ref nll(const node_info& n, context& ctx, instruction_ref x, const inputs_t& in) {
    value attrs{{"reduction", n.attr_string("reduction", "mean")},
                {"has_ignore_index", n.has_attr("ignore_index")},
                {"ignore_index", n.attr_int("ignore_index", 0)}};
    inputs_t args{x, in.at(1)};
    if (n.has_input(2)) args.push_back(in[2]);
    return ctx.add("nll_loss", attrs, args);
}

KILN_ONNX_OP("", "NegativeLogLikelihoodLoss", 12, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    n.expect_inputs(2, 3);
    return {nll(n, ctx, in.at(0), in)};
})

inputs_t softmax_cross_entropy(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(2, 3);
    auto log_prob = ctx.add("logsoftmax", value{{"axis", 1}}, {in.at(0)});
    return {nll(n, ctx, log_prob, in), log_prob};
}
KILN_ONNX_OP("", "SoftmaxCrossEntropyLoss", 12, softmax_cross_entropy)

}  // namespace
}  // namespace kiln::onnx_fe
