// convert: elementwise type conversion, ONNX Cast (declared in convert.hpp).
#include "ops/convert.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/numeric_bulk.hpp"

namespace kiln::ops {
namespace {

template <class T> inline constexpr bool is_fp8_v = std::is_same_v<T, fp8e4m3fn> || std::is_same_v<T, fp8e5m2> ||
                                                  std::is_same_v<T, fp8e4m3fnuz> || std::is_same_v<T, fp8e5m2fnuz>;

// v rounded to nearest, ties to even, keeping the low `bits` bits (two's complement when
// is_signed); NaN gives 0. Values beyond int64 are clamped first (ONNX leaves them undefined).
std::int64_t wrap_to_bits(double v, int bits, bool is_signed) {
    if (std::isnan(v)) return 0;
    double c = std::clamp(v, -0x1p62, 0x1p62);
    auto i = static_cast<std::int64_t>(c - std::remainder(c, 1.0));
    std::int64_t mask = (std::int64_t{1} << bits) - 1, low = i & mask;
    return is_signed && low >> (bits - 1) ? low - (mask + 1) : low;
}

e8m0_rounding parse_rounding(const std::string& mode) {
    if (mode == "up") return e8m0_rounding::up;
    if (mode == "down") return e8m0_rounding::down;
    if (mode == "nearest") return e8m0_rounding::nearest;
    fail("round_mode='", mode, "'; expected 'up', 'down' or 'nearest'");
}

// Converts every element to target_type:
//  - to a float type: round to nearest, ties to even; overflow gives +-Inf for float16, bfloat16
//    and float32/64. `saturate` matters for the fp8 targets only, as in ONNX: true (the default)
//    clamps out-of-range values and +-Inf to the largest finite value of that sign; false gives
//    +-Inf for e5m2 and NaN for e4m3fn.
//  - float to integer: truncates toward zero. ONNX leaves out-of-range values undefined; kiln
//    saturates to the target's range and maps NaN to 0 (core cast(), visit.hpp).
//  - integer to integer: keeps the low bits (two's complement), as ONNX says: 200 -> int8 is -56.
//  - to bool: zero (and -0.0) is false, anything else (NaN included) is true.
//  - to int4/uint4/int2/uint2: rounds to nearest even ("round to nearest even and truncate", ONNX's
//    int4 note) and keeps the low bits, as ONNX's suite expects from Cast (-9 -> int4 is 7, the
//    fixed-point rule above); NaN gives 0. The interpreter hands this op an int8/uint8 output and
//    packs it afterwards, so the values must already be in range.
//  - to fp4e2m1: rounds to nearest even and saturates to +-6 (the format has no Inf or NaN); the
//    interpreter hands this op a float32 output holding the fp4 values.
//  - to fp8e8m0: rounds up, down or to nearest by `round_mode`; see numeric.hpp.
template <class To, class From>
To convert_one(From v, dtype target_type, bool saturate, e8m0_rounding rounding) {
    if constexpr (std::is_same_v<To, std::int8_t> || std::is_same_v<To, std::uint8_t>) {
        int bits = target_type == dtype::int4 || target_type == dtype::uint4   ? 4
                   : target_type == dtype::int2 || target_type == dtype::uint2 ? 2
                                                                               : 0;
        if (bits) return static_cast<To>(wrap_to_bits(cast<double>(v), bits, is_signed(target_type)));
    }
    if constexpr (std::is_same_v<To, float>)
        if (target_type == dtype::fp4e2m1) return static_cast<To>(fp4e2m1_from_nibble(fp4e2m1_to_nibble(cast<double>(v))));
    if constexpr (is_fp8_v<To>) return To(cast<double>(v), saturate);
    else if constexpr (std::is_same_v<To, fp8e8m0>) return To(cast<double>(v), saturate, rounding);
    else return cast<To>(v);
}

}  // namespace

shape convert::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    if (target_type == dtype::tuple) fail("target_type=", dtype_name(target_type), " is not an element type");
    parse_rounding(round_mode);
    return pointwise_shape(in, target_type);
}

argument convert::compute(const shape& out, std::span<const argument> args) const {
    argument r(out);
    const shape& xs = args[0].get_shape();
    // float32 -> float16/bfloat16 of a standard tensor (convert_precision's weights): the vector
    // loops round exactly as convert_one does.
    if (xs.type() == dtype::float32 && xs.standard() && (out.type() == dtype::float16 || out.type() == dtype::bfloat16)) {
        auto convert_all = out.type() == dtype::float16 ? floats_to_half : floats_to_bfloat16;
        convert_all(args[0].as<float>(), r.as<std::uint16_t>(), out.elements(), best_simd_level());
        return r;
    }
    e8m0_rounding rounding = parse_rounding(round_mode);
    visit_type(xs.type(), [&](auto from) {
        using From = decltype(from);
        const From* x = args[0].as<From>();
        visit_type(out.type(), [&](auto to) {
            using To = decltype(to);
            To* y = r.as<To>();
            const std::size_t n = out.elements();
            if (xs.standard()) {   // the common case (a literal converted by convert_precision): no index arithmetic
                for (std::size_t i = 0; i < n; ++i) y[i] = convert_one<To>(x[i], target_type, saturate, rounding);
                return;
            }
            for (std::size_t i = 0; i < n; ++i) y[i] = convert_one<To>(x[xs.index(i)], target_type, saturate, rounding);
        });
    });
    return r;
}
KILN_REGISTER_OP(convert)

}  // namespace kiln::ops
