/* kiln's C API: parse an ONNX model, compile it for a target, run it on caller-owned buffers.
 *
 * Every object is an opaque handle with a create (or a call that makes one) and a destroy.
 * Every call returns a kiln_status; on failure kiln_last_error_message() gives the calling
 * thread's last error text (naming the node, input or option at fault). Nothing is printed.
 * Strings and arrays a call returns through `const T**` stay valid until the handle is destroyed
 * or the same call is made again on it.
 */
#ifndef KILN_KILN_H
#define KILN_KILN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif

/* A C caller may pass any int where an enum is expected; C++ gives the enums int as their
 * underlying type so that the library reads such a value (and rejects it with
 * KILN_STATUS_BAD_PARAM) instead of loading an out-of-range enum, which C++ leaves undefined. */
#ifdef __cplusplus
#define KILN_ENUM(name) enum name : int
#else
#define KILN_ENUM(name) enum name
#endif

typedef KILN_ENUM(kiln_status) {
    KILN_STATUS_SUCCESS = 0,
    KILN_STATUS_BAD_PARAM = 1,        /* a null handle or pointer, an index out of range, a bad value */
    KILN_STATUS_PARSE_ERROR = 2,      /* the model cannot be read or is not supported */
    KILN_STATUS_UNKNOWN_TARGET = 3,   /* the target is not built into this kiln */
    KILN_STATUS_COMPILE_ERROR = 4,
    KILN_STATUS_INPUT_ERROR = 5,      /* a missing, unknown or mis-shaped input or output buffer */
    KILN_STATUS_RUN_ERROR = 6,
    KILN_STATUS_IO_ERROR = 7,         /* a file cannot be written or read */
    KILN_STATUS_INTERNAL_ERROR = 8,
    KILN_STATUS_CANCELLED = 9         /* kiln_program_cancel stopped the call */
} kiln_status;

/* Element types, in kiln's order. int4/uint4 and fp4e2m1 are packed two per byte, low nibble
   first; int2/uint2 four per byte, lowest bits first. */
typedef KILN_ENUM(kiln_dtype) {
    KILN_BOOL = 0,
    KILN_INT8, KILN_INT16, KILN_INT32, KILN_INT64,
    KILN_UINT8, KILN_UINT16, KILN_UINT32, KILN_UINT64,
    KILN_FLOAT16, KILN_BFLOAT16, KILN_FLOAT32, KILN_FLOAT64,
    KILN_FP8E4M3FN, KILN_FP8E5M2,
    KILN_INT4, KILN_UINT4,
    KILN_FP8E4M3FNUZ, KILN_FP8E5M2FNUZ, KILN_FP8E8M0, KILN_FP4E2M1,
    KILN_INT2, KILN_UINT2
} kiln_dtype;

typedef KILN_ENUM(kiln_precision) { KILN_PRECISION_FP32 = 0, KILN_PRECISION_FP16, KILN_PRECISION_BF16 } kiln_precision;

typedef struct kiln_program* kiln_program_t;
typedef struct kiln_shape* kiln_shape_t;
typedef struct kiln_argument* kiln_argument_t;
typedef struct kiln_compile_options* kiln_compile_options_t;
typedef struct kiln_onnx_options* kiln_onnx_options_t;

/* The calling thread's last error message ("" when the last call succeeded). */
KILN_API const char* kiln_last_error_message(void);
/* "success", "bad parameter", ... */
KILN_API const char* kiln_status_string(kiln_status s);
/* kiln's printed name of a type: "float_type", "half_type", ... (NULL for an invalid value) */
KILN_API const char* kiln_dtype_name(kiln_dtype t);
/* Targets built into this kiln, comma separated: "cpu,gpu,ref". */
KILN_API const char* kiln_built_targets(void);

/* ONNX options: the sizes of inputs and symbolic dims (see the kiln driver's --input-dim,
 * --dim-param, --default-dim, --skip-unknown-operators). */
KILN_API kiln_status kiln_onnx_options_create(kiln_onnx_options_t* out);
KILN_API kiln_status kiln_onnx_options_destroy(kiln_onnx_options_t o);
KILN_API kiln_status kiln_onnx_options_set_input_dims(kiln_onnx_options_t o, const char* input, const size_t* lens,
                                                      size_t ndim);
