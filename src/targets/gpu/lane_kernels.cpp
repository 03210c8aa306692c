// Generated lane kernels (device/kiln_lane.cuh): reductions, softmax and logsoftmax, layer norm,
// attention; and pooling, one output element per thread. Each generator bakes the shapes in.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <numeric>

#include "core/error.hpp"
#include "ops/attention.hpp"
#include "ops/normalization.hpp"
#include "ops/pooling.hpp"
#include "ops/reduce.hpp"
#include "ops/softmax.hpp"
#include "ops/window.hpp"
#include "targets/gpu/body_kernel.hpp"
#include "targets/gpu/lane_util.hpp"

namespace kiln::gpu {
namespace {

void lower_reduce(lowering_context& ctx, const instruction& ins) {
    const shape& x = ins.inputs().at(0)->get_shape();
    const shape& y = ins.get_shape();
    if (reduce_is_noop(ins.get_operator())) {   // the output is the input
        elementwise_spec spec{{x}, y, "const auto y = x0;"};
        ctx.add_kernel(ins, make_elementwise_kernel(spec, ctx.where(ins)), elementwise_launch(y.elements()),
                       {ctx.address(ins), ctx.address(*ins.inputs()[0])});
        return;
    }
    std::string acc = acc_type(x.type());
    auto k = *kind_of(ins.get_operator(), x.type());
    auto axes = reduced_axes_of(ins.get_operator(), x.lens().size());
    lane_split sx = split(x.lens().size(), axes);
    // The output's dims in order are the kept dims (keepdims leaves 1s where the reduced were).
    lane_split sy;
    if (y.lens().size() == x.lens().size()) sy = sx;
    else for (std::size_t d = 0; d < y.lens().size(); ++d) sy.kept.push_back(d);
    std::string body = cat("        ", acc, " acc = ", k.init, ";\n",
                           "        for (kiln::index_t r = threadIdx.x; r < R; r += blockDim.x) { const ", acc,
                           " v = kiln::load(x[base + Lr.offset(r)]); const ", acc, " m = ", k.map, "; acc = [](", acc,
                           " a, ", acc, " b) { return ", k.combine, "; }(acc, m); }\n",
                           "        acc = kiln::block_reduce(acc, [](", acc, " a, ", acc, " b) { return ", k.combine, "; }, (",
                           acc, ")(", k.init, "), smem);\n",
                           "        if (threadIdx.x == 0) kiln::store(y[ybase], ", k.final, ");\n");
    std::string params = cat(device_type(y.type()), "* __restrict__ y, const ", device_type(x.type()), "* __restrict__ x");
    ctx.add_kernel(ins, lane_kernel(params, acc, x, y, sx, sy, body, ctx.where(ins)), lane_launch(product(x, sx.kept)),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0])});
}

std::size_t norm_axis(std::int64_t axis, std::size_t ndim) {
    return static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(ndim) : axis);
}

template <class Op>
void lower_softmax(lowering_context& ctx, const instruction& ins, bool log) {
    const shape& x = ins.inputs().at(0)->get_shape();
    const shape& y = ins.get_shape();
    std::size_t axis = norm_axis(ins.get_operator().get<Op>().axis, x.lens().size());
    lane_split s = split(x.lens().size(), {axis});
    std::string acc = acc_type(x.type());
    std::string body = cat(
        "        ", acc, " m = kiln::neg_inf_f();\n",
        "        for (kiln::index_t r = threadIdx.x; r < R; r += blockDim.x) m = kiln::max_nan(m, (", acc, ")kiln::load(x[base + Lr.offset(r)]));\n",
        "        m = kiln::block_reduce(m, [](", acc, " a, ", acc, " b) { return kiln::max_nan(a, b); }, (", acc, ")kiln::neg_inf_f(), smem);\n",
        "        ", acc, " s = 0;\n",
        "        for (kiln::index_t r = threadIdx.x; r < R; r += blockDim.x) s += exp((", acc, ")kiln::load(x[base + Lr.offset(r)]) - m);\n",
        "        s = kiln::block_reduce(s, [](", acc, " a, ", acc, " b) { return a + b; }, (", acc, ")0, smem);\n",
        "        for (kiln::index_t r = threadIdx.x; r < R; r += blockDim.x) { const ", acc, " v = (", acc, ")kiln::load(x[base + Lr.offset(r)]) - m;\n",
        "            kiln::store(y[ybase + Yr.offset(r)], ", log ? "v - log(s)" : "exp(v) / s", "); }\n");
    std::string params = cat(device_type(y.type()), "* __restrict__ y, const ", device_type(x.type()), "* __restrict__ x");
    ctx.add_kernel(ins, lane_kernel(params, acc, x, y, s, s, body, ctx.where(ins)), lane_launch(product(x, s.kept)),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0])});
}

