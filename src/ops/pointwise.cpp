#include "ops/pointwise.hpp"

#include <cmath>
#include <cstdio>

namespace kiln::ops {

const char* describe_types(bool (*pred)(dtype)) {
    if (pred == float_type) return "a float type";
    if (pred == signed_type) return "a signed integer or float type";
    if (pred == integer_type) return "an integer type";
    if (pred == numeric_type) return "a numeric (integer or float) type";
    if (pred == bool_type) return "bool";
    return "any type";
}

std::string scalar_call(std::string_view fn, std::span<const std::string> args, const value& attrs) {
    std::string s = cat(fn, "(");
    const char* sep = "";
    for (const auto& a : args) {
        s += sep + a;
        sep = ", ";
    }
    if (!attrs.is_null()) {
        for (const auto& [k, v] : attrs.as_object()) {
            s += sep;
            sep = ", ";
            if (v.is_bool()) {
                s += v.as_bool() ? "true" : "false";
            } else if (v.is_int()) {
                s += cat(v.as_int(), "LL");
            } else if (v.is_float() && std::isfinite(v.as_float())) {
                char buf[32];   // 17 digits give back the same double
                std::snprintf(buf, sizeof buf, "%.17g", v.as_float());
                std::string lit = buf;
                s += lit.find_first_of(".e") == std::string::npos ? lit + ".0" : lit;   // a double, not an int
            } else {
                fail(fn, ": attribute '", k, "' = ", to_string(v), " has no literal form");
            }
        }
    }
    return s + ")";
}

shape pointwise_shape(std::span<const shape> in, dtype out_type) {
    for (std::size_t i = 0; i < in.size(); ++i)
        if (in[i].is_tuple()) fail("input ", i, " is a tuple");
    bool dynamic = false;
    for (const auto& s : in) dynamic = dynamic || s.dynamic();
    if (!dynamic) return {out_type, broadcast_lens(in)};
    // Dynamic dims: a fixed 1 broadcasts; otherwise ranges must agree (the intersection is kept).
    std::size_t rank = 0;
    for (const auto& s : in) rank = std::max(rank, s.ndim());
    std::vector<dynamic_dim> out(rank, dynamic_dim{1, 1, {}, {}});
    for (const auto& s : in) {
        auto dims = s.dims();
        std::size_t off = rank - dims.size();
        for (std::size_t i = 0; i < dims.size(); ++i) {
            auto& o = out[off + i];
            const auto& d = dims[i];
            if (d.is_fixed() && d.min == 1) continue;
            if (o.is_fixed() && o.min == 1) {
                o = d;
                continue;
            }
            dynamic_dim m{std::max(o.min, d.min), std::min(o.max, d.max), o.optimals,
                          o.symbol.empty() ? d.symbol : o.symbol};
            if (m.min > m.max) fail("cannot broadcast dim ", off + i, ": ", to_string(o), " vs ", to_string(d));
            o = m;
        }
    }
    return shape(out_type, out);
}

}  // namespace kiln::ops
