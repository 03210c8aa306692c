// cumsum and cumprod (cumulative.hpp). Floats accumulate in double and each output is rounded
// once; integers accumulate in 64 bits and wrap to the element type, as the operation in that
// type would.
#include "ops/cumulative.hpp"

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

}  // namespace

template <class Derived>
shape cumulative_op<Derived>::compute_shape(std::span<const shape> in) const {
    return along_axis_shape(in, axis, numeric_type, "a numeric (integer or float) type");
}

template <class Derived>
argument cumulative_op<Derived>::compute(const shape& out, std::span<const argument> args) const {
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

template <class C> C cumsum::combine(C a, C b) { return wrapping(a, b, [](auto p, auto q) { return p + q; }); }
template <class C> C cumprod::combine(C a, C b) { return wrapping(a, b, [](auto p, auto q) { return p * q; }); }

template struct cumulative_op<cumsum>;
template struct cumulative_op<cumprod>;
KILN_REGISTER_OP(cumsum)
KILN_REGISTER_OP(cumprod)

}  // namespace kiln::ops
