// Reductions over a list of axes with ONNX Reduce* (opset 18) semantics. Empty `axes` reduce
// every dim, or with noop_with_empty_axes return the input unchanged, as the spec says (onnx's
// reference evaluator instead keeps the elementwise part: x^2 for sum_square). Reducing an empty set
// gives the reduction's identity: 0 for sums, 1 for prod, -inf (integers: the type's lowest) for
// max, +inf (the type's highest) for min, -inf for log_sum and log_sum_exp. Floats accumulate
// in double and integers in 64 bits, rounded once to the element type.
#include "ops/reduce.hpp"

#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

#include "ops/reduce_util.hpp"

namespace kiln::ops {
namespace {

const char* accepted_types(bool (*pred)(dtype)) {
    return pred == numeric_or_bool ? "a numeric or bool type" : describe_types(pred);
}

template <class C> bool is_nan(C x) {
    if constexpr (std::is_floating_point_v<C>) return std::isnan(x);
    else return false;
}

// The identities of max and min in T's compute type: -inf/+inf for floats, else T's limits.
template <class T> compute_t<T> lowest() {
    if constexpr (is_float_v<T>) return -std::numeric_limits<double>::infinity();
    else return std::numeric_limits<T>::lowest();
}
template <class T> compute_t<T> highest() {
    if constexpr (is_float_v<T>) return std::numeric_limits<double>::infinity();
    else return std::numeric_limits<T>::max();
}

template <class C> C sum_of(std::span<const C> v) { return std::accumulate(v.begin(), v.end(), C{0}); }
template <class C> C sum_of_squares(std::span<const C> v) {
    C s = 0;
    for (auto x : v) s += x * x;
    return s;
}
template <class C> C max_of(std::span<const C> v, C init) {
    for (auto x : v)
        if (is_nan(x) || x > init) init = x;   // NaN propagates: nothing compares above it
    return init;
}

}  // namespace

bool numeric_or_bool(dtype t) { return numeric_type(t) || t == dtype::bool_; }

template <class Derived, bool (*Accepts)(dtype)>
std::vector<std::size_t> reduce_op<Derived, Accepts>::reduced_axes(std::size_t ndim) const {
    if (!axes.empty()) return normalize_axes(axes, ndim);
    std::vector<std::size_t> all(ndim);
    std::iota(all.begin(), all.end(), std::size_t{0});
    return all;
}

template <class Derived, bool (*Accepts)(dtype)>
shape reduce_op<Derived, Accepts>::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    check_type(in, 0, Accepts, accepted_types(Accepts));
    if (noop()) return {in[0].type(), in[0].dims()};
    return {in[0].type(), reduced_dims(in[0], reduced_axes(in[0].ndim()), keepdims)};
}

template <class Derived, bool (*Accepts)(dtype)>
argument reduce_op<Derived, Accepts>::compute(const shape& out, std::span<const argument> args) const {
    if (noop()) return args[0].copy();
    const shape& xs = args[0].get_shape();
    auto g = group_offsets(xs, reduced_axes(xs.ndim()));
    argument r(out);
    visit_type(xs.type(), [&](auto t) {
        using T = decltype(t);
        using C = compute_t<T>;
        const auto& self = static_cast<const Derived&>(*this);
        if constexpr (requires(std::span<const C> v) { self.template reduce<T>(v); }) {
            const T* x = args[0].as<T>();
            T* y = r.as<T>();
            auto v = std::make_unique<C[]>(g.rel.size());   // not std::vector: C may be bool
            for (std::size_t k = 0; k < g.bases.size(); ++k) {
                for (std::size_t i = 0; i < g.rel.size(); ++i) v[i] = cast<C>(x[g.bases[k] + g.rel[i]]);
                y[k] = cast<T>(self.template reduce<T>(std::span<const C>(v.get(), g.rel.size())));
            }
        } else {
            fail(Derived::name, ": no compute for ", dtype_name(xs.type()));
        }
    });
    return r;
}

template <numeric_elem T> compute_t<T> reduce_sum::reduce(std::span<const compute_t<T>> v) const { return sum_of(v); }
KILN_REGISTER_OP(reduce_sum)

template <numeric_elem T> compute_t<T> reduce_mean::reduce(std::span<const compute_t<T>> v) const {
    using C = compute_t<T>;
    // Floats give NaN (0/0) for an empty set; integers have no such value.
    if constexpr (std::is_integral_v<C>)
        if (v.empty()) fail(name, ": mean of an empty set of integers");
    return sum_of(v) / static_cast<C>(v.size());
}
KILN_REGISTER_OP(reduce_mean)

template <numeric_elem T> compute_t<T> reduce_prod::reduce(std::span<const compute_t<T>> v) const {
    compute_t<T> p = 1;
    for (auto x : v) p *= x;
    return p;
}
KILN_REGISTER_OP(reduce_prod)

template <class T>
compute_t<T> reduce_max::reduce(std::span<const compute_t<T>> v) const {
    return max_of(v, lowest<T>());
}
KILN_REGISTER_OP(reduce_max)

template <class T> compute_t<T> reduce_min::reduce(std::span<const compute_t<T>> v) const {
    auto m = highest<T>();
    for (auto x : v)
        if (is_nan(x) || x < m) m = x;
    return m;
}
KILN_REGISTER_OP(reduce_min)

template <numeric_elem T> compute_t<T> reduce_l1::reduce(std::span<const compute_t<T>> v) const {
    compute_t<T> s = 0;
    for (auto x : v) {
        if constexpr (std::is_unsigned_v<compute_t<T>>) s += x;
        else s += x < 0 ? -x : x;
    }
    return s;
}
KILN_REGISTER_OP(reduce_l1)

// Integer inputs: the square root is truncated toward zero, as numpy's astype would.
template <numeric_elem T> compute_t<T> reduce_l2::reduce(std::span<const compute_t<T>> v) const {
    return cast<compute_t<T>>(std::sqrt(static_cast<double>(sum_of_squares(v))));
}
KILN_REGISTER_OP(reduce_l2)

template <numeric_elem T> compute_t<T> reduce_sum_square::reduce(std::span<const compute_t<T>> v) const {
    return sum_of_squares(v);
}
KILN_REGISTER_OP(reduce_sum_square)

template <float_elem T> double reduce_log_sum::reduce(std::span<const double> v) const { return std::log(sum_of(v)); }
KILN_REGISTER_OP(reduce_log_sum)

// log(sum(exp(x - m))) + m with m the largest element, so that exp cannot overflow.
template <float_elem T> double reduce_log_sum_exp::reduce(std::span<const double> v) const {
    double m = max_of(v, -std::numeric_limits<double>::infinity());
    if (std::isinf(m) || std::isnan(m)) return m;   // also the empty set: -inf
    double s = 0;
    for (auto x : v) s += std::exp(x - m);
    return std::log(s) + m;
}
KILN_REGISTER_OP(reduce_log_sum_exp)

}  // namespace kiln::ops
