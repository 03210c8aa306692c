#include "targets/gpu/lane_util.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "ops/reduce.hpp"

namespace kiln::gpu {
namespace {

std::string list(const std::vector<std::size_t>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]) + "ull";
    return s.empty() ? "1ull" : s;
}

}  // namespace

std::string layout_of(const shape& s, const std::vector<std::size_t>& axes) {
    std::vector<std::size_t> l, st;
    for (auto a : axes) l.push_back(s.lens()[a]), st.push_back(s.strides()[a]);
    if (l.empty()) l.push_back(1), st.push_back(0);
    return cat("kiln::layout<", l.size(), ">{{", list(l), "}, {", list(st), "}}");
}

std::string layout_of_all(const shape& s) {
    std::vector<std::size_t> axes(s.ndim());
    for (std::size_t d = 0; d < axes.size(); ++d) axes[d] = d;
    return layout_of(s, axes);
}

std::size_t product(const shape& s, const std::vector<std::size_t>& axes) {
    std::size_t n = 1;
    for (auto a : axes) n *= s.lens()[a];
    return n;
}

std::string acc_type(dtype t) {
    if (t == dtype::bool_) return "int";   // warp shuffles take no bool
    return t == dtype::float64 ? "double" : is_float(t) ? "float" : compute_type(t);
}

bool lane_reducible(const instruction& ins) {
    const auto& op = ins.get_operator();
    if (!op.traits().reduction || ins.inputs().size() != 1 || !kind_of(op, dtype::float32)) return false;
    const shape& x = ins.inputs()[0]->get_shape();
    if (x.type() == dtype::bool_) return op.get_if<ops::reduce_max>() || op.get_if<ops::reduce_min>();
    // ref fails on the mean of an empty set of integers; a kernel would divide by zero.
    bool empty_set = product(x, reduced_axes_of(op, x.ndim())) == 0;
    return is_float(x.type()) || !(op.get_if<ops::reduce_mean>() && empty_set);
}

lane_split split(std::size_t ndim, const std::vector<std::size_t>& reduced) {
    lane_split r{{}, reduced};
    for (std::size_t d = 0; d < ndim; ++d)
        if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) r.kept.push_back(d);
    return r;
}

kernel_source lane_kernel(const std::string& params, const std::string& acc, const shape& x, const shape& y,
                          const lane_split& sx, const lane_split& sy, const std::string& body, const std::string& where) {
    std::size_t lanes = product(x, sx.kept);
    std::string code = cat("#include \"kiln_lane.cuh\"\n#include \"scalar_helpers.h\"\n",
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_lane(", params, ") {\n",
                           "    __shared__ ", acc, " smem[32];\n",
                           "    constexpr auto Lk = ", layout_of(x, sx.kept), ";\n",
                           "    constexpr auto Lr = ", layout_of(x, sx.reduced), ";\n",
                           "    constexpr auto Yk = ", layout_of(y, sy.kept), ";\n",
                           "    constexpr auto Yr = ", layout_of(y, sy.reduced), ";\n",
                           "    constexpr kiln::index_t R = ", product(x, sx.reduced), "ull;\n",
                           "    for (kiln::index_t lane = blockIdx.x; lane < ", lanes, "ull; lane += gridDim.x) {\n",
                           "        const kiln::index_t base = Lk.offset(lane), ybase = Yk.offset(lane);\n",
                           "        (void)ybase; (void)Yr; (void)R;\n", body, "    }\n}\n");
    return {"kiln_lane", code, where};
}

launch_dims lane_launch(std::size_t lanes) { return {static_cast<unsigned>(std::clamp<std::size_t>(lanes, 1, 1u << 20)), 256}; }

std::optional<reduce_kind> kind_of(const operation& op, dtype t) {
    std::string acc = acc_type(t);
    // The identities of max and min: -inf/+inf for floats, the element type's limits otherwise
    // (as ref: the max of an empty set of int32 is INT32_MIN, not INT64_MIN wrapped).
    std::string lowest = "kiln::neg_inf_f()", highest = "(-kiln::neg_inf_f())";
    if (t == dtype::float64) lowest = "(-1.0/0.0)", highest = "(1.0/0.0)";
    else if (t == dtype::bool_) lowest = "0", highest = "1";   // max is any, min is all
    else if (!is_float(t) && is_signed(t)) {
        std::uint64_t max = (1ull << (dtype_bits(t) - 1)) - 1;
        lowest = cat("(-", max, "ll - 1)"), highest = cat(max, "ll");
    } else if (!is_float(t)) {
        lowest = "0ull", highest = cat(~0ull >> (64 - dtype_bits(t)), "ull");
    }
    bool integral = acc != "float" && acc != "double";
    std::string add = "a + b";
    if (op.get_if<ops::reduce_sum>()) return reduce_kind{"0", "v", add, "acc"};
    if (op.get_if<ops::reduce_mean>()) return reduce_kind{"0", "v", add, cat("acc / (", acc, ")R")};
    if (op.get_if<ops::reduce_prod>()) return reduce_kind{"1", "v", "a * b", "acc"};
    if (op.get_if<ops::reduce_max>()) return reduce_kind{lowest, "v", "kiln::max_nan(a, b)", "acc"};
    if (op.get_if<ops::reduce_min>()) return reduce_kind{highest, "v", "kiln::min_nan(a, b)", "acc"};
    if (op.get_if<ops::reduce_l1>()) return reduce_kind{"0", "(v < 0 ? -v : v)", add, "acc"};
    if (op.get_if<ops::reduce_l2>()) return reduce_kind{"0", "v * v", add, integral ? cat("(", acc, ")sqrt((double)acc)") : "sqrt(acc)"};
    if (op.get_if<ops::reduce_sum_square>()) return reduce_kind{"0", "v * v", add, "acc"};
    if (op.get_if<ops::reduce_log_sum>()) return reduce_kind{"0", "v", add, "log(acc)"};
    if (op.get_if<ops::reduce_log_sum_exp>()) return reduce_kind{"0", "exp(v)", add, "log(acc)"};
    return std::nullopt;
}

namespace {
// Calls f with the typed reduce op `op` holds (none: f is not called).
template <class F>
void visit_reduce(const operation& op, F f) {
    if (auto* p = op.get_if<ops::reduce_sum>()) f(*p);
    else if (auto* p = op.get_if<ops::reduce_mean>()) f(*p);
    else if (auto* p = op.get_if<ops::reduce_prod>()) f(*p);
    else if (auto* p = op.get_if<ops::reduce_max>()) f(*p);
    else if (auto* p = op.get_if<ops::reduce_min>()) f(*p);
    else if (auto* p = op.get_if<ops::reduce_l1>()) f(*p);
    else if (auto* p = op.get_if<ops::reduce_l2>()) f(*p);
    else if (auto* p = op.get_if<ops::reduce_sum_square>()) f(*p);
    else if (auto* p = op.get_if<ops::reduce_log_sum>()) f(*p);
    else if (auto* p = op.get_if<ops::reduce_log_sum_exp>()) f(*p);
}
}  // namespace

std::vector<std::size_t> reduced_axes_of(const operation& op, std::size_t ndim) {
    std::vector<std::size_t> r;
    visit_reduce(op, [&](const auto& o) { r = o.reduced_axes(ndim); });
    return r;
}

bool reduce_is_noop(const operation& op) {
    bool r = false;
    visit_reduce(op, [&](const auto& o) { r = o.noop(); });
    return r;
}

}  // namespace kiln::gpu
