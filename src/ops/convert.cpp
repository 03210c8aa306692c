// convert: elementwise type conversion, ONNX Cast (declared in convert.hpp).
#include "ops/convert.hpp"

#include <type_traits>

namespace kiln::ops {
namespace {

template <class T> inline constexpr bool is_fp8_v = std::is_same_v<T, fp8e4m3fn> || std::is_same_v<T, fp8e5m2>;

// Converts every element to target_type:
//  - to a float type: round to nearest, ties to even; overflow gives +-Inf for float16, bfloat16
//    and float32/64. `saturate` matters for the fp8 targets only, as in ONNX: true (the default)
//    clamps out-of-range values and +-Inf to the largest finite value of that sign; false gives
//    +-Inf for e5m2 and NaN for e4m3fn.
//  - float to integer: truncates toward zero. ONNX leaves out-of-range values undefined; kiln
//    saturates to the target's range and maps NaN to 0 (core cast(), visit.hpp).
//  - integer to integer: keeps the low bits (two's complement), as ONNX says: 200 -> int8 is -56.
//  - to bool: zero (and -0.0) is false, anything else (NaN included) is true.
//  - to int4/uint4: rounds to nearest even and saturates to [-8, 7] / [0, 15] (NaN gives 0), as
//    ONNX's int4 note and kiln's packing do; the interpreter hands this op an int8/uint8 output
//    and packs it afterwards, so the values must already be in range.
template <class To, class From>
To convert_one(From v, dtype target_type, bool saturate) {
    if constexpr (std::is_same_v<To, std::int8_t> || std::is_same_v<To, std::uint8_t>) {
        if (target_type == dtype::int4) return static_cast<To>(int4_from_nibble(int4_to_nibble(cast<double>(v))));
        if (target_type == dtype::uint4) return static_cast<To>(uint4_to_nibble(cast<double>(v)));
    }
    if constexpr (is_fp8_v<To>) return To(cast<double>(v), saturate);
    else return cast<To>(v);
}

}  // namespace

shape convert::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    if (target_type == dtype::tuple) fail("target_type=", dtype_name(target_type), " is not an element type");
    return pointwise_shape(in, target_type);
}

argument convert::compute(const shape& out, std::span<const argument> args) const {
    argument r(out);
    const shape& xs = args[0].get_shape();
    visit_type(xs.type(), [&](auto from) {
        using From = decltype(from);
        const From* x = args[0].as<From>();
        visit_type(out.type(), [&](auto to) {
            using To = decltype(to);
            To* y = r.as<To>();
            for (std::size_t i = 0; i < out.elements(); ++i)
                y[i] = convert_one<To>(x[xs.index(i)], target_type, saturate);
        });
    });
    return r;
}
KILN_REGISTER_OP(convert)

}  // namespace kiln::ops
