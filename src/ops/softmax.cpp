// softmax and logsoftmax along one axis (ONNX opset 13 semantics). Each lane subtracts its
// largest element before exp, so large inputs do not overflow; math in double, rounded once.
#include "ops/softmax.hpp"

#include <cmath>
#include <limits>

#include "ops/reduce_util.hpp"

namespace kiln::ops {
namespace {

// Shifts the lane by its maximum and returns sum(exp(lane)) after the shift.
double shift_and_sum_exp(std::vector<double>& lane) {
    double m = -std::numeric_limits<double>::infinity();
    for (double v : lane) m = std::max(m, v);
    double s = 0;
    for (double& v : lane) {
        v -= m;
        s += std::exp(v);
    }
    return s;
}

}  // namespace

template <class Derived>
shape softmax_op<Derived>::compute_shape(std::span<const shape> in) const {
    return along_axis_shape(in, axis, float_type, "a float type");
}

template <class Derived>
argument softmax_op<Derived>::compute(const shape& out, std::span<const argument> args) const {
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

void softmax::apply(std::vector<double>& lane) {
    double s = shift_and_sum_exp(lane);
    for (double& v : lane) v = std::exp(v) / s;
}
KILN_REGISTER_OP(softmax)

void logsoftmax::apply(std::vector<double>& lane) {
    double log_s = std::log(shift_and_sum_exp(lane));
    for (double& v : lane) v -= log_s;
}
KILN_REGISTER_OP(logsoftmax)

}  // namespace kiln::ops
