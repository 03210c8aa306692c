// Storage types for the reduced-precision float formats, and their conversions.
// Conversions from wider types round to nearest, ties to even, straight from double (no double
// rounding through float). Each format's NaN, Inf and saturation rules follow the ONNX spec:
//   float16, bfloat16: IEEE-like; overflow rounds to +-Inf; NaN stays NaN (quiet).
//   fp8e4m3fn: no Inf; one NaN pattern per sign (S.1111.111); max finite 448.
//   fp8e5m2: IEEE-like with Inf; max finite 57344.
//   For the fp8 formats `saturate` (ONNX Cast's default) maps out-of-range values and +-Inf to
//   the largest finite value of that sign; without it overflow gives Inf (e5m2) or NaN (e4m3fn).
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

// 4-bit integers live packed in bytes; these convert one nibble. int4_to_nibble and
// uint4_to_nibble round to nearest even and saturate to [-8, 7] / [0, 15].
std::int8_t int4_from_nibble(std::uint8_t nibble);
std::uint8_t int4_to_nibble(double v);
std::uint8_t uint4_to_nibble(double v);

}  // namespace kiln
