// How the cpu target's generated code holds float16 and bfloat16 values (pointwise_codegen.cpp,
// reduce_codegen.cpp): in memory as their type, in registers as float. A value is loaded up,
// computed in float and rounded to its type after each op (as ref rounds each op's result), and
// stored down: bfloat16 by a shift and a rounding add (which vectorise), float16 as _Float16 (F16C;
// why in pointwise_codegen.cpp).
#pragma once
#include <string>

#include "core/dtype.hpp"

namespace kiln::cpu_codegen {

// The C helpers the expressions below call, compiled into every library of generated code.
extern const char* const low_precision_helpers;

inline bool float_kind(dtype t) { return t == dtype::float32 || t == dtype::float16 || t == dtype::bfloat16; }
inline std::string c_type(dtype t) {
    return t == dtype::float32 ? "float" : t == dtype::float16 ? "_Float16" : "unsigned short";
}
// Element `e` of memory of type t, as float.
inline std::string load(dtype t, const std::string& e) {
    return t == dtype::float32 ? e : t == dtype::float16 ? "(float)" + e : "kiln_ld_bf16(" + e + ")";
}
// Float `e` rounded to type t (still a float).
inline std::string round_to(dtype t, const std::string& e) {
    return t == dtype::float32 ? e : t == dtype::float16 ? "kiln_rd_f16(" + e + ")" : "kiln_rd_bf16(" + e + ")";
}
// Float `e` as type t, for a store.
inline std::string store(dtype t, const std::string& e) {
    return t == dtype::float32 ? e : t == dtype::float16 ? "(_Float16)" + e : "kiln_st_bf16(" + e + ")";
}

}  // namespace kiln::cpu_codegen