KILN_API kiln_status kiln_onnx_options_set_dim_param(kiln_onnx_options_t o, const char* symbol, size_t min, size_t max);
KILN_API kiln_status kiln_onnx_options_set_default_dim(kiln_onnx_options_t o, size_t n);
KILN_API kiln_status kiln_onnx_options_set_skip_unknown_operators(kiln_onnx_options_t o, int skip);

/* Compile options; the defaults are optimize=1, fast_math=1, exhaustive_tune=0, offload_copy=0, fp32,
 * kernel_cache=1, allow_tf32=0, device=0. */
KILN_API kiln_status kiln_compile_options_create(kiln_compile_options_t* out);
KILN_API kiln_status kiln_compile_options_destroy(kiln_compile_options_t o);
KILN_API kiln_status kiln_compile_options_set_optimize(kiln_compile_options_t o, int on);
KILN_API kiln_status kiln_compile_options_set_fast_math(kiln_compile_options_t o, int on);
KILN_API kiln_status kiln_compile_options_set_exhaustive_tune(kiln_compile_options_t o, int on);
KILN_API kiln_status kiln_compile_options_set_offload_copy(kiln_compile_options_t o, int on);
KILN_API kiln_status kiln_compile_options_set_precision(kiln_compile_options_t o, kiln_precision p);
/* gpu: read and write the compiled-kernel disk cache (0: compile every kernel, write nothing). */
KILN_API kiln_status kiln_compile_options_set_kernel_cache(kiln_compile_options_t o, int on);
/* gpu: let float32 GEMMs and convolutions round their inputs to TF32 (faster, ~1e-3 relative error). */
KILN_API kiln_status kiln_compile_options_set_allow_tf32(kiln_compile_options_t o, int on);
/* gpu: the CUDA device ordinal to compile for and run on (a saved program keeps it). */
KILN_API kiln_status kiln_compile_options_set_device(kiln_compile_options_t o, int device);

/* Shapes: a type, lens and strides (in elements). Dynamic dims have a range instead of a len. */
KILN_API kiln_status kiln_shape_create(kiln_shape_t* out, kiln_dtype t, const size_t* lens, size_t ndim);
/* `strides` in elements; NULL means standard (row-major packed). */
KILN_API kiln_status kiln_shape_create_strided(kiln_shape_t* out, kiln_dtype t, const size_t* lens,
                                               const size_t* strides, size_t ndim);
KILN_API kiln_status kiln_shape_destroy(kiln_shape_t s);
KILN_API kiln_status kiln_shape_type(kiln_shape_t s, kiln_dtype* out);
KILN_API kiln_status kiln_shape_ndim(kiln_shape_t s, size_t* out);
/* Lens and strides of a static shape (`ndim` entries; NULL for a scalar). */
KILN_API kiln_status kiln_shape_lens(kiln_shape_t s, const size_t** out);
KILN_API kiln_status kiln_shape_strides(kiln_shape_t s, const size_t** out);
KILN_API kiln_status kiln_shape_is_dynamic(kiln_shape_t s, int* out);
/* The range of dim `i` (min == max for a fixed dim) and its symbol ("" when unnamed). */
KILN_API kiln_status kiln_shape_dim_range(kiln_shape_t s, size_t i, size_t* min, size_t* max, const char** symbol);
KILN_API kiln_status kiln_shape_elements(kiln_shape_t s, size_t* out);
/* Bytes a buffer of the shape needs (its element space; packed int4 rounds up). */
KILN_API kiln_status kiln_shape_bytes(kiln_shape_t s, size_t* out);
/* The printed form: "float_type, {1, 784}, {784, 1}". */
KILN_API kiln_status kiln_shape_string(kiln_shape_t s, const char** out);

/* Arguments: a shape plus a buffer. With `data` non-NULL the argument borrows the caller's buffer
 * (at least kiln_shape_bytes bytes, kept alive by the caller); with NULL it owns a zeroed one. */
