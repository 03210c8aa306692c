// Elementwise unary math (compute bodies in unary.cpp). Float ops compute in double and round once
// to the element type.
#pragma once
#include "ops/pointwise.hpp"

namespace kiln::ops {

#define KILN_FLOAT_UNARY(NAME)                                  \
    struct NAME : unary_op<NAME> {                              \
        static constexpr std::string_view name = #NAME;         \
        template <floating C> C apply(C x) const;               \
    };

KILN_FLOAT_UNARY(ceil)
KILN_FLOAT_UNARY(floor)
KILN_FLOAT_UNARY(round)   // ties to even, as ONNX Round
KILN_FLOAT_UNARY(sqrt)
KILN_FLOAT_UNARY(rsqrt)
KILN_FLOAT_UNARY(recip)
KILN_FLOAT_UNARY(exp)
KILN_FLOAT_UNARY(log)
KILN_FLOAT_UNARY(sin)
KILN_FLOAT_UNARY(cos)
KILN_FLOAT_UNARY(tan)
KILN_FLOAT_UNARY(asin)
KILN_FLOAT_UNARY(acos)
KILN_FLOAT_UNARY(atan)
KILN_FLOAT_UNARY(sinh)
KILN_FLOAT_UNARY(cosh)
KILN_FLOAT_UNARY(tanh)
KILN_FLOAT_UNARY(asinh)
KILN_FLOAT_UNARY(acosh)
KILN_FLOAT_UNARY(atanh)
KILN_FLOAT_UNARY(erf)
KILN_FLOAT_UNARY(sigmoid)
KILN_FLOAT_UNARY(softsign)
KILN_FLOAT_UNARY(mish)
KILN_FLOAT_UNARY(softplus)
KILN_FLOAT_UNARY(hard_swish)
#undef KILN_FLOAT_UNARY

struct abs : unary_op<abs, numeric_type> {
    static constexpr std::string_view name = "abs";
    template <number C> C apply(C x) const;
};

struct neg : unary_op<neg, signed_type> {
    static constexpr std::string_view name = "neg";
    template <number C> C apply(C x) const;
};

struct sign : unary_op<sign, numeric_type> {
    static constexpr std::string_view name = "sign";
    template <number C> C apply(C x) const;
};

struct relu : unary_op<relu, signed_type> {
    static constexpr std::string_view name = "relu";
    template <number C> C apply(C x) const;
};

struct leaky_relu : unary_op<leaky_relu> {
    static constexpr std::string_view name = "leaky_relu";
    float alpha = 0.01f;
    auto attributes() { return fields(field("alpha", alpha)); }
    template <floating C> C apply(C x) const;
};

struct elu : unary_op<elu> {
    static constexpr std::string_view name = "elu";
    float alpha = 1.0f;
    auto attributes() { return fields(field("alpha", alpha)); }
    template <floating C> C apply(C x) const;
};

struct celu : unary_op<celu> {
    static constexpr std::string_view name = "celu";
    float alpha = 1.0f;
    auto attributes() { return fields(field("alpha", alpha)); }
    template <floating C> C apply(C x) const;
};

struct selu : unary_op<selu> {
    static constexpr std::string_view name = "selu";
    float alpha = 1.67326319217681884765625f;
    float gamma = 1.05070102214813232421875f;
    auto attributes() { return fields(field("alpha", alpha), field("gamma", gamma)); }
    template <floating C> C apply(C x) const;
};

struct thresholded_relu : unary_op<thresholded_relu> {
    static constexpr std::string_view name = "thresholded_relu";
    float alpha = 1.0f;
    auto attributes() { return fields(field("alpha", alpha)); }
    template <floating C> C apply(C x) const;
};

struct hard_sigmoid : unary_op<hard_sigmoid> {
    static constexpr std::string_view name = "hard_sigmoid";
    float alpha = 0.2f;
    float beta = 0.5f;
    auto attributes() { return fields(field("alpha", alpha), field("beta", beta)); }
    template <floating C> C apply(C x) const;
};

// approximate = "none": x/2 (1 + erf(x/sqrt2)); "tanh": the tanh approximation.
struct gelu : unary_op<gelu> {
    static constexpr std::string_view name = "gelu";
    std::string approximate = "none";
    auto attributes() { return fields(field("approximate", approximate)); }
    shape compute_shape(std::span<const shape> in) const;
    template <floating C> C apply(C x) const;
    std::string scalar_expr(std::span<const std::string> args) const;
};

struct isnan : unary_op<isnan, float_type, true> {
    static constexpr std::string_view name = "isnan";
    template <floating C> bool apply(C x) const;
};

struct isinf : unary_op<isinf, float_type, true> {
    static constexpr std::string_view name = "isinf";
    bool detect_positive = true;
    bool detect_negative = true;
    auto attributes() { return fields(field("detect_positive", detect_positive), field("detect_negative", detect_negative)); }
    template <floating C> bool apply(C x) const;
};

struct logical_not : unary_op<logical_not, bool_type> {
    static constexpr std::string_view name = "logical_not";
    bool apply(bool x) const { return !x; }
};

struct bitwise_not : unary_op<bitwise_not, integer_type> {
    static constexpr std::string_view name = "bitwise_not";
    template <integer C> C apply(C x) const;
};

// SiLU (swish): x * sigmoid(beta * x); silu.cpp says where it comes from.
struct silu : unary_op<silu> {
    static constexpr std::string_view name = "silu";
    float beta = 1.0f;
    auto attributes() { return fields(field("beta", beta)); }
    template <floating C> C apply(C x) const;
};

}  // namespace kiln::ops
