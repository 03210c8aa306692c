#include "core/dtype.hpp"

#include <array>

#include "core/error.hpp"

namespace kiln {
namespace {
struct dtype_info {
    std::string_view name;
    std::string_view short_name;
    std::size_t bits;
};
constexpr std::array<dtype_info, dtype_count> infos{{
    {"bool_type", "bool", 8},
    {"int8_type", "int8", 8},       {"int16_type", "int16", 16},
    {"int32_type", "int32", 32},    {"int64_type", "int64", 64},
    {"uint8_type", "uint8", 8},     {"uint16_type", "uint16", 16},
    {"uint32_type", "uint32", 32},  {"uint64_type", "uint64", 64},
    {"half_type", "float16", 16},   {"bf16_type", "bfloat16", 16},
    {"float_type", "float32", 32},  {"double_type", "float64", 64},
    {"fp8e4m3fn_type", "float8e4m3fn", 8}, {"fp8e5m2_type", "float8e5m2", 8},
    {"int4_type", "int4", 4},       {"uint4_type", "uint4", 4},
    {"fp8e4m3fnuz_type", "float8e4m3fnuz", 8}, {"fp8e5m2fnuz_type", "float8e5m2fnuz", 8},
    {"fp8e8m0_type", "float8e8m0", 8}, {"fp4e2m1_type", "float4e2m1", 4},
    {"int2_type", "int2", 2},       {"uint2_type", "uint2", 2},
    {"string_type", "string", sizeof(std::string) * 8},
    {"tuple_type", "tuple", 0},
    {"sequence_type", "sequence", 0},
    {"optional_type", "optional", 0},
}};
const dtype_info& info(dtype t) { return infos[static_cast<std::size_t>(t)]; }
}  // namespace

std::string_view dtype_name(dtype t) { return info(t).name; }

dtype parse_dtype(std::string_view s) {
    for (int i = 0; i < dtype_count; ++i)
        if (infos[i].name == s || infos[i].short_name == s) return static_cast<dtype>(i);
    if (s == "half" || s == "f16") return dtype::float16;
    if (s == "float" || s == "f32") return dtype::float32;
    if (s == "double" || s == "f64") return dtype::float64;
    if (s == "bf16") return dtype::bfloat16;
    fail("unknown dtype '", s, "'");
}

std::size_t dtype_bits(dtype t) { return info(t).bits; }

bool is_float(dtype t) {
    switch (t) {
    case dtype::float16: case dtype::bfloat16: case dtype::float32: case dtype::float64:
    case dtype::fp8e4m3fn: case dtype::fp8e5m2: case dtype::fp8e4m3fnuz: case dtype::fp8e5m2fnuz:
    case dtype::fp8e8m0: case dtype::fp4e2m1: return true;
    default: return false;
    }
}

bool is_integral(dtype t) {
    switch (t) {
    case dtype::int8: case dtype::int16: case dtype::int32: case dtype::int64:
    case dtype::uint8: case dtype::uint16: case dtype::uint32: case dtype::uint64:
    case dtype::int4: case dtype::uint4: case dtype::int2: case dtype::uint2: return true;
    default: return false;
    }
}

bool is_signed(dtype t) {
    switch (t) {
    case dtype::int8: case dtype::int16: case dtype::int32: case dtype::int64: case dtype::int4:
    case dtype::int2: return true;
    default: return is_float(t);
    }
}

bool is_packed(dtype t) { return dtype_bits(t) > 0 && dtype_bits(t) < 8; }

}  // namespace kiln
