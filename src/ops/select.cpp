// Three-input elementwise ops with numpy broadcasting of all three inputs: where and clip.
#include <cmath>
#include <limits>

#include "ops/select.hpp"

namespace kiln::ops {
namespace {

// Calls f(i, offset0, offset1, offset2) for every output element i, with each input's element
// offset after broadcasting it to the output's lens.
template <class F>
void for_each_of_three(const shape& out, std::span<const argument> args, F&& f) {
    shape s0 = broadcast_to(args[0].get_shape(), out.lens());
    shape s1 = broadcast_to(args[1].get_shape(), out.lens());
    shape s2 = broadcast_to(args[2].get_shape(), out.lens());
    for (std::size_t i = 0; i < out.elements(); ++i) f(i, s0.index(i), s1.index(i), s2.index(i));
}

// min(max(x, lo), hi), NaN-propagating like numpy.clip: a NaN x, lo or hi gives NaN.
template <class C>
C clamp(C x, C lo, C hi) {
    if constexpr (std::is_floating_point_v<C>)
        if (std::isnan(x) || std::isnan(lo) || std::isnan(hi)) return std::numeric_limits<C>::quiet_NaN();
    C y = x < lo ? lo : x;
    return y > hi ? hi : y;
}

}  // namespace

shape where::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 3);
    check_type(in, 0, bool_type, "bool (the condition)");
    if (in[2].type() != in[1].type())
        fail("input 2 is ", dtype_name(in[2].type()), " but input 1 is ", dtype_name(in[1].type()),
             "; the two choices must have the same type");
    return pointwise_shape(in, in[1].type());
}

argument where::compute(const shape& out, std::span<const argument> args) const {
    argument r(out);
    visit_type(out.type(), [&](auto t) {
        using T = decltype(t);
        const bool* cond = args[0].as<bool>();
        const T* a = args[1].as<T>();
        const T* b = args[2].as<T>();
        T* y = r.as<T>();
        for_each_of_three(out, args, [&](std::size_t i, std::size_t c, std::size_t ia, std::size_t ib) {
            y[i] = cond[c] ? a[ia] : b[ib];
        });
    });
    return r;
}
KILN_REGISTER_OP(where)

shape clip::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 3);
    check_same_type(in);
    check_type(in, 0, numeric_type, describe_types(numeric_type));
    return pointwise_shape(in, in[0].type());
}

argument clip::compute(const shape& out, std::span<const argument> args) const {
    argument r(out);
    visit_type(out.type(), [&](auto t) {
        using T = decltype(t);
        using C = compute_t<T>;
        const T* x = args[0].as<T>();
        const T* lo = args[1].as<T>();
        const T* hi = args[2].as<T>();
        T* y = r.as<T>();
        for_each_of_three(out, args, [&](std::size_t i, std::size_t ix, std::size_t il, std::size_t ih) {
            y[i] = cast<T>(clamp(cast<C>(x[ix]), cast<C>(lo[il]), cast<C>(hi[ih])));
        });
    });
    return r;
}
KILN_REGISTER_OP(clip)

}  // namespace kiln::ops