KILN_API kiln_status kiln_argument_create(kiln_argument_t* out, kiln_shape_t s, void* data);
/* An argument over device memory the caller owns (a CUDA device pointer of at least
 * kiln_shape_bytes bytes, row-major packed), for kiln_program_run on a gpu program: inputs are
 * read and outputs written on the device, with no copy through the host; from the second run on
 * (once the program's CUDA graph is captured) 256-byte aligned buffers are read and written in
 * place, with no copy at all (docs/gpu.md, "Zero copy"). The run waits on the
 * device for work queued on the legacy default stream before reading inputs, and the outputs are
 * complete when the run returns. Targets without a device refuse it (KILN_STATUS_RUN_ERROR). */
KILN_API kiln_status kiln_argument_create_device(kiln_argument_t* out, kiln_shape_t s, void* device_data);
/* 1 for an argument made by kiln_argument_create_device. */
KILN_API kiln_status kiln_argument_is_device(kiln_argument_t a, int* out);
KILN_API kiln_status kiln_argument_destroy(kiln_argument_t a);
/* A new shape handle (destroy it). */
KILN_API kiln_status kiln_argument_shape(kiln_argument_t a, kiln_shape_t* out);
KILN_API kiln_status kiln_argument_data(kiln_argument_t a, void** out);

/* Parsing an ONNX model (`options` may be NULL). The frontend's warnings are not printed. */
KILN_API kiln_status kiln_parse_onnx_file(kiln_program_t* out, const char* path, kiln_onnx_options_t options);
/* External data files are looked up in the current directory. */
KILN_API kiln_status kiln_parse_onnx_buffer(kiln_program_t* out, const void* data, size_t size,
                                            kiln_onnx_options_t options);
KILN_API kiln_status kiln_program_destroy(kiln_program_t p);

/* Compiles for "ref", "cpu" or "gpu" (where built); NULL or "" picks the default target (gpu where a
 * GPU is found, else cpu); `options` may be NULL. A program compiles once. */
KILN_API kiln_status kiln_program_compile(kiln_program_t p, const char* target, kiln_compile_options_t options);
/* The target the program is compiled for ("" before compile). */
KILN_API kiln_status kiln_program_target(kiln_program_t p, const char** out);

KILN_API kiln_status kiln_program_input_count(kiln_program_t p, size_t* out);
KILN_API kiln_status kiln_program_input_name(kiln_program_t p, size_t i, const char** out);
/* A new shape handle (destroy it). */
KILN_API kiln_status kiln_program_input_shape(kiln_program_t p, size_t i, kiln_shape_t* out);
KILN_API kiln_status kiln_program_output_count(kiln_program_t p, size_t* out);
KILN_API kiln_status kiln_program_output_name(kiln_program_t p, size_t i, const char** out);
KILN_API kiln_status kiln_program_output_shape(kiln_program_t p, size_t i, kiln_shape_t* out);

/* Runs a compiled program. `inputs[k]` is the input named `input_names[k]`; every input must be
 * given once. `outputs` holds one argument per output, in order, over caller-owned buffers whose
 * type and lens match what the output computes; the results are written into them. Buffers are
 * host memory, or on the gpu target also device memory (kiln_argument_create_device). */
KILN_API kiln_status kiln_program_run(kiln_program_t p, const char* const* input_names, const kiln_argument_t* inputs,
                                      size_t input_count, const kiln_argument_t* outputs, size_t output_count);

/* Stops the program's compile or run in progress on another thread (or, when none is,
 * the next one): it returns KILN_STATUS_CANCELLED, its message naming the instruction it stopped
 * before. Thread-safe. Checked before each instruction and each Loop iteration, so an instruction
 * already running finishes first. */
KILN_API kiln_status kiln_program_cancel(kiln_program_t p);

/* Saves a compiled program (with its target, compile options and output names) to `path`;
 * kiln_load reads it back compiled, without compiling again. A missing, truncated or corrupted
 * file, or one saved for a target not built into this kiln, is KILN_STATUS_IO_ERROR. */
KILN_API kiln_status kiln_program_save(kiln_program_t p, const char* path);
KILN_API kiln_status kiln_load(kiln_program_t* out, const char* path);

/* The program's text IR (MIGraphX's printed form). */
KILN_API kiln_status kiln_program_string(kiln_program_t p, const char** out);

#ifdef __cplusplus
}
#endif

#endif /* KILN_KILN_H */
