// softmax and logsoftmax along one axis (ONNX opset 13 semantics). Each lane subtracts its
// largest element before exp, so large inputs do not overflow; math in double, rounded once.
#include <cmath>
#include <limits>

#include "ops/reduce_util.hpp"

namespace kiln::ops {
namespace {

template <class Derived>
struct softmax_op {
    std::int64_t axis = -1;
    auto attributes() { return fields(field("axis", axis)); }

    shape compute_shape(std::span<const shape> in) const { return along_axis_shape(in, axis, float_type, "a float type"); }

    argument compute(const shape& out, std::span<const argument> args) const {
        const shape& xs = args[0].get_shape();
        std::size_t axes[] = {normalize_axis(axis, xs.ndim())};
        auto gx = group_offsets(xs, axes);
        auto gy = group_offsets(out, axes);
        argument r(out);
        std::vector<double> lane(gx.rel.size());
        visit_type(xs.type(), [&](auto t) {
            using T = decltype(t);
            if constexpr (is_float_v<T>) {
                const T* x = args[0].as<T>();
                T* y = r.as<T>();
                for (std::size_t k = 0; k < gx.bases.size(); ++k) {
                    for (std::size_t i = 0; i < lane.size(); ++i) lane[i] = cast<double>(x[gx.bases[k] + gx.rel[i]]);
                    Derived::apply(lane);
                    for (std::size_t i = 0; i < lane.size(); ++i) y[gy.bases[k] + gy.rel[i]] = cast<T>(lane[i]);
                }
            } else {
                fail(Derived::name, ": no compute for ", dtype_name(xs.type()));
            }
        });
        return r;
    }

    // Shifts the lane by its maximum and returns sum(exp(lane)) after the shift.
    static double shift_and_sum_exp(std::vector<double>& lane) {
        double m = -std::numeric_limits<double>::infinity();
        for (double v : lane) m = std::max(m, v);
        double s = 0;
        for (double& v : lane) {
            v -= m;
            s += std::exp(v);
        }
        return s;
    }
};

struct softmax : softmax_op<softmax> {
    static constexpr std::string_view name = "softmax";
    static void apply(std::vector<double>& lane) {
        double s = shift_and_sum_exp(lane);
        for (double& v : lane) v = std::exp(v) / s;
    }
};
KILN_REGISTER_OP(softmax)

struct logsoftmax : softmax_op<logsoftmax> {
    static constexpr std::string_view name = "logsoftmax";
    static void apply(std::vector<double>& lane) {
        double log_s = std::log(shift_and_sum_exp(lane));
        for (double& v : lane) v -= log_s;
    }
};
KILN_REGISTER_OP(logsoftmax)

}  // namespace
}  // namespace kiln::ops
