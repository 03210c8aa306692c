// What the C API's files share: the structs behind its handles, and `guard`, which runs a call's
// body and turns what it throws into a status plus the thread's last error message.
#pragma once
#include <new>
#include <string>
#include <vector>

#include "api/api_program.hpp"
#include "core/error.hpp"
#include "kiln/kiln.h"

struct kiln_onnx_options {
    kiln::onnx_options o;
};
struct kiln_compile_options {
    kiln::compile_options o;
};
struct kiln_shape {
    kiln::shape s;
    std::string text, symbol;
};
struct kiln_argument {
    kiln::argument a;
    bool device = false;   // a device pointer the caller owns (kiln_argument_create_device)
};
struct kiln_program {
    std::unique_ptr<kiln::api::api_program> p;
    std::string text, target;
};

// The C enums mirror kiln's, so conversions are casts.
static_assert(KILN_BOOL == static_cast<int>(kiln::dtype::bool_) && KILN_FLOAT32 == static_cast<int>(kiln::dtype::float32) &&
              KILN_UINT4 == static_cast<int>(kiln::dtype::uint4) && KILN_UINT2 + 1 == static_cast<int>(kiln::dtype::string));
static_assert(KILN_PRECISION_FP16 == static_cast<int>(kiln::compute_precision::fp16) &&
              KILN_PRECISION_BF16 == static_cast<int>(kiln::compute_precision::bf16));

namespace kiln::c_api_detail {

using kiln::api::stage;

inline thread_local std::string last_error;

// A caller mistake (null pointer, index out of range): KILN_STATUS_BAD_PARAM.
struct bad_param : kiln::error {
    using kiln::error::error;
};

inline kiln_status status_of(stage s) {
    switch (s) {
        case stage::parse: return KILN_STATUS_PARSE_ERROR;
        case stage::target: return KILN_STATUS_UNKNOWN_TARGET;
        case stage::compile: return KILN_STATUS_COMPILE_ERROR;
        case stage::input: return KILN_STATUS_INPUT_ERROR;
        case stage::run: return KILN_STATUS_RUN_ERROR;
        case stage::io: return KILN_STATUS_IO_ERROR;
    }
    return KILN_STATUS_INTERNAL_ERROR;
}

// Runs `f`; a kiln::error not tied to a stage gets `otherwise`.
template <class F>
inline kiln_status guard(F&& f, kiln_status otherwise = KILN_STATUS_BAD_PARAM) {
    last_error.clear();
    try {
        f();
        return KILN_STATUS_SUCCESS;
    } catch (const bad_param& e) {
        last_error = e.what();
        return KILN_STATUS_BAD_PARAM;
    } catch (const kiln::api::stage_error& e) {
        last_error = e.what();
        return status_of(e.where);
    } catch (const kiln::error& e) {
        last_error = e.what();
        return otherwise;
    } catch (const kiln::cancelled& e) {
        last_error = e.what();
        return KILN_STATUS_CANCELLED;
    } catch (const std::bad_alloc&) {
        last_error = "out of memory";
        return KILN_STATUS_INTERNAL_ERROR;
    } catch (const std::exception& e) {
        last_error = e.what();
        return KILN_STATUS_INTERNAL_ERROR;
    } catch (...) {
        last_error = "unknown exception";
        return KILN_STATUS_INTERNAL_ERROR;
    }
}

template <class T>
inline T& need(T* p, const char* what) {
    if (p == nullptr) throw bad_param(kiln::cat(what, " is NULL"));
    return *p;
}

inline const char* need_str(const char* s, const char* what) {
    if (s == nullptr) throw bad_param(kiln::cat(what, " is NULL"));
    return s;
}

template <class T>
inline void need_out(T* p) {
    if (p == nullptr) throw bad_param("the output pointer is NULL");
}

inline kiln::dtype to_dtype(kiln_dtype t) {
    // Strings have no C element type: the C API takes and gives numeric tensors only.
    if (static_cast<int>(t) < 0 || static_cast<int>(t) >= static_cast<int>(kiln::dtype::string))
        throw bad_param(kiln::cat("unknown kiln_dtype ", static_cast<int>(t)));
    return static_cast<kiln::dtype>(t);
}

inline std::vector<std::size_t> to_vector(const size_t* p, size_t n, const char* what) {
    if (n > 0 && p == nullptr) throw bad_param(kiln::cat(what, " is NULL but ndim is ", n));
    return std::vector<std::size_t>(p, p + n);
}

inline std::size_t checked_index(size_t i, std::size_t n, const char* what) {
    if (i >= n) throw bad_param(kiln::cat(what, " index ", i, " is out of range (the program has ", n, ")"));
    return i;
}

inline kiln_shape* new_shape(const kiln::shape& s) { return new kiln_shape{s, {}, {}}; }

}  // namespace kiln::c_api_detail
