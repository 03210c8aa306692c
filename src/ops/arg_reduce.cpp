// argmax and argmin along one axis (ONNX ArgMax/ArgMin opset 13): int64 indices of the first
// extreme element, or the last with select_last_index. NaN counts as the extreme, as in numpy.
#include <cmath>

#include "ops/reduce_util.hpp"

namespace kiln::ops {
namespace {

template <class Derived>
struct arg_reduce_op {
    std::int64_t axis = 0;
    bool keepdims = true;
    bool select_last_index = false;
    auto attributes() {
        return fields(field("axis", axis), field("keepdims", keepdims), field("select_last_index", select_last_index));
    }
    op_traits traits() const { return {.reduction = true}; }

    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1);
        check_type(in, 0, numeric_type, "a numeric (integer or float) type");
        std::size_t a = normalize_axis(axis, in[0].ndim());
        auto dims = in[0].dims();
        if (dims[a].max == 0) fail("axis ", a, " has length 0: there is no element to select");
        std::size_t axes[] = {a};
        return {dtype::int64, reduced_dims(in[0], axes, keepdims)};
    }

    argument compute(const shape& out, std::span<const argument> args) const {
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

    // Whether v, met after the current best bv, becomes the new best.
    template <class C> bool replaces(C v, C bv) const {
        if constexpr (std::is_floating_point_v<C>) {
            if (std::isnan(bv)) return select_last_index && std::isnan(v);
            if (std::isnan(v)) return true;
        }
        if (v == bv) return select_last_index;
        return Derived::better(v, bv);
    }
};

struct argmax : arg_reduce_op<argmax> {
    static constexpr std::string_view name = "argmax";
    template <class C> static bool better(C v, C best) { return v > best; }
};
KILN_REGISTER_OP(argmax)

struct argmin : arg_reduce_op<argmin> {
    static constexpr std::string_view name = "argmin";
    template <class C> static bool better(C v, C best) { return v < best; }
};
KILN_REGISTER_OP(argmin)

}  // namespace
}  // namespace kiln::ops
