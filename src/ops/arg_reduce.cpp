// argmax and argmin (arg_reduce.hpp).
#include "ops/arg_reduce.hpp"

#include <cmath>

#include "ops/reduce_util.hpp"

namespace kiln::ops {

template <class Derived>
shape arg_reduce_op<Derived>::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    check_type(in, 0, numeric_type, "a numeric (integer or float) type");
    std::size_t a = normalize_axis(axis, in[0].ndim());
    auto dims = in[0].dims();
    if (dims[a].max == 0) fail("axis ", a, " has length 0: there is no element to select");
    std::size_t axes[] = {a};
    return {dtype::int64, reduced_dims(in[0], axes, keepdims)};
}

template <class Derived>
argument arg_reduce_op<Derived>::compute(const shape& out, std::span<const argument> args) const {
    const shape& xs = args[0].get_shape();
    std::size_t axes[] = {normalize_axis(axis, xs.ndim())};
    auto g = group_offsets(xs, axes);
    argument r(out);
    auto* y = r.as<std::int64_t>();
    visit_type(xs.type(), [&](auto t) {
        using T = decltype(t);
        using C = compute_t<T>;
        const T* x = args[0].as<T>();
        for (std::size_t k = 0; k < g.bases.size(); ++k) {
            std::size_t best = 0;
            C bv = cast<C>(x[g.bases[k]]);
            for (std::size_t i = 1; i < g.rel.size(); ++i) {
                C v = cast<C>(x[g.bases[k] + g.rel[i]]);
                if (replaces(v, bv)) {
                    best = i;
                    bv = v;
                }
            }
            y[k] = static_cast<std::int64_t>(best);
        }
    });
    return r;
}

template <class Derived>
template <class C>
bool arg_reduce_op<Derived>::replaces(C v, C bv) const {
    if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(bv)) return select_last_index && std::isnan(v);
        if (std::isnan(v)) return true;
    }
    if (v == bv) return select_last_index;
    return Derived::better(v, bv);
}

template struct arg_reduce_op<argmax>;
template struct arg_reduce_op<argmin>;
KILN_REGISTER_OP(argmax)
KILN_REGISTER_OP(argmin)

}  // namespace kiln::ops
