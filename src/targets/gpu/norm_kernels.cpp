// Generated lane kernels for LpNormalization (x over its 1- or 2-norm along an axis; a zero vector
// stays zero), MeanVarianceNormalization ((x - mean) / (sqrt(var) + 1e-9) over a list of axes)
// and GroupNormalization (statistics over each group of channels with their spatial dims, then
// per-channel scale and bias). One block per lane, fp32 accumulation (double for float64), block
// reductions as the other lane kernels.
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

// A lane is one (batch item, group): C / G channels times the spatial elements, read through
// x's strides; element r of the lane is channel g * C / G + r / inner at spatial index r % inner.
void lower_group_norm(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::group_norm>();
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& y = ins.get_shape();
    const shape& sc = ins.inputs()[1]->get_shape();
    const shape& bi = ins.inputs()[2]->get_shape();
    std::size_t n = x.lens()[0], c = x.lens()[1], g = static_cast<std::size_t>(op.num_groups), cg = c / g;
    std::vector<std::size_t> spatial;
    for (std::size_t d = 2; d < x.ndim(); ++d) spatial.push_back(d);
    std::size_t inner = product(x, spatial);
    std::string acc = acc_type(x.type());
    std::string at = cat("(kiln::i64)(lane / ", g, "ull) * ", x.strides()[0], "ll + (kiln::i64)((lane % ", g, "ull) * ", cg,
                         "ull + r / ", inner, "ull) * ", x.strides()[1], "ll + (kiln::i64)XS.offset(r % ", inner, "ull)");
    std::string yat = cat("(kiln::i64)(lane / ", g, "ull) * ", y.strides()[0], "ll + (kiln::i64)((lane % ", g, "ull) * ", cg,
                          "ull + r / ", inner, "ull) * ", y.strides()[1], "ll + (kiln::i64)YS.offset(r % ", inner, "ull)");
    std::string ch = cat("((lane % ", g, "ull) * ", cg, "ull + r / ", inner, "ull)");
    std::string loop = "        for (kiln::index_t r = threadIdx.x; r < R; r += blockDim.x)";
    std::string add = cat("[](", acc, " a, ", acc, " b) { return a + b; }");
    std::string code = cat(
        "#include \"kiln_lane.cuh\"\n",
        "extern \"C\" __global__ void __launch_bounds__(256) kiln_group_norm(", device_type(y.type()), "* __restrict__ y, const ",
        device_type(x.type()), "* __restrict__ x, const ", device_type(sc.type()), "* __restrict__ scale, const ",
        device_type(bi.type()), "* __restrict__ bias) {\n",
        "    __shared__ ", acc, " smem[32];\n",
        "    constexpr auto XS = ", layout_of(x, spatial), ";\n",
        "    constexpr auto YS = ", layout_of(y, spatial), ";\n",
        "    constexpr kiln::index_t R = ", cg * inner, "ull;\n",
        "    for (kiln::index_t lane = blockIdx.x; lane < ", n * g, "ull; lane += gridDim.x) {\n",
        "        ", acc, " sum = 0;\n", loop, " sum += (", acc, ")kiln::load(x[", at, "]);\n",
        "        const ", acc, " mean = kiln::block_reduce(sum, ", add, ", (", acc, ")0, smem) / (", acc, ")R;\n",
        "        ", acc, " sq = 0;\n", loop, " { const ", acc, " d = (", acc, ")kiln::load(x[", at, "]) - mean; sq += d * d; }\n",
        "        const ", acc, " var = kiln::block_reduce(sq, ", add, ", (", acc, ")0, smem) / (", acc, ")R;\n",
        "        const ", acc, " inv = (", acc, ")1 / sqrt(var + (", acc, ")", double_literal(op.epsilon), ");\n",
        loop, " {\n",
        "            const ", acc, " v = ((", acc, ")kiln::load(x[", at, "]) - mean) * inv;\n",
        "            kiln::store(y[", yat, "], v * (", acc, ")kiln::load(scale[", ch, " * ", sc.strides()[0], "ull]) + (", acc,
        ")kiln::load(bias[", ch, " * ", bi.strides()[0], "ull]));\n",
        "        }\n    }\n}\n");
    ctx.add_kernel(ins, {"kiln_group_norm", code, ctx.where(ins)}, lane_launch(n * g),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0]), ctx.address(*ins.inputs()[1]), ctx.address(*ins.inputs()[2])});
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

const gpu_lowering_registrar group_norm_lowering{{
    "group norm (generated lane kernel)",
    [](const instruction& ins) {
        if (!ins.get_operator().get_if<ops::group_norm>() || ins.inputs().size() != 3 || !ins.get_shape().standard())
            return false;
        for (auto i : ins.inputs())
            if (i->get_shape().dynamic()) return false;
        const shape& x = ins.inputs()[0]->get_shape();
        auto g = ins.get_operator().get<ops::group_norm>().num_groups;
        return x.ndim() >= 2 && g > 0 && x.lens()[1] % static_cast<std::size_t>(g) == 0 &&
               ins.inputs()[1]->get_shape().ndim() == 1 && ins.inputs()[2]->get_shape().ndim() == 1;
    },
    lower_group_norm}};

}  // namespace
}  // namespace kiln::gpu
