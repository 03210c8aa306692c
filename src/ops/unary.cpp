// Elementwise unary math. Float ops compute in double and round once to the element type.
#include <cmath>

#include "ops/pointwise.hpp"

namespace kiln::ops {
namespace {

#define KILN_FLOAT_UNARY(NAME, EXPR)                                      \
    struct NAME : unary_op<NAME> {                                        \
        static constexpr std::string_view name = #NAME;                   \
        template <floating C> C apply(C x) const { return EXPR; }         \
    };                                                                    \
    KILN_REGISTER_OP(NAME)

KILN_FLOAT_UNARY(ceil, std::ceil(x))
KILN_FLOAT_UNARY(floor, std::floor(x))
KILN_FLOAT_UNARY(round, std::nearbyint(x))   // ties to even, as ONNX Round
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
#undef KILN_FLOAT_UNARY

struct abs : unary_op<abs, numeric_type> {
    static constexpr std::string_view name = "abs";
    template <number C> C apply(C x) const {
        if constexpr (std::is_unsigned_v<C>) return x;
        else return x < 0 ? -x : x;
    }
};
KILN_REGISTER_OP(abs)

struct neg : unary_op<neg, signed_type> {
    static constexpr std::string_view name = "neg";
    template <number C> C apply(C x) const { return -x; }
};
KILN_REGISTER_OP(neg)

struct sign : unary_op<sign, numeric_type> {
    static constexpr std::string_view name = "sign";
    template <number C> C apply(C x) const { return x > 0 ? C(1) : x < 0 ? C(-1) : C(0); }
};
KILN_REGISTER_OP(sign)

struct relu : unary_op<relu, signed_type> {
    static constexpr std::string_view name = "relu";
    // NaN (x != x) passes through, as ONNX's max(0, x) has it; -0 becomes 0.
    template <number C>
    C apply(C x) const {
        return x > C(0) || x != x ? x : C(0);
    }
};
KILN_REGISTER_OP(relu)

struct leaky_relu : unary_op<leaky_relu> {
    static constexpr std::string_view name = "leaky_relu";
    float alpha = 0.01f;
    auto attributes() { return fields(field("alpha", alpha)); }
    template <floating C> C apply(C x) const { return x >= 0 ? x : C(alpha) * x; }
};
KILN_REGISTER_OP(leaky_relu)

struct elu : unary_op<elu> {
    static constexpr std::string_view name = "elu";
    float alpha = 1.0f;
    auto attributes() { return fields(field("alpha", alpha)); }
    template <floating C> C apply(C x) const { return x >= 0 ? x : C(alpha) * std::expm1(x); }
};
KILN_REGISTER_OP(elu)

struct celu : unary_op<celu> {
    static constexpr std::string_view name = "celu";
    float alpha = 1.0f;
    auto attributes() { return fields(field("alpha", alpha)); }
    template <floating C> C apply(C x) const {
        C a = alpha;
        return std::max(C(0), x) + std::min(C(0), a * std::expm1(x / a));
    }
};
KILN_REGISTER_OP(celu)

struct selu : unary_op<selu> {
    static constexpr std::string_view name = "selu";
    float alpha = 1.67326319217681884765625f;
    float gamma = 1.05070102214813232421875f;
    auto attributes() { return fields(field("alpha", alpha), field("gamma", gamma)); }
    template <floating C> C apply(C x) const { return C(gamma) * (x > 0 ? x : C(alpha) * std::expm1(x)); }
};
KILN_REGISTER_OP(selu)

struct thresholded_relu : unary_op<thresholded_relu> {
    static constexpr std::string_view name = "thresholded_relu";
    float alpha = 1.0f;
    auto attributes() { return fields(field("alpha", alpha)); }
    template <floating C> C apply(C x) const { return x > C(alpha) ? x : C(0); }
};
KILN_REGISTER_OP(thresholded_relu)

struct hard_sigmoid : unary_op<hard_sigmoid> {
    static constexpr std::string_view name = "hard_sigmoid";
    float alpha = 0.2f;
    float beta = 0.5f;
    auto attributes() { return fields(field("alpha", alpha), field("beta", beta)); }
    template <floating C> C apply(C x) const { return std::clamp(C(alpha) * x + C(beta), C(0), C(1)); }
};
KILN_REGISTER_OP(hard_sigmoid)

struct hard_swish : unary_op<hard_swish> {
    static constexpr std::string_view name = "hard_swish";
    template <floating C> C apply(C x) const { return x * std::clamp(x / 6 + C(0.5), C(0), C(1)); }
};
KILN_REGISTER_OP(hard_swish)

// approximate = "none": x/2 (1 + erf(x/sqrt2)); "tanh": the tanh approximation.
struct gelu : unary_op<gelu> {
    static constexpr std::string_view name = "gelu";
    std::string approximate = "none";
    auto attributes() { return fields(field("approximate", approximate)); }
    shape compute_shape(std::span<const shape> in) const {
        if (approximate != "none" && approximate != "tanh")
            fail("approximate='", approximate, "'; expected none or tanh");
        return unary_op::compute_shape(in);
    }
    template <floating C> C apply(C x) const {
        if (approximate == "tanh") {
            C k = std::sqrt(C(2) / C(M_PI));
            return C(0.5) * x * (1 + std::tanh(k * (x + C(0.044715) * x * x * x)));
        }
        return C(0.5) * x * (1 + std::erf(x / std::sqrt(C(2))));
    }
};
KILN_REGISTER_OP(gelu)

struct isnan : unary_op<isnan, float_type, true> {
    static constexpr std::string_view name = "isnan";
    template <floating C> bool apply(C x) const { return std::isnan(x); }
};
KILN_REGISTER_OP(isnan)

struct isinf : unary_op<isinf, float_type, true> {
    static constexpr std::string_view name = "isinf";
    bool detect_positive = true;
    bool detect_negative = true;
    auto attributes() { return fields(field("detect_positive", detect_positive), field("detect_negative", detect_negative)); }
    template <floating C> bool apply(C x) const {
        return std::isinf(x) && ((x > 0 && detect_positive) || (x < 0 && detect_negative));
    }
};
KILN_REGISTER_OP(isinf)

struct logical_not : unary_op<logical_not, bool_type> {
    static constexpr std::string_view name = "logical_not";
    bool apply(bool x) const { return !x; }
};
KILN_REGISTER_OP(logical_not)

struct bitwise_not : unary_op<bitwise_not, integer_type> {
    static constexpr std::string_view name = "bitwise_not";
    template <integer C> C apply(C x) const { return ~x; }
};
KILN_REGISTER_OP(bitwise_not)

}  // namespace
}  // namespace kiln::ops
