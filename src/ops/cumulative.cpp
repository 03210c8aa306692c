// Running sums and products along one axis (ONNX CumSum, CumProd; the axis, a tensor input in
// ONNX, is an attribute here). exclusive: each output leaves out its own element; reverse: the
// run goes from the end. Floats accumulate in double and each output is rounded once; integers
// accumulate in 64 bits and wrap to the element type, as the operation in that type would.
#include <cstdint>

#include "ops/reduce_util.hpp"

namespace kiln::ops {
namespace {

// Integer arithmetic modulo 2^64 through unsigned types: signed overflow would be undefined.
template <class C, class F>
C wrapping(C a, C b, F f) {
    if constexpr (std::is_integral_v<C>)
        return static_cast<C>(f(static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(b)));
    else
        return f(a, b);
}

// Derived supplies `name`, `identity` and `combine(acc, v)`.
template <class Derived>
struct cumulative_op {
    std::int64_t axis = 0;
    bool exclusive = false;
    bool reverse = false;
    auto attributes() { return fields(field("axis", axis), field("exclusive", exclusive), field("reverse", reverse)); }
    op_traits traits() const { return {.precision_sensitive = true}; }

    shape compute_shape(std::span<const shape> in) const { return along_axis_shape(in, axis, numeric_type, "a numeric (integer or float) type"); }

    argument compute(const shape& out, std::span<const argument> args) const {
        const shape& xs = args[0].get_shape();
        std::size_t axes[] = {normalize_axis(axis, xs.ndim())};
        auto gx = group_offsets(xs, axes);
        auto gy = group_offsets(out, axes);
        argument r(out);
        std::size_t n = gx.rel.size();
        visit_type(xs.type(), [&](auto t) {
            using T = decltype(t);
            using C = compute_t<T>;
            const T* x = args[0].as<T>();
            T* y = r.as<T>();
            for (std::size_t k = 0; k < gx.bases.size(); ++k) {
                C acc = Derived::identity;
                for (std::size_t j = 0; j < n; ++j) {
                    std::size_t i = reverse ? n - 1 - j : j;
                    C v = cast<C>(x[gx.bases[k] + gx.rel[i]]);
                    if (!exclusive) acc = Derived::combine(acc, v);
                    y[gy.bases[k] + gy.rel[i]] = cast<T>(acc);
                    if (exclusive) acc = Derived::combine(acc, v);
                }
            }
        });
        return r;
    }
};

struct cumsum : cumulative_op<cumsum> {
    static constexpr std::string_view name = "cumsum";
    static constexpr int identity = 0;
    template <class C> static C combine(C a, C b) { return wrapping(a, b, [](auto p, auto q) { return p + q; }); }
};
KILN_REGISTER_OP(cumsum)

struct cumprod : cumulative_op<cumprod> {
    static constexpr std::string_view name = "cumprod";
    static constexpr int identity = 1;
    template <class C> static C combine(C a, C b) { return wrapping(a, b, [](auto p, auto q) { return p * q; }); }
};
KILN_REGISTER_OP(cumprod)

}  // namespace
}  // namespace kiln::ops