// numpy broadcast of s to lens `to`, as a layout over the lane's reduced index.
shape broadcast_lane(const shape& s, const std::vector<std::size_t>& to) {
    std::vector<std::size_t> st(to.size(), 0);
    std::size_t off = to.size() - s.lens().size();
    for (std::size_t d = 0; d < s.lens().size(); ++d) st[off + d] = s.lens()[d] == 1 ? 0 : s.strides()[d];
    return shape(s.type(), to, st);
}

// Whether dims `dims` of s are one dense block (row-major among themselves, innermost stride 1).
bool dense_block(const shape& s, const std::vector<std::size_t>& dims) {
    std::size_t expect = 1;
    for (auto d = dims.rbegin(); d != dims.rend(); ++d) {
        if (s.lens()[*d] != 1 && s.strides()[*d] != expect) return false;
        expect *= s.lens()[*d];
    }
    return true;
}

// Lanes of at most row_max elements, dense in x and y, of a type accumulated in float: one warp
// per lane, its elements read once into registers (32 lanes of the warp, V each), the mean and
// the centred variance summed by warp shuffles, each element written once. No shared memory, no
// block barrier, 8 lanes per block: for hidden sizes like 768 this moves the bytes once where the
// block kernel reads x three times.
constexpr std::size_t row_max = 1024;

bool row_normalizable(const shape& x, const shape& y, const lane_split& s, const std::string& acc) {
    return acc == "float" && product(x, s.reduced) <= row_max && product(x, s.reduced) > 0 && dense_block(x, s.reduced) &&
           dense_block(y, s.reduced);
}

kernel_source row_norm_kernel(const std::string& params, const shape& x, const shape& y, const lane_split& s, bool center,
                              double epsilon, const std::string& affine, const std::string& where) {
    std::size_t R = product(x, s.reduced), lanes = product(x, s.kept), V = (R + 31) / 32;
    std::string loop = "        _Pragma(\"unroll\") for (int i = 0; i < V; ++i) { const kiln::index_t r = t + 32ull * i; if (r < R)";
    std::string code = cat(
        "#include \"kiln_lane.cuh\"\n#include \"scalar_helpers.h\"\n",
        "extern \"C\" __global__ void __launch_bounds__(256) kiln_row_norm(", params, ") {\n",
        "    constexpr auto Lk = ", layout_of(x, s.kept), ";\n",
        "    constexpr auto Yk = ", layout_of(y, s.kept), ";\n",
        "    constexpr kiln::index_t R = ", R, "ull;\n",
        "    constexpr int V = ", V, ";\n",
        "    const int t = threadIdx.x & 31;\n",
        "    for (kiln::index_t lane = blockIdx.x * 8ull + (threadIdx.x >> 5); lane < ", lanes, "ull; lane += gridDim.x * 8ull) {\n",
        "        const kiln::index_t base = Lk.offset(lane), ybase = Yk.offset(lane);\n",
        "        float v[V];\n        float sum = 0;\n",
        loop, " { v[i] = (float)kiln::load(x[base + r]); sum += v[i]; } else v[i] = 0; }\n",
        "        const float mean = ", center ? "kiln::warp_sum(sum) / (float)R" : "0.0f", ";\n",
        "        float sq = 0;\n",
        loop, " { const float d = v[i] - mean; sq += d * d; } }\n",
        "        const float rstd = 1.0f / sqrt(kiln::warp_sum(sq) / (float)R + (float)(", cat(std::setprecision(17), epsilon), "));\n",
        loop, " { const float v_r = (v[i] - mean) * rstd;\n",
        "            kiln::store(y[ybase + r], ", affine, "); } }\n",
        "    }\n}\n");
    return {"kiln_row_norm", code, where};
}

