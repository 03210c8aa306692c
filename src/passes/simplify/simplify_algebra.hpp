// simplify_algebra: algebraic rewrites that keep results exact or within float rounding:
// identities (x + 0, x * 1, x / 1, x * 0 for integers, pow(x, 1)), pow(x, 2) -> x * x,
// pow(x, 0.5) -> sqrt(x) (they differ at x = -inf only: +inf against NaN), double negation,
// constants reassociated into one, division by a power of two as a multiplication, redundant
// converts, and constant scales and biases folded into convolution, gemm and dot weights.
// Division by other constants stays a division (no fast-math). Assumes constants are literals
// (propagate_constant and simplify_reshapes make them so). Rules live in rules_arith.cpp,
// rules_convert.cpp and rules_conv_gemm.cpp.
#pragma once
#include <string_view>

#include "core/module.hpp"

namespace kiln {

struct simplify_algebra {
    static constexpr std::string_view name = "simplify_algebra";
    void apply(module& m) const;
};

}  // namespace kiln
