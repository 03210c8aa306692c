// Storage types for the reduced-precision float formats, and their conversions.
// Conversions from wider types round to nearest, ties to even, straight from double (no double
// rounding through float). Each format's NaN, Inf and saturation rules follow the ONNX spec:
//   float16, bfloat16: IEEE-like; overflow rounds to +-Inf; NaN stays NaN (quiet).
//   fp8e4m3fn: no Inf; one NaN pattern per sign (S.1111.111); max finite 448.
//   fp8e5m2: IEEE-like with Inf; max finite 57344.
//   fp8e4m3fnuz, fp8e5m2fnuz: no Inf and no -0; the one NaN is 0x80 (the pattern of -0); -0
//   encodes as +0. Max finite 240 and 57344.
//   For the fp8 formats `saturate` (ONNX Cast's default) maps out-of-range values and +-Inf to
//   the largest finite value of that sign; without it overflow gives Inf (e5m2) or NaN (the others).
//   fp8e8m0: 2^(e-127) for e in 0..254, NaN at 0xFF; no sign, no zero. Encoding follows ONNX's
//   reference (numpy_helper.to_float8e8m0): the value is rounded to float32, then its exponent is
//   kept and rounded up, down or to nearest by its mantissa; NaN and Inf give NaN unless
//   saturating, where Inf gives the largest value (the Cast spec's table); saturate also stops
//   rounding from passing the largest value.
//   fp4e2m1 (packed, see below): no Inf, no NaN; always saturates to +-6.
#pragma once
#include <cstdint>

namespace kiln {

struct half {
    std::uint16_t bits = 0;
    half() = default;
    explicit half(double v);
    explicit operator double() const;
    explicit operator float() const { return static_cast<float>(static_cast<double>(*this)); }
    static half from_bits(std::uint16_t b) { half h; h.bits = b; return h; }
};

struct bfloat16 {
    std::uint16_t bits = 0;
    bfloat16() = default;
    explicit bfloat16(double v);
    explicit operator double() const;
    explicit operator float() const { return static_cast<float>(static_cast<double>(*this)); }
    static bfloat16 from_bits(std::uint16_t b) { bfloat16 h; h.bits = b; return h; }
};

struct fp8e4m3fn {
    std::uint8_t bits = 0;
    fp8e4m3fn() = default;
    explicit fp8e4m3fn(double v, bool saturate = true);
    explicit operator double() const;
    explicit operator float() const { return static_cast<float>(static_cast<double>(*this)); }
    static fp8e4m3fn from_bits(std::uint8_t b) { fp8e4m3fn h; h.bits = b; return h; }
};

struct fp8e5m2 {
    std::uint8_t bits = 0;
    fp8e5m2() = default;
    explicit fp8e5m2(double v, bool saturate = true);
    explicit operator double() const;
    explicit operator float() const { return static_cast<float>(static_cast<double>(*this)); }
    static fp8e5m2 from_bits(std::uint8_t b) { fp8e5m2 h; h.bits = b; return h; }
};

struct fp8e4m3fnuz {
    std::uint8_t bits = 0;
    fp8e4m3fnuz() = default;
    explicit fp8e4m3fnuz(double v, bool saturate = true);
    explicit operator double() const;
    explicit operator float() const { return static_cast<float>(static_cast<double>(*this)); }
    static fp8e4m3fnuz from_bits(std::uint8_t b) { fp8e4m3fnuz h; h.bits = b; return h; }
};

struct fp8e5m2fnuz {
    std::uint8_t bits = 0;
    fp8e5m2fnuz() = default;
    explicit fp8e5m2fnuz(double v, bool saturate = true);
    explicit operator double() const;
    explicit operator float() const { return static_cast<float>(static_cast<double>(*this)); }
    static fp8e5m2fnuz from_bits(std::uint8_t b) { fp8e5m2fnuz h; h.bits = b; return h; }
};

enum class e8m0_rounding : std::uint8_t { up, down, nearest };

struct fp8e8m0 {
    std::uint8_t bits = 0;
    fp8e8m0() = default;
    explicit fp8e8m0(double v, bool saturate = true, e8m0_rounding r = e8m0_rounding::up);
    explicit operator double() const;
    explicit operator float() const { return static_cast<float>(static_cast<double>(*this)); }
    static fp8e8m0 from_bits(std::uint8_t b) { fp8e8m0 h; h.bits = b; return h; }
};

// fp4e2m1 lives packed like int4; these convert one nibble. To the nibble rounds to nearest
// even and saturates to +-6; NaN, which fp4e2m1 cannot hold, gives 0x8 (-0) whatever its sign,
// as ml_dtypes (ONNX's reference) does for the default quiet NaN.
std::uint8_t fp4e2m1_to_nibble(double v);
double fp4e2m1_from_nibble(std::uint8_t nibble);

// 2-bit integers live packed four per byte; these convert the low two bits of a byte, rounding
// to nearest even and saturating to [-2, 1] / [0, 3] (NaN gives 0), as the 4-bit ones do.
std::int8_t int2_from_bits(std::uint8_t bits);
std::uint8_t int2_to_bits(double v);
std::uint8_t uint2_to_bits(double v);

// 4-bit integers live packed in bytes; these convert one nibble. int4_to_nibble and
// uint4_to_nibble round to nearest even and saturate to [-8, 7] / [0, 15].
std::int8_t int4_from_nibble(std::uint8_t nibble);
std::uint8_t int4_to_nibble(double v);
std::uint8_t uint4_to_nibble(double v);

}  // namespace kiln
