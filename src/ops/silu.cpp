// SiLU (swish): x * sigmoid(beta * x). ONNX has it only as Swish (opset 24, attribute alpha);
// exporters before that emit Mul(x, Sigmoid(x)), which recognize_patterns turns into this op so a
// target computes it in one pass over x.
#include <cmath>

#include "ops/pointwise.hpp"

namespace kiln::ops {
namespace {

struct silu : unary_op<silu> {
    static constexpr std::string_view name = "silu";
    float beta = 1.0f;
    auto attributes() { return fields(field("beta", beta)); }
    template <floating C> C apply(C x) const { return x / (1 + std::exp(-C(beta) * x)); }
};
KILN_REGISTER_OP(silu)

}  // namespace
}  // namespace kiln::ops
