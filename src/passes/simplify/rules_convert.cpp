// Redundant converts. convert maps values (round to nearest, saturate), so a middle type that
// holds every value of the source exactly (integers in range, floats with as many significand
// bits and as wide an exponent range, inf and NaN included) changes nothing on the way.
#include "core/reflect.hpp"
#include "ops/convert.hpp"
#include "passes/simplify/simplify_rules.hpp"

namespace kiln {
namespace {

using match::any;
using match::op;

dtype target_of(instruction_ref convert) { return convert->get_operator().get<ops::convert>().target_type; }

// Significand bits (implicit bit included), largest exponent, exponent of the smallest subnormal.
struct float_format {
    int digits;
    int max_exp;
    int min_exp;
    bool has_inf;
};

float_format format_of(dtype t) {
    switch (t) {
    case dtype::float16: return {11, 15, -24, true};
    case dtype::bfloat16: return {8, 127, -133, true};
    case dtype::float32: return {24, 127, -149, true};
    case dtype::float64: return {53, 1023, -1074, true};
    case dtype::fp8e4m3fn: return {4, 8, -9, false};
    default: return {3, 15, -16, true};   // fp8e5m2
    }
}

// Formats that format_of does not describe: no -0 (fnuz), no sign or zero (e8m0), or saturating
// always (fp4e2m1). A chain through them is left alone.
bool unusual_float(dtype t) {
    return t == dtype::fp8e4m3fnuz || t == dtype::fp8e5m2fnuz || t == dtype::fp8e8m0 || t == dtype::fp4e2m1;
}

// Bits of magnitude an integer type's values need.
int value_bits(dtype t) { return static_cast<int>(dtype_bits(t)) - (is_signed(t) ? 1 : 0); }

bool int_holds(dtype from, dtype mid) {
    if (is_float(mid)) return value_bits(from) <= format_of(mid).digits;
    if (is_signed(from) && !is_signed(mid)) return false;
    return value_bits(from) <= value_bits(mid);
}

// Whether every value of `from` converts to `mid` exactly.
bool holds_exactly(dtype from, dtype mid) {
    if (from == mid || from == dtype::bool_) return true;
    if (mid == dtype::bool_ || mid == dtype::tuple || from == dtype::tuple) return false;
    if (unusual_float(from) || unusual_float(mid)) return false;
    if (is_integral(from)) return int_holds(from, mid);
    if (!is_float(mid)) return false;
    auto f = format_of(from), m = format_of(mid);
    return f.digits <= m.digits && f.max_exp <= m.max_exp && f.min_exp >= m.min_exp && (m.has_inf || !f.has_inf);
}

}  // namespace

std::vector<rule> convert_rules() {
    return {
        // convert[t](x) -> x, x of type t
        {"convert_same", op("convert", any("x")),
         [](rewriter& r, const bindings& b) {
             if (target_of(r.root()) != b["x"]->get_shape().type()) return false;
             return replace_where_shape_allows(r, b["x"]);
         }},
        // convert[t2](convert[t1](x)) -> convert[t2](x), t1 holding every value of x's type exactly
        {"convert_chain", op("convert", op("convert", any("x")).bind("mid")),
         [](rewriter& r, const bindings& b) {
             if (!holds_exactly(b["x"]->get_shape().type(), target_of(b["mid"]))) return false;
             r.replace(r.add(r.root()->get_operator(), {b["x"]}));
             return true;
         }},
    };
}

}  // namespace kiln
