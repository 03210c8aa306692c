// cumprod along one axis (ONNX CumProd; the axis, a tensor input in ONNX, is an attribute here).
// exclusive: each output leaves out its own element (the first is 1); reverse: products run from
// the end. Floats multiply in double and each output is rounded once; integers multiply in 64
// bits and wrap to the element type, as products in that type would.
#include <cstdint>

#include "ops/reduce_util.hpp"

namespace kiln::ops {
namespace {

// a * b of integers modulo 2^64 (unsigned arithmetic: a signed overflow would be undefined).
template <class C>
C times(C a, C b) {
    if constexpr (std::is_integral_v<C>)
        return static_cast<C>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
    else
        return a * b;
}

struct cumprod {
    static constexpr std::string_view name = "cumprod";
    std::int64_t axis = 0;
    bool exclusive = false;
    bool reverse = false;
    auto attributes() { return fields(field("axis", axis), field("exclusive", exclusive), field("reverse", reverse)); }

    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1);
        check_type(in, 0, numeric_type, "a numeric (integer or float) type");
        normalize_axis(axis, in[0].ndim());
        return {in[0].type(), in[0].dims()};
    }

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
                C acc = 1;
                for (std::size_t j = 0; j < n; ++j) {
                    std::size_t i = reverse ? n - 1 - j : j;
                    C v = cast<C>(x[gx.bases[k] + gx.rel[i]]);
                    if (!exclusive) acc = times(acc, v);
                    y[gy.bases[k] + gy.rel[i]] = cast<T>(acc);
                    if (exclusive) acc = times(acc, v);
                }
            }
        });
        return r;
    }
};
KILN_REGISTER_OP(cumprod)

}  // namespace
}  // namespace kiln::ops
