// How the cpu target's generated code holds values (pointwise_codegen.cpp, reduce_codegen.cpp):
// in memory as their element type, in registers as their compute type, the scalar helpers'
// contract (src/ops/scalar_helpers.h): float for float32, float16 and bfloat16, 64-bit integers
// for integers, bool. A value is loaded up, each op's result brought back to its element type (a
// float16/bfloat16 rounded, a narrower integer wrapped, as ref computes each op in its type), and
// stored down: bfloat16 by a shift and a rounding add, float16 by integer and float operations
// on its bits (both vectorise; why not F16C in pointwise_codegen.cpp).
#pragma once
#include <string>

#include "core/dtype.hpp"

namespace kiln::cpu_codegen {

// The C helpers the expressions below call, compiled into every library of generated code.
extern const char* const low_precision_helpers;
// Declarations that let the generated loops call libm's vector variants (libmvec).
extern const char* const vector_math;

inline bool float_kind(dtype t) { return t == dtype::float32 || t == dtype::float16 || t == dtype::bfloat16; }
// Whole-byte integers: 8 to 64 bits, signed or not.
inline bool integer_kind(dtype t) { return is_integral(t) && !is_packed(t); }
// The element types generated pointwise code takes.
inline bool generated_type(dtype t) { return float_kind(t) || integer_kind(t) || t == dtype::bool_; }

// The type in memory.
inline std::string c_type(dtype t) {
    switch (t) {
    case dtype::float32: return "float";
    case dtype::int8: return "signed char";
    case dtype::int16: return "short";
    case dtype::int32: return "int";
    case dtype::int64: return "long long";
    case dtype::uint8: return "unsigned char";
    case dtype::uint32: return "unsigned";
    case dtype::uint64: return "unsigned long long";
    case dtype::bool_: return "bool";
    default: return "unsigned short";   // float16 and bfloat16 as their bits, uint16
    }
}
// The type computed in.
inline std::string value_type(dtype t) {
    if (float_kind(t)) return "float";
    if (t == dtype::bool_) return "bool";
    return is_signed(t) ? "long long" : "unsigned long long";
}
// Element `e` of memory of type t, in its compute type.
inline std::string load(dtype t, const std::string& e) {
    if (t == dtype::float32 || t == dtype::bool_) return e;
    if (t == dtype::float16) return "kiln_ld_f16(" + e + ")";
    if (t == dtype::bfloat16) return "kiln_ld_bf16(" + e + ")";
    return "(" + value_type(t) + ")" + e;
}
// A computed `e` brought to type t's values (still in the compute type).
inline std::string round_to(dtype t, const std::string& e) {
    if (t == dtype::float32) return e;
    if (t == dtype::float16) return "kiln_rd_f16(" + e + ")";
    if (t == dtype::bfloat16) return "kiln_rd_bf16(" + e + ")";
    if (t == dtype::bool_) return "(bool)(" + e + ")";
    if (dtype_bits(t) == 64) return "(" + value_type(t) + ")(" + e + ")";
    return "(" + value_type(t) + ")(" + c_type(t) + ")(" + e + ")";   // wraps, as ref's narrower type
}
// A computed `e` as type t, for a store.
inline std::string store(dtype t, const std::string& e) {
    if (t == dtype::float32) return e;
    if (t == dtype::float16) return "kiln_st_f16(" + e + ")";
    if (t == dtype::bfloat16) return "kiln_st_bf16(" + e + ")";
    return "(" + c_type(t) + ")(" + e + ")";
}

}  // namespace kiln::cpu_codegen
