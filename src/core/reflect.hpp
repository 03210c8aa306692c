// Conversions between attribute field types and value, used by op attributes.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "core/value.hpp"

namespace kiln {

inline value to_value(bool b) { return value(b); }
inline value to_value(const std::string& s) { return value(s); }
inline value to_value(const value& v) { return v; }
inline value to_value(const value_bytes& b) { return value(b); }
inline value to_value(dtype t) { return value(std::string(dtype_name(t))); }
value to_value(const shape& s);
template <class T>
    requires std::is_arithmetic_v<T>
value to_value(T x) {
    if constexpr (std::is_floating_point_v<T>) return value(static_cast<double>(x));
    else return value(static_cast<std::int64_t>(x));
}
template <class T>
value to_value(const std::vector<T>& xs) {
    value_array a;
    for (const auto& x : xs) a.push_back(to_value(x));
    return value(std::move(a));
}

inline void from_value(const value& v, bool& b) { b = v.as_bool(); }
inline void from_value(const value& v, std::string& s) { s = v.as_string(); }
inline void from_value(const value& v, value& x) { x = v; }
inline void from_value(const value& v, value_bytes& b) { b = v.as_bytes(); }
inline void from_value(const value& v, dtype& t) { t = parse_dtype(v.as_string()); }
void from_value(const value& v, shape& s);
template <class T>
    requires std::is_arithmetic_v<T>
void from_value(const value& v, T& x) {
    if constexpr (std::is_floating_point_v<T>) x = static_cast<T>(v.as_float());
    else x = static_cast<T>(v.as_int());
}
template <class T>
void from_value(const value& v, std::vector<T>& xs) {
    xs.clear();
    if (!v.is_array()) {   // a single value where a list is expected: a list of one
        xs.emplace_back();
        from_value(v, xs.back());
        return;
    }
    for (const auto& e : v.as_array()) {
        xs.emplace_back();
        from_value(e, xs.back());
    }
}

}  // namespace kiln