// Normalises lanes: y = (x - mean) * rstd, then times/plus the affine inputs. `reduced`: the
// lane's dims; `center` false gives RMS normalisation (no mean). Affine inputs are indexed by the
// reduced coordinate (layer norm, RMS norm: broadcast to the reduced dims) or, with `per_channel`,
// by dim 1 of the lane (instance norm: one value per channel).
void lower_normalize(lowering_context& ctx, const instruction& ins, const std::vector<std::size_t>& red, bool center,
                     bool per_channel, double epsilon) {
    const shape& x = ins.inputs().at(0)->get_shape();
    const shape& y = ins.get_shape();
    lane_split s = split(x.lens().size(), red);
    std::vector<std::size_t> rl;
    for (auto d : red) rl.push_back(x.lens()[d]);
    std::vector<std::size_t> all(rl.size());
    std::iota(all.begin(), all.end(), 0);
    std::string acc = acc_type(x.type());
    std::string params = cat(device_type(y.type()), "* __restrict__ y, const ", device_type(x.type()), "* __restrict__ x");
    std::vector<void*> ptrs{ctx.address(ins), ctx.address(*ins.inputs()[0])};
    // The normalised value (named `v`) times the scale, plus the bias.
    auto affine_of = [&](std::string v) {
        for (std::size_t i = 1; i < ins.inputs().size(); ++i) {
            const shape& p = ins.inputs()[i]->get_shape();
            std::string at = per_channel
                                 ? cat("kiln::load(p", i, "[(lane % ", x.lens()[1], "ull) * ", p.strides().back(), "ull])")
                                 : cat("kiln::load(p", i, "[", layout_of(broadcast_lane(p, rl), all), ".offset(r)])");
            v = i == 1 ? cat("(", v, ") * ", at) : cat("(", v, ") + ", at);
        }
        return v;
    };
    for (std::size_t i = 1; i < ins.inputs().size(); ++i) {
        params += cat(", const ", device_type(ins.inputs()[i]->get_shape().type()), "* __restrict__ p", i);
        ptrs.push_back(ctx.address(*ins.inputs()[i]));
    }
    std::string affine = affine_of("v");
    if (!per_channel && row_normalizable(x, y, s, acc)) {
        std::size_t lanes = product(x, s.kept);
        ctx.add_kernel(ins, row_norm_kernel(params, x, y, s, center, epsilon, affine_of("v_r"), ctx.where(ins)),
                       {static_cast<unsigned>(std::clamp<std::size_t>((lanes + 7) / 8, 1, 1u << 20)), 256}, std::move(ptrs));
        return;
    }
    std::string mean = center ? cat("kiln::block_reduce(sum, [](", acc, " a, ", acc, " b) { return a + b; }, (", acc,
                                    ")0, smem) / (", acc, ")R")
                              : "(" + acc + ")0";
    std::string body = cat(
        "        ", acc, " sum = 0;\n",
        center ? cat("        for (kiln::index_t r = threadIdx.x; r < R; r += blockDim.x) sum += (", acc, ")kiln::load(x[base + Lr.offset(r)]);\n") : "",
        "        const ", acc, " mean = ", mean, ";\n",
        "        ", acc, " sq = 0;\n",
        "        for (kiln::index_t r = threadIdx.x; r < R; r += blockDim.x) { const ", acc, " d = (", acc, ")kiln::load(x[base + Lr.offset(r)]) - mean; sq += d * d; }\n",
        "        const ", acc, " var = kiln::block_reduce(sq, [](", acc, " a, ", acc, " b) { return a + b; }, (", acc, ")0, smem) / (", acc, ")R;\n",
        "        const ", acc, " rstd = (", acc, ")1 / sqrt(var + (", acc, ")(", cat(std::setprecision(17), epsilon), "));\n",
        "        for (kiln::index_t r = threadIdx.x; r < R; r += blockDim.x) { const ", acc, " v = ((", acc, ")kiln::load(x[base + Lr.offset(r)]) - mean) * rstd;\n",
        "            kiln::store(y[ybase + Yr.offset(r)], ", affine, "); }\n");
    ctx.add_kernel(ins, lane_kernel(params, acc, x, y, s, s, body, ctx.where(ins)), lane_launch(product(x, s.kept)),
                   std::move(ptrs));
}

