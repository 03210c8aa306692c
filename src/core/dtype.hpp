// Element types of kiln tensors and their properties.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

enum class dtype : std::uint8_t {
    bool_,
    int8, int16, int32, int64,
    uint8, uint16, uint32, uint64,
    float16, bfloat16, float32, float64,
    fp8e4m3fn, fp8e5m2,
    int4, uint4,    // packed two per byte, low nibble first (ONNX order)
    fp8e4m3fnuz, fp8e5m2fnuz,   // no Inf, no -0: the one NaN is the pattern of -0
    fp8e8m0,        // unsigned powers of two 2^(e-127), NaN at 0xFF (MX scales)
    fp4e2m1,        // packed two per byte like int4; no Inf, no NaN
    int2, uint2,    // packed four per byte, lowest bits first (ONNX order)
    string,         // ONNX STRING: one std::string per element (bytes, UTF-8 by convention)
    tuple,          // multi-output instructions; the shape holds sub-shapes
    sequence,       // ONNX sequence: any number of tensors; the shape holds their element type
    optional,       // ONNX optional: a value or none; the shape holds the value's type
};

inline constexpr int dtype_count = static_cast<int>(dtype::optional) + 1;

// Printed name, MIGraphX style: "float_type", "half_type", ...
std::string_view dtype_name(dtype t);
// Inverse of dtype_name; also accepts short names ("float32", "f32", "half"). Throws on unknown names.
dtype parse_dtype(std::string_view s);

// Bits per element: 4 for int4/uint4/fp4e2m1, 2 for int2/uint2, sizeof(std::string) * 8 for string,
// 0 for tuple, sequence and optional.
std::size_t dtype_bits(dtype t);
bool is_float(dtype t);        // float16 bfloat16 float32 float64 fp8* fp4e2m1
bool is_integral(dtype t);     // signed and unsigned integers, 4- and 2-bit included; not bool
bool is_signed(dtype t);       // signed integers and all floats
bool is_packed(dtype t);       // several elements per byte: int4/uint4, fp4e2m1, int2/uint2

}  // namespace kiln
