// Reductions over a list of axes with ONNX Reduce* (opset 18) semantics. Empty `axes` reduce
// every dim, or with noop_with_empty_axes return the input unchanged, as the spec says (onnx's
// reference evaluator instead keeps the elementwise part: x^2 for sum_square). Reducing an empty set
// gives the reduction's identity: 0 for sums, 1 for prod, -inf (integers: the type's lowest) for
// max, +inf (the type's highest) for min, -inf for log_sum and log_sum_exp. Floats accumulate
// in double and integers in 64 bits, rounded once to the element type.
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

#include "ops/pointwise.hpp"
#include "ops/reduce_util.hpp"

namespace kiln::ops {
namespace {

template <class T> concept numeric_elem = !std::is_same_v<T, bool>;
template <class T> concept float_elem = is_float_v<T>;

bool numeric_or_bool(dtype t) { return numeric_type(t) || t == dtype::bool_; }

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

// A derived op supplies `name` and `template <class T> compute_t<T> reduce(span<const compute_t<T>>)`
// constrained to the storage types T it accepts.
template <class Derived, bool (*Accepts)(dtype) = numeric_type>
struct reduce_op {
    std::vector<std::int64_t> axes;
    bool keepdims = true;
    bool noop_with_empty_axes = false;
    auto attributes() {
        return fields(field("axes", axes), field("keepdims", keepdims),
                      field("noop_with_empty_axes", noop_with_empty_axes));
    }
    op_traits traits() const { return {.reduction = true}; }

    bool noop() const { return axes.empty() && noop_with_empty_axes; }
    std::vector<std::size_t> reduced_axes(std::size_t ndim) const {
        if (!axes.empty()) return normalize_axes(axes, ndim);
        std::vector<std::size_t> all(ndim);
        std::iota(all.begin(), all.end(), std::size_t{0});
        return all;
    }

    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1);
        check_type(in, 0, Accepts, accepted_types(Accepts));
        if (noop()) return {in[0].type(), in[0].dims()};
        return {in[0].type(), reduced_dims(in[0], reduced_axes(in[0].ndim()), keepdims)};
    }

    argument compute(const shape& out, std::span<const argument> args) const {
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
};

struct reduce_sum : reduce_op<reduce_sum> {
    static constexpr std::string_view name = "reduce_sum";
    template <numeric_elem T> compute_t<T> reduce(std::span<const compute_t<T>> v) const { return sum_of(v); }
};
KILN_REGISTER_OP(reduce_sum)

struct reduce_mean : reduce_op<reduce_mean> {
    static constexpr std::string_view name = "reduce_mean";
    template <numeric_elem T> compute_t<T> reduce(std::span<const compute_t<T>> v) const {
        using C = compute_t<T>;
        // Floats give NaN (0/0) for an empty set; integers have no such value.
        if constexpr (std::is_integral_v<C>)
            if (v.empty()) fail(name, ": mean of an empty set of integers");
        return sum_of(v) / static_cast<C>(v.size());
    }
};
KILN_REGISTER_OP(reduce_mean)

struct reduce_prod : reduce_op<reduce_prod> {
    static constexpr std::string_view name = "reduce_prod";
    template <numeric_elem T> compute_t<T> reduce(std::span<const compute_t<T>> v) const {
        compute_t<T> p = 1;
        for (auto x : v) p *= x;
        return p;
    }
};
KILN_REGISTER_OP(reduce_prod)

struct reduce_max : reduce_op<reduce_max, numeric_or_bool> {
    static constexpr std::string_view name = "reduce_max";
    template <class T> compute_t<T> reduce(std::span<const compute_t<T>> v) const { return max_of(v, lowest<T>()); }
};
KILN_REGISTER_OP(reduce_max)

struct reduce_min : reduce_op<reduce_min, numeric_or_bool> {
    static constexpr std::string_view name = "reduce_min";
    template <class T> compute_t<T> reduce(std::span<const compute_t<T>> v) const {
        auto m = highest<T>();
        for (auto x : v)
            if (is_nan(x) || x < m) m = x;
        return m;
    }
};
KILN_REGISTER_OP(reduce_min)

struct reduce_l1 : reduce_op<reduce_l1> {
    static constexpr std::string_view name = "reduce_l1";
    template <numeric_elem T> compute_t<T> reduce(std::span<const compute_t<T>> v) const {
        compute_t<T> s = 0;
        for (auto x : v) {
            if constexpr (std::is_unsigned_v<compute_t<T>>) s += x;
            else s += x < 0 ? -x : x;
        }
        return s;
    }
};
KILN_REGISTER_OP(reduce_l1)

// Integer inputs: the square root is truncated toward zero, as numpy's astype would.
struct reduce_l2 : reduce_op<reduce_l2> {
    static constexpr std::string_view name = "reduce_l2";
    template <numeric_elem T> compute_t<T> reduce(std::span<const compute_t<T>> v) const {
        return cast<compute_t<T>>(std::sqrt(static_cast<double>(sum_of_squares(v))));
    }
};
KILN_REGISTER_OP(reduce_l2)

struct reduce_sum_square : reduce_op<reduce_sum_square> {
    static constexpr std::string_view name = "reduce_sum_square";
    template <numeric_elem T> compute_t<T> reduce(std::span<const compute_t<T>> v) const {
        return sum_of_squares(v);
    }
};
KILN_REGISTER_OP(reduce_sum_square)

// Float only: ONNX removed integer types from ReduceLogSum and ReduceLogSumExp.
struct reduce_log_sum : reduce_op<reduce_log_sum, float_type> {
    static constexpr std::string_view name = "reduce_log_sum";
    template <float_elem T> double reduce(std::span<const double> v) const { return std::log(sum_of(v)); }
};
KILN_REGISTER_OP(reduce_log_sum)

// log(sum(exp(x - m))) + m with m the largest element, so that exp cannot overflow.
struct reduce_log_sum_exp : reduce_op<reduce_log_sum_exp, float_type> {
    static constexpr std::string_view name = "reduce_log_sum_exp";
    template <float_elem T> double reduce(std::span<const double> v) const {
        double m = max_of(v, -std::numeric_limits<double>::infinity());
        if (std::isinf(m) || std::isnan(m)) return m;   // also the empty set: -inf
        double s = 0;
        for (auto x : v) s += std::exp(x - m);
        return std::log(s) + m;
    }
};
KILN_REGISTER_OP(reduce_log_sum_exp)

}  // namespace
}  // namespace kiln::ops
