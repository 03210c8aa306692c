// Elementwise unary math (declared in unary.hpp). Float ops compute in double and round once to
// the element type.
#include "ops/unary.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace kiln::ops {

#define KILN_FLOAT_UNARY(NAME, EXPR)                                    \
    template <floating C> C NAME::apply(C x) const { return EXPR; }     \
    KILN_REGISTER_OP(NAME)

KILN_FLOAT_UNARY(ceil, std::ceil(x))
KILN_FLOAT_UNARY(floor, std::floor(x))
KILN_FLOAT_UNARY(round, std::nearbyint(x))
KILN_FLOAT_UNARY(sqrt, std::sqrt(x))
KILN_FLOAT_UNARY(rsqrt, 1 / std::sqrt(x))
KILN_FLOAT_UNARY(recip, 1 / x)
KILN_FLOAT_UNARY(exp, std::exp(x))
KILN_FLOAT_UNARY(log, std::log(x))
KILN_FLOAT_UNARY(sin, std::sin(x))
KILN_FLOAT_UNARY(cos, std::cos(x))
KILN_FLOAT_UNARY(tan, std::tan(x))
KILN_FLOAT_UNARY(asin, std::asin(x))
KILN_FLOAT_UNARY(acos, std::acos(x))
KILN_FLOAT_UNARY(atan, std::atan(x))
KILN_FLOAT_UNARY(sinh, std::sinh(x))
KILN_FLOAT_UNARY(cosh, std::cosh(x))
KILN_FLOAT_UNARY(tanh, std::tanh(x))
KILN_FLOAT_UNARY(asinh, std::asinh(x))
KILN_FLOAT_UNARY(acosh, std::acosh(x))
KILN_FLOAT_UNARY(atanh, std::atanh(x))
KILN_FLOAT_UNARY(erf, std::erf(x))
KILN_FLOAT_UNARY(sigmoid, 1 / (1 + std::exp(-x)))
KILN_FLOAT_UNARY(softsign, x / (1 + std::abs(x)))
KILN_FLOAT_UNARY(mish, x * std::tanh(std::log1p(std::exp(x))))
// log(1 + e^x) without overflow for large x.
KILN_FLOAT_UNARY(softplus, x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
KILN_FLOAT_UNARY(hard_swish, x * std::clamp(x / 6 + C(0.5), C(0), C(1)))
#undef KILN_FLOAT_UNARY

// Signed integers wrap, two's complement: abs and neg of the most negative value give it back
// (computed unsigned: -x of INT64_MIN is undefined; narrower types promote to int and wrap back).
namespace {
template <number C> C negate(C x) {
    if constexpr (std::is_integral_v<C>) return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(x));
    else return -x;
}
}  // namespace

template <number C> C abs::apply(C x) const {
    if constexpr (std::is_unsigned_v<C>) return x;
    else return x < 0 ? negate(x) : x;
}
KILN_REGISTER_OP(abs)

template <number C> C neg::apply(C x) const { return negate(x); }
KILN_REGISTER_OP(neg)

template <number C> C sign::apply(C x) const { return x > 0 ? C(1) : x < 0 ? C(-1) : C(0); }
KILN_REGISTER_OP(sign)

// NaN (x != x) passes through, as ONNX's max(0, x) has it; -0 becomes 0.
template <number C> C relu::apply(C x) const { return x > C(0) || x != x ? x : C(0); }
KILN_REGISTER_OP(relu)

template <floating C> C leaky_relu::apply(C x) const { return x >= 0 ? x : C(alpha) * x; }
KILN_REGISTER_OP(leaky_relu)

template <floating C> C elu::apply(C x) const { return x >= 0 ? x : C(alpha) * std::expm1(x); }
KILN_REGISTER_OP(elu)

template <floating C> C celu::apply(C x) const {
    C a = alpha;
    return std::max(C(0), x) + std::min(C(0), a * std::expm1(x / a));
}
KILN_REGISTER_OP(celu)

template <floating C> C selu::apply(C x) const { return C(gamma) * (x > 0 ? x : C(alpha) * std::expm1(x)); }
KILN_REGISTER_OP(selu)

template <floating C> C thresholded_relu::apply(C x) const { return x > C(alpha) ? x : C(0); }
KILN_REGISTER_OP(thresholded_relu)

template <floating C> C hard_sigmoid::apply(C x) const { return std::clamp(C(alpha) * x + C(beta), C(0), C(1)); }
KILN_REGISTER_OP(hard_sigmoid)

shape gelu::compute_shape(std::span<const shape> in) const {
    if (approximate != "none" && approximate != "tanh") fail("approximate='", approximate, "'; expected none or tanh");
    return unary_op::compute_shape(in);
}
template <floating C> C gelu::apply(C x) const {
    if (approximate == "tanh") {
        C k = std::sqrt(C(2) / C(M_PI));
        return C(0.5) * x * (1 + std::tanh(k * (x + C(0.044715) * x * x * x)));
    }
    return C(0.5) * x * (1 + std::erf(x / std::sqrt(C(2))));
}
// The helper takes whether to use the tanh approximation: a string does not print as a literal.
std::string gelu::scalar_expr(std::span<const std::string> args) const {
    return scalar_call("kiln_gelu", args, value{{"tanh", value(approximate == "tanh")}});
}
KILN_REGISTER_OP(gelu)

template <floating C> bool isnan::apply(C x) const { return std::isnan(x); }
KILN_REGISTER_OP(isnan)

template <floating C> bool isinf::apply(C x) const {
    return std::isinf(x) && ((x > 0 && detect_positive) || (x < 0 && detect_negative));
}
KILN_REGISTER_OP(isinf)

KILN_REGISTER_OP(logical_not)

template <integer C> C bitwise_not::apply(C x) const { return ~x; }
KILN_REGISTER_OP(bitwise_not)

}  // namespace kiln::ops
