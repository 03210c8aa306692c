// ONNX matrix products: MatMul onto kiln's dot (numpy matmul, 1-D operands included), Gemm onto
// gemm, and MatMulInteger composed from convert, sub and an int32 dot.
#include "core/error.hpp"
#include "frontends/onnx/nn_common.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

KILN_ONNX_OP("", "MatMul", 1, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    return {ctx.add("dot", {in.at(0), in.at(1)})};
})

// alpha * A' B' + beta * C. C is required before opset 11; opsets 1-6 had a `broadcast`
// attribute, which kiln's gemm needs not: it always broadcasts C one way to the result, and a C
// that needs no broadcast reads the same.
inputs_t map_gemm(const node_info& n, context& ctx, const inputs_t& in) {
    inputs_t args{in.at(0), in.at(1)};
    if (present(ctx, in, 2))
        args.push_back(in[2]);
    else if (n.opset() < 11)
        fail("input 2 (C) is required before opset 11");
    return {ctx.add("gemm",
                    value{{"alpha", n.attr_float("alpha", 1.0f)},
                          {"beta", n.attr_float("beta", 1.0f)},
                          {"trans_a", n.attr_int("transA", 0) != 0},
                          {"trans_b", n.attr_int("transB", 0) != 0}},
                    args)};
}
KILN_ONNX_OP("", "Gemm", 1, map_gemm)

// (A - a_zero_point) (B - b_zero_point) in int32: the zero points are per tensor, per row of A
// or per column of B. int32 products of 8-bit values are exact and the dot wraps to int32 as
// ONNX's int32 accumulation does.
KILN_ONNX_OP("", "MatMulInteger", 10, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    auto axis = [](instruction_ref v, std::size_t from_end) {
        std::size_t r = v->get_shape().ndim();
        return r < from_end ? 0 : r - from_end;
    };
    auto a = centered_int32(ctx, in.at(0), in, 2, axis(in[0], 2));
    auto b = centered_int32(ctx, in.at(1), in, 3, axis(in[1], 1));
    return {ctx.add("dot", {a, b})};
})

}  // namespace
}  // namespace kiln::onnx_fe
