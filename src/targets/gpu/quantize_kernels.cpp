// quantizelinear and dequantizelinear: one elementwise kernel each, the scale and zero point read
// at each element's index as ops::check_scales maps them (one value, the `axis` coordinate, or
// its block through a block_layout). The arithmetic is ref's (ops/quantize.cpp): the division in
// the scale's type with IEEE rounding whatever the fast-math setting (__fdiv_rn), round half to
// even, saturation to the target's range; fp8, int4/uint4, int2/uint2 and fp4e2m1 through
// device/kiln_small_types.cuh.
#include "core/error.hpp"
#include "ops/quantize.hpp"
#include "targets/gpu/body_kernel.hpp"

namespace kiln::gpu {
namespace {

// The scale (or zero point) `s` broadcast to x's lens as `m` maps it, and its divisors if blocked.
void add_scale_operand(elementwise_spec& spec, const shape& s, const shape& x, const ops::scale_map& m) {
    std::vector<std::size_t> strides(x.ndim(), 0), div;
    if (m.kind == ops::scale_map::per_axis) {
        strides[m.axis] = s.strides().at(0);
    } else if (m.kind == ops::scale_map::blocked) {
        strides = s.strides();
        div.assign(x.ndim(), 1);
        div[m.axis] = m.block;
    }
    spec.inputs.push_back(shape(s.type(), x.lens(), strides));
    spec.divisors.resize(spec.inputs.size());
    spec.divisors.back() = div;
}

template <class Op>
elementwise_spec scaled_spec(const instruction& ins, const Op& op) {
    std::vector<shape> in;
    for (auto i : ins.inputs()) in.push_back(i->get_shape());
    ops::scale_map m = ops::check_scales(in, op.axis, op.block_size);
    elementwise_spec spec;
    spec.output = ins.get_shape();
    spec.inputs.push_back(broadcast_to(in[0], in[0].lens()));
    for (std::size_t k = 1; k < in.size(); ++k) add_scale_operand(spec, in[k], in[0], m);
    return spec;
}

// v (of compute type) rounded to the scale's type t, as ref's in_scale_type does.
std::string in_type(dtype t, const std::string& v) {
    if (t == dtype::float64) return cat("(double)(", v, ")");
    if (t == dtype::float32) return cat("(float)(", v, ")");
    return stored_value(t, v);
}

std::string quantize_body(const ops::quantizelinear& op, const instruction& ins) {
    dtype st = ins.inputs()[1]->get_shape().type(), target = op.target_type;
    const bool zp = ins.inputs().size() == 3;
    std::string code = cat("const auto xs = ", in_type(st, "x0"), ";\n");
    code += st == dtype::float64 ? "const double q = xs / x1;\n"
                                 : cat("const float q = ", in_type(st, "__fdiv_rn(xs, x1)"), ";\n");
    code += cat("const double zp = ", zp ? "(double)x2" : "0.0", ";\n");
    if (auto range = ops::quantizelinear::range_of(target)) {
        code += cat("const double v = q != q ? zp : rint((double)q) + zp;\n",
                    "const ", compute_type(target), " y = (", compute_type(target), ")fmin(fmax(v, (double)",
                    double_literal(range->first), "), (double)", double_literal(range->second), ");");
    } else if (target == dtype::fp4e2m1) {
        code += "const float y = kiln::e2m1_format::decode(kiln::e2m1_format::encode((double)q + zp, true));";
    } else {
        code += cat("const float y = kiln::round_to<", device_type(target), ">((double)q + zp, ",
                    op.saturate ? "true" : "false", ");");
    }
    return code;
}

// (x - zero_point) rounded to the output type, times the scale, rounded once.
std::string dequantize_body(const instruction& ins) {
    dtype ot = ins.get_shape().type();
    const bool zp = ins.inputs().size() == 3;
    std::string code = cat("const double d = (double)x0 - ", zp ? "(double)x2" : "0.0", ";\n",
                           "const auto r = ", in_type(ot, "d"), ";\n");
    code += ot == dtype::float64 ? "const double y = r * x1;" : "const float y = __fmul_rn(r, x1);";
    return code;
}

const gpu_lowering_registrar quantize_lowering{{
    "quantizelinear/dequantizelinear (one generated elementwise kernel)",
    [](const instruction& ins) {
        const auto& op = ins.get_operator();
        return (op.get_if<ops::quantizelinear>() || op.get_if<ops::dequantizelinear>()) && ins.get_shape().standard();
    },
    [](lowering_context& ctx, const instruction& ins) {
        elementwise_spec spec;
        if (const auto* q = ins.get_operator().get_if<ops::quantizelinear>()) {
            spec = scaled_spec(ins, *q);
            spec.body = quantize_body(*q, ins);
        } else {
            spec = scaled_spec(ins, ins.get_operator().get<ops::dequantizelinear>());
            spec.body = dequantize_body(ins);
        }
        std::vector<void*> pointers{ctx.address(ins)};
        for (auto i : ins.inputs()) pointers.push_back(ctx.address(*i));
        ctx.add_kernel(ins, make_elementwise_kernel(spec, ctx.where(ins)),
                       elementwise_launch(is_packed(ins.get_shape().type()) ? ins.get_shape().bytes()
                                                                            : ins.get_shape().elements()),
                       std::move(pointers));
    },
    false,
    true,
}};

}  // namespace
}  // namespace kiln::gpu
