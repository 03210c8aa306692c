// Reorders between two descriptors of one tensor that also convert float16/bfloat16 <-> float32
// (type_convert.cpp), for primitives that compute a 16-bit tensor in float32 and the attention
// tiles. oneDNN 3.2 reorders float16 (to float32, or to itself in another layout) with its generic
// loop on a CPU without AVX512-FP16: 0.3-0.4 ms for 8192 elements, 100x a float32 reorder.
#pragma once
#include <dnnl.hpp>

#include <optional>

#include "core/dtype.hpp"

namespace kiln {

// Drop-in for dnnl::reorder(from, to): where the types differ (one float32, F16C for float16), a
// layout change in the source type into a dense buffer (when the source is strided), the type
// conversion over contiguous elements, and a layout change in the target type (when the target's
// layout differs); oneDNN's reorder otherwise. Float16 layout changes run as bfloat16 ones (the
// same 16-bit copy, on oneDNN's jitted reorder).
class tensor_copy {
public:
    tensor_copy(const dnnl::memory& from, const dnnl::memory& to);
    void execute(dnnl::stream& s, const dnnl::memory& from, const dnnl::memory& to);

private:
    struct stage {
        dnnl::reorder r;
        dnnl::memory from, to;   // as the reorder sees them (float16 as bfloat16), data set per run
        dnnl::memory scratch;    // where the reorder needs one (user_scratchpad)
    };
    static stage layout_change(const dnnl::memory::desc& from, const dnnl::memory::desc& to, const dnnl::engine& eng);
    static void run(stage& st, dnnl::stream& s, void* from, void* to);
    std::optional<stage> whole, before, after;   // `whole`: one oneDNN reorder does it all
    dnnl::memory mid_from, mid_to;                 // dense buffers around the conversion (when needed)
    dtype from_type = dtype::float32, to_type = dtype::float32;
    std::size_t elements = 0;
};

}  // namespace kiln
