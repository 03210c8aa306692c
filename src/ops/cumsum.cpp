// cumsum along one axis (ONNX CumSum; the axis, a tensor input in ONNX, is an attribute here).
// exclusive: each output leaves out its own element; reverse: sums run from the end.
// Floats accumulate in double and integers in 64 bits; each output is rounded once.
#include "ops/reduce_util.hpp"

namespace kiln::ops {
namespace {

struct cumsum {
    static constexpr std::string_view name = "cumsum";
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
                C acc = 0;
                for (std::size_t j = 0; j < n; ++j) {
                    std::size_t i = reverse ? n - 1 - j : j;
                    C v = cast<C>(x[gx.bases[k] + gx.rel[i]]);
                    if (!exclusive) acc += v;
                    y[gy.bases[k] + gy.rel[i]] = cast<T>(acc);
                    if (exclusive) acc += v;
                }
            }
        });
        return r;
    }
};
KILN_REGISTER_OP(cumsum)

}  // namespace
}  // namespace kiln::ops
