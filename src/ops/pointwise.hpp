// Bases for elementwise ops. A derived op supplies `name` and an `apply` on compute types
// (double for floats, int64/uint64 for integers, bool for bool), constrained with `requires` to
// the types it supports; the base does shape inference (numpy broadcasting), type checks, the
// strided reference loop, and scalar_expr: the call `kiln_<name>(inputs..., attributes...)` of
// the helper in scalar_helpers.h that computes what `apply` does (an op whose attributes do not
// print as literals overrides it).
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

// Compute-type constraints for `apply`: double for floats, int64/uint64 for integers.
template <class C> concept floating = std::is_floating_point_v<C>;
template <class C> concept integer = std::is_integral_v<C> && !std::is_same_v<C, bool>;
template <class C> concept number = floating<C> || integer<C>;

// Describes a type predicate in error messages.
const char* describe_types(bool (*pred)(dtype));
// Shape of a pointwise result: broadcast lens of the inputs (dynamic dims broadcast too).
shape pointwise_shape(std::span<const shape> in, dtype out_type);
// "fn(a0, a1, attr0, attr1)": attributes are numbers (printed exactly) or bools; others throw.
std::string scalar_call(std::string_view fn, std::span<const std::string> args, const value& attrs = value());
// The default scalar_expr of an elementwise op: kiln_<name> on its inputs and attributes.
template <class Op>
std::string default_scalar_expr(const Op& op, std::span<const std::string> args) {
    return scalar_call(cat("kiln_", Op::name), args, detail::op_to_value(op));
}

template <class Derived, bool (*Accepts)(dtype) = float_type, bool BoolOut = false>
struct unary_op {
    op_traits traits() const { return {.pointwise = true}; }
    std::string scalar_expr(std::span<const std::string> args) const {
        return default_scalar_expr(static_cast<const Derived&>(*this), args);
    }
    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1);
        check_type(in, 0, Accepts, describe_types(Accepts));
        return pointwise_shape(in, BoolOut ? dtype::bool_ : in[0].type());
    }
    argument compute(const shape& out, std::span<const argument> args) const {
        argument r(out);
        const shape& xs = args[0].get_shape();
        const bool std_x = xs.standard();
        std::size_t n = out.elements();
        visit_type(xs.type(), [&](auto t) {
            using T = decltype(t);
            using C = compute_t<T>;
            const auto& self = static_cast<const Derived&>(*this);
            if constexpr (requires { self.apply(C{}); }) {
                const T* x = args[0].as<T>();
                using R = std::conditional_t<BoolOut, bool, T>;
                R* y = r.as<R>();
                for (std::size_t i = 0; i < n; ++i) y[i] = cast<R>(self.apply(cast<C>(x[std_x ? i : xs.index(i)])));
            } else {
                fail(Derived::name, ": no compute for ", dtype_name(xs.type()));
            }
        });
        return r;
    }
};

template <class Derived, bool (*Accepts)(dtype) = numeric_type, bool BoolOut = false, bool Commutative = false>
struct binary_op {
    op_traits traits() const { return {.pointwise = true, .commutative = Commutative}; }
    std::string scalar_expr(std::span<const std::string> args) const {
        return default_scalar_expr(static_cast<const Derived&>(*this), args);
    }
    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 2);
        check_same_type(in);
        check_type(in, 0, Accepts, describe_types(Accepts));
        return pointwise_shape(in, BoolOut ? dtype::bool_ : in[0].type());
    }
    argument compute(const shape& out, std::span<const argument> args) const {
        argument r(out);
        shape as = broadcast_to(args[0].get_shape(), out.lens());
        shape bs = broadcast_to(args[1].get_shape(), out.lens());
        std::size_t n = out.elements();
        visit_type(as.type(), [&](auto t) {
            using T = decltype(t);
            using C = compute_t<T>;
            const auto& self = static_cast<const Derived&>(*this);
            if constexpr (requires { self.apply(C{}, C{}); }) {
                const T* a = args[0].as<T>();
                const T* b = args[1].as<T>();
                using R = std::conditional_t<BoolOut, bool, T>;
                R* y = r.as<R>();
                for (std::size_t i = 0; i < n; ++i)
                    y[i] = cast<R>(self.apply(cast<C>(a[as.index(i)]), cast<C>(b[bs.index(i)])));
            } else {
                fail(Derived::name, ": no compute for ", dtype_name(as.type()));
            }
        });
        return r;
    }
};

}  // namespace kiln::ops
