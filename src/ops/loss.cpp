// nll_loss, as ONNX NegativeLogLikelihoodLoss: input [N, C, d1..dk] of log-probabilities, target
// [N, d1..dk] of class indices, optional weight [C]. Each element's loss is
// -input[n, target, d] * weight[target]; a target equal to ignore_index (when set) contributes 0
// and weighs nothing. reduction "none" keeps [N, d1..dk]; "sum" adds up; "mean" divides the sum
// by the total weight of the targets not ignored (so all ignored gives 0/0 = NaN, as the spec's
// reference does). SoftmaxCrossEntropyLoss is logsoftmax over axis 1 followed by this op.
#include "ops/loss.hpp"

namespace kiln::ops {

shape nll_loss::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 2, 3);
    check_static(in);
    check_type(in, 0, float_type, "a float type");
    check_rank(in, 0, 2, true);
    if (in[1].type() != dtype::int32 && in[1].type() != dtype::int64)
        fail("input 1 (target) is ", dtype_name(in[1].type()), "; expected int32 or int64");
    const auto& x = in[0].lens();
    std::vector<std::size_t> t(x.begin(), x.end());
    t.erase(t.begin() + 1);
    if (in[1].lens() != t)
        fail("input 1 (target) is ", lens_to_string(in[1].lens()), "; expected ", lens_to_string(t),
             " (input 0 without its class dim 1)");
    if (in.size() == 3) {
        if (in[2].type() != in[0].type())
            fail("input 2 (weight) is ", dtype_name(in[2].type()), "; expected ", dtype_name(in[0].type()));
        if (in[2].lens() != std::vector<std::size_t>{x[1]})
            fail("input 2 (weight) is ", lens_to_string(in[2].lens()), "; expected {", x[1], "}");
    }
    if (reduction == "none") return {in[0].type(), t};
    if (reduction != "mean" && reduction != "sum")
        fail("reduction='", reduction, "'; expected 'none', 'mean' or 'sum'");
    return shape(in[0].type());
}

argument nll_loss::compute(const shape& out, std::span<const argument> args) const {
    const auto& lens = args[0].get_shape().lens();
    std::size_t n = lens[0], c = lens[1], d = elements_of(std::span(lens).subspan(2));
    auto x = to_doubles(args[0]);
    auto target = to_int64s(args[1]);
    std::vector<double> w = args.size() == 3 ? to_doubles(args[2]) : std::vector<double>(c, 1.0);
    std::vector<double> loss(n * d);
    double sum = 0, weight_sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < d; ++j) {
            std::int64_t k = target[i * d + j];
            if (has_ignore_index && k == ignore_index) continue;
            if (k < 0 || k >= std::int64_t(c))
                fail("target ", k, " at element ", i * d + j, " is outside the ", c, " classes [0, ", c, ")",
                     has_ignore_index ? " and is not ignore_index" : "");
            double l = -x[(i * c + std::size_t(k)) * d + j] * w[std::size_t(k)];
            loss[i * d + j] = l;
            sum += l;
            weight_sum += w[std::size_t(k)];
        }
    }
    if (reduction == "none") return from_doubles(out, loss);
    double r = reduction == "sum" ? sum : sum / weight_sum;
    return from_doubles(out, std::vector<double>{r});
}
KILN_REGISTER_OP(nll_loss)

}  // namespace kiln::ops
