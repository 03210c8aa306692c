// Dispatch on dtype to a C++ storage type, and conversions between storage types.
// Included by op implementations only (it instantiates templates per type).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/numeric.hpp"

namespace kiln {

template <class T> inline constexpr bool is_small_float_v =
    std::is_same_v<T, half> || std::is_same_v<T, bfloat16> || std::is_same_v<T, fp8e4m3fn> ||
    std::is_same_v<T, fp8e5m2> || std::is_same_v<T, fp8e4m3fnuz> || std::is_same_v<T, fp8e5m2fnuz> ||
    std::is_same_v<T, fp8e8m0>;
template <class T> inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_small_float_v<T>;

// The type an element is computed in: double for floats, int64/uint64 for integers, bool for bool.
template <class T> using compute_t = std::conditional_t<
    is_float_v<T>, double,
    std::conditional_t<std::is_same_v<T, bool>, bool,
                       std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>>;

// Converts between storage/compute types. float -> integer truncates toward zero and saturates
// (NaN gives 0), matching what kiln documents for Cast; float -> small float rounds to nearest even.
template <class To, class From>
To cast(From x) {
    if constexpr (std::is_same_v<To, From>) {
        return x;
    } else if constexpr (is_small_float_v<From>) {
        return cast<To>(static_cast<double>(x));
    } else if constexpr (is_small_float_v<To>) {
        return To(static_cast<double>(x));
    } else if constexpr (std::is_same_v<To, bool>) {
        return x != From{};
    } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
        if (std::isnan(x)) return To{0};
        double d = std::trunc(static_cast<double>(x));
        if (d <= static_cast<double>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
        if (d >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
        return static_cast<To>(d);
    } else {
        return static_cast<To>(x);
    }
}

// Calls f(T{}) with the storage type of t. Packed types (int4/uint4, fp4e2m1, int2/uint2) and
// tuple have none: the ref target widens packed tensors (int4 to int8, fp4e2m1 to float32) before
// ops see them.
template <class F>
decltype(auto) visit_type(dtype t, F&& f) {
    switch (t) {
    case dtype::bool_: return f(bool{});
    case dtype::int8: return f(std::int8_t{});
    case dtype::int16: return f(std::int16_t{});
    case dtype::int32: return f(std::int32_t{});
    case dtype::int64: return f(std::int64_t{});
    case dtype::uint8: return f(std::uint8_t{});
    case dtype::uint16: return f(std::uint16_t{});
    case dtype::uint32: return f(std::uint32_t{});
    case dtype::uint64: return f(std::uint64_t{});
    case dtype::float16: return f(half{});
    case dtype::bfloat16: return f(bfloat16{});
    case dtype::float32: return f(float{});
    case dtype::float64: return f(double{});
    case dtype::fp8e4m3fn: return f(fp8e4m3fn{});
    case dtype::fp8e5m2: return f(fp8e5m2{});
    case dtype::fp8e4m3fnuz: return f(fp8e4m3fnuz{});
    case dtype::fp8e5m2fnuz: return f(fp8e5m2fnuz{});
    case dtype::fp8e8m0: return f(fp8e8m0{});
    default: fail("no element type for ", dtype_name(t));
    }
}

}  // namespace kiln
