// Generated lane kernels for the normalisations without an affine part: LpNormalization (x over
// its 1- or 2-norm along an axis; a zero vector stays zero) and MeanVarianceNormalization
// ((x - mean) / (sqrt(var) + 1e-9) over a list of axes). One block per lane, fp32 accumulation
// (double for float64), block reductions as the other lane kernels.
#include "core/error.hpp"
#include "ops/normalization.hpp"
#include "targets/gpu/body_kernel.hpp"
#include "targets/gpu/lane_util.hpp"

namespace kiln::gpu {
namespace {

// Adds the lane kernel over lanes `s` whose body is `body`; acc is its accumulator type.
void add_lane(lowering_context& ctx, const instruction& ins, const lane_split& s, const std::string& acc,
              const std::string& body) {
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& y = ins.get_shape();
    std::string params = cat(device_type(y.type()), "* __restrict__ y, const ", device_type(x.type()), "* __restrict__ x");
    ctx.add_kernel(ins, lane_kernel(params, acc, x, y, s, s, body, ctx.where(ins)), lane_launch(product(x, s.kept)),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0])});
}

std::string sum_over_lane(const std::string& acc, const std::string& term, const std::string& name) {
    return cat("        ", acc, " ", name, " = 0;\n",
               "        for (kiln::index_t r = threadIdx.x; r < R; r += blockDim.x) { const ", acc, " v = (", acc,
               ")kiln::load(x[base + Lr.offset(r)]); ", name, " += ", term, "; }\n",
               "        ", name, " = kiln::block_reduce(", name, ", [](", acc, " a, ", acc, " b) { return a + b; }, (", acc,
               ")0, smem);\n");
}

void lower_lp(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::lp_normalization>();
    const shape& x = ins.inputs()[0]->get_shape();
    std::size_t axis = static_cast<std::size_t>(op.axis < 0 ? op.axis + static_cast<std::int64_t>(x.ndim()) : op.axis);
    std::string acc = acc_type(x.type());
    std::string body = cat(sum_over_lane(acc, op.p == 1 ? "(v < 0 ? -v : v)" : "v * v", "norm"),
                           op.p == 2 ? "        norm = sqrt(norm);\n" : "",
                           "        for (kiln::index_t r = threadIdx.x; r < R; r += blockDim.x) {\n",
                           "            const ", acc, " v = (", acc, ")kiln::load(x[base + Lr.offset(r)]);\n",
                           "            kiln::store(y[ybase + Yr.offset(r)], norm == 0 ? (", acc, ")0 : v / norm);\n        }\n");
    add_lane(ctx, ins, split(x.ndim(), {axis}), acc, body);
}

void lower_mvn(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::mean_variance_normalization>();
    const shape& x = ins.inputs()[0]->get_shape();
    std::vector<std::size_t> axes;
    for (auto a : op.axes) axes.push_back(static_cast<std::size_t>(a < 0 ? a + static_cast<std::int64_t>(x.ndim()) : a));
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    std::string acc = acc_type(x.type());
    std::string body = cat(sum_over_lane(acc, "v", "sum"), "        const ", acc, " mean = sum / (", acc, ")R;\n",
                           sum_over_lane(acc, "(v - mean) * (v - mean)", "sq"),
                           "        const ", acc, " den = sqrt(sq / (", acc, ")R) + (", acc, ")1e-9;\n",
                           "        for (kiln::index_t r = threadIdx.x; r < R; r += blockDim.x) {\n",
                           "            const ", acc, " v = (", acc, ")kiln::load(x[base + Lr.offset(r)]);\n",
                           "            kiln::store(y[ybase + Yr.offset(r)], (v - mean) / den);\n        }\n");
    add_lane(ctx, ins, split(x.ndim(), axes), acc, body);
}

bool static_one(const instruction& ins) {
    return ins.inputs().size() == 1 && !ins.inputs()[0]->get_shape().dynamic() && ins.get_shape().standard();
}

const gpu_lowering_registrar lp_lowering{{
    "lp normalization (generated lane kernel)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::lp_normalization>() && static_one(ins); },
    lower_lp}};

const gpu_lowering_registrar mvn_lowering{{
    "mean variance normalization (generated lane kernel)",
    [](const instruction& ins) {
        return ins.get_operator().get_if<ops::mean_variance_normalization>() && static_one(ins);
    },
    lower_mvn}};

}  // namespace
}  // namespace kiln::gpu
