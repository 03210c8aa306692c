// The elementwise generator: a kernel that computes one output element per thread from any
// number of strided (broadcast, transposed, sliced) operands. Pointwise regions, conversions and
// the copies that materialise views are all instances of it.
#pragma once
#include <string>
#include <vector>

#include "core/shape.hpp"
#include "targets/gpu/kernel_compiler.hpp"

namespace kiln::gpu {

// The storage type generated code uses for a dtype ("float", "kiln::half", "kiln::fp8e4m3fn";
// the raw bytes "kiln::u8" for packed types, read and written through device/kiln_small_types.cuh);
// an error naming the dtype for those generated kernels do not take (tuples and the like).
std::string device_type(dtype t);
// The type a value of this dtype is computed in: float for float16/bfloat16/float32, double,
// 64-bit integers (the scalar helpers' contract), bool.
std::string compute_type(dtype t);

// A float literal NVRTC reads exactly: "2.0f", "0.0883883461f".
std::string flit(double v);
// A double literal NVRTC reads exactly: "2.0", "0.088388347648318447".
std::string dlit(double v);

struct elementwise_spec {
    // Each already broadcast to the output's lens (stride 0 where repeated), or with lens of its
    // own and as many elements: then read at the output's row-major index (a reshape copy).
    // Packed inputs (int4, fp4e2m1, ...) are read at element offsets; a packed output must be
    // standard (each thread writes whole bytes).
    std::vector<shape> inputs;
    shape output;
    // Statements computing the result from x0, x1, ... (the inputs loaded into their compute
    // types); the last defines `y`. "const float y = x0 + x1;"
    std::string body;
    // Per input, optional: each coordinate d is divided by divisors[k][d] before its stride applies
    // (blocked quantization scales); empty for a plain strided read.
    std::vector<std::vector<std::size_t>> divisors;
    // The body checks its data (device/kiln_error.cuh): the kernel takes the instruction's error
    // slot `err` as its last parameter.
    bool error_slot = false;
    // The body does not use the index `i`: the kernel may walk the elements in the output's
    // memory order (a channels-last output written contiguously, not with a stride of C).
    bool any_order = false;
};

kernel_source make_elementwise_kernel(const elementwise_spec& spec, const std::string& where);

// How many consecutive output elements one thread of the kernel moves at once (1, 2, 4 or 8):
// more than 1 where the output is written contiguously in rows whose length it divides, and every
// operand is either one value, constant along those rows, or contiguous along them (then read
// with one vector load). The kernel checks its pointers' alignment and falls back to one element
// per thread where they are not aligned (views at odd offsets).
std::size_t elementwise_vector(const elementwise_spec& spec);

// Generated statements of an indexing kernel (one that takes its error slot `err`): index
// variable `k` from the expression `index` (negative counts from the end) in [0, n) through
// kiln::checked_index; outside [-n, n) it is recorded with `position` (its element in the
// indices) and `on_bad` runs ("continue;": nothing out of bounds is touched).
std::string checked_index(const std::string& k, const std::string& index, std::size_t n, const std::string& position,
                          const std::string& on_bad);

// Grid and block of an elementwise kernel over n elements.
struct launch_dims {
    unsigned grid = 1, block = 256;
};
launch_dims elementwise_launch(std::size_t elements);
// The launch of make_elementwise_kernel(spec): one thread per elementwise_vector(spec) elements.
launch_dims elementwise_launch(const elementwise_spec& spec);

}  // namespace kiln::gpu
