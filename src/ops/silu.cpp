// SiLU (swish): x * sigmoid(beta * x). ONNX has it only as Swish (opset 24, attribute alpha);
// exporters before that emit Mul(x, Sigmoid(x)), which recognize_patterns turns into this op so a
// target computes it in one pass over x.
#include <cmath>

#include "ops/unary.hpp"

namespace kiln::ops {

template <floating C> C silu::apply(C x) const { return x / (1 + std::exp(-C(beta) * x)); }
KILN_REGISTER_OP(silu)

}  // namespace kiln::ops