std::vector<std::size_t> dims_from(std::size_t from, std::size_t ndim) {
    std::vector<std::size_t> r;
    for (std::size_t d = from; d < ndim; ++d) r.push_back(d);
    return r;
}

void lower_layernorm(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::layernorm>();
    std::size_t n = ins.inputs()[0]->get_shape().lens().size();
    lower_normalize(ctx, ins, dims_from(norm_axis(op.axis, n), n), true, false, op.epsilon);
}

void lower_rms_norm(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::rms_norm>();
    std::size_t n = ins.inputs()[0]->get_shape().lens().size();
    lower_normalize(ctx, ins, dims_from(norm_axis(op.axis, n), n), false, false, op.epsilon);
}

void lower_instancenorm(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::instancenorm>();
    std::size_t n = ins.inputs()[0]->get_shape().lens().size();
    lower_normalize(ctx, ins, dims_from(2, n), true, true, op.epsilon);
}

// Batch norm with given statistics is pointwise per channel (dim 1).
void lower_batch_norm(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::batch_norm_inference>();
    const shape& x = ins.inputs()[0]->get_shape();
    elementwise_spec spec;
    spec.output = ins.get_shape();
    spec.inputs.push_back(x);
    std::vector<void*> ptrs{ctx.address(ins), ctx.address(*ins.inputs()[0])};
    for (std::size_t i = 1; i < ins.inputs().size(); ++i) {
        const shape& p = ins.inputs()[i]->get_shape();
        std::vector<std::size_t> st(x.lens().size(), 0);
        st[1] = p.strides().back();
        spec.inputs.push_back(shape(p.type(), x.lens(), st));
        ptrs.push_back(ctx.address(*ins.inputs()[i]));
    }
    spec.body = cat("const float y = (x0 - x3) / sqrt(x4 + ", cat(std::setprecision(9), op.epsilon), "f) * x1 + x2;");
    if (x.type() == dtype::float64)
        spec.body = cat("const double y = (x0 - x3) / sqrt(x4 + ", cat(std::setprecision(17), static_cast<double>(op.epsilon)), ") * x1 + x2;");
    ctx.add_kernel(ins, make_elementwise_kernel(spec, ctx.where(ins)), elementwise_launch(spec.output.elements()), std::move(ptrs));
}

const gpu_lowering_registrar reduce_lowering{{"reduction (generated lane kernel)", lane_reducible,
                                              [](lowering_context& ctx, const instruction& ins) { lower_reduce(ctx, ins); }}};
const gpu_lowering_registrar softmax_lowering{{
    "softmax (generated lane kernel)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::softmax>() || ins.get_operator().get_if<ops::logsoftmax>(); },
    [](lowering_context& ctx, const instruction& ins) {
        if (ins.get_operator().get_if<ops::softmax>()) lower_softmax<ops::softmax>(ctx, ins, false);
        else lower_softmax<ops::logsoftmax>(ctx, ins, true);
    }}};
const gpu_lowering_registrar layernorm_lowering{{
    "layer norm (generated lane kernel)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::layernorm>() != nullptr; },
    [](lowering_context& ctx, const instruction& ins) { lower_layernorm(ctx, ins); }}};
const gpu_lowering_registrar rms_norm_lowering{{
    "RMS norm (generated lane kernel)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::rms_norm>() != nullptr; },
    [](lowering_context& ctx, const instruction& ins) { lower_rms_norm(ctx, ins); }}};
const gpu_lowering_registrar instancenorm_lowering{{
    "instance norm (generated lane kernel)",
    [](const instruction& ins) {
        return ins.get_operator().get_if<ops::instancenorm>() != nullptr && ins.inputs()[0]->get_shape().lens().size() > 2;
    },
    [](lowering_context& ctx, const instruction& ins) { lower_instancenorm(ctx, ins); }}};
const gpu_lowering_registrar batch_norm_lowering{{
    "batch norm with given statistics (generated elementwise kernel)",
    [](const instruction& ins) {
        return ins.get_operator().get_if<ops::batch_norm_inference>() != nullptr && ins.inputs().size() == 5 &&
               ins.inputs()[0]->get_shape().lens().size() >= 2;
    },
    [](lowering_context& ctx, const instruction& ins) { lower_batch_norm(ctx, ins); }}};

}  // namespace
}  // namespace kiln::gpu
