// What the cpu target's kernels share: the oneDNN engine and the thread count, and the choice of
// a kernel for each instruction (oneDNN primitive, generated pointwise code, or none: reference).
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/pass.hpp"
#include "core/target.hpp"
#include "runtime/executor.hpp"

namespace kiln {

struct onednn_state;   // engine and stream (onednn_util.hpp)

struct cpu_kernel {
    host_kernel run;     // empty: the instruction runs its reference compute
    std::string where;   // "onednn", "generated code": for the compile report
};

// The generated code of an executable's pointwise regions (pointwise_codegen.cpp): add() each
// region, then build() compiles them all at once (or loads the cached library); the kernels
// add() returned run only after that.
class pointwise_library {
public:
    // A value the generated code reads: an argument or a constant, with its stride per output dim.
    struct leaf {
        int arg = -1;
        const argument* constant = nullptr;
        std::vector<std::size_t> strides;
        dtype type = dtype::float32;   // in memory (float16 and bfloat16 load as float)
    };
    pointwise_library() = default;
    pointwise_library(const pointwise_library&) = delete;
    pointwise_library& operator=(const pointwise_library&) = delete;
    ~pointwise_library();
    cpu_kernel add(const instruction& ins);
    bool build();   // false: nothing to compile
    std::size_t cache_hits() const { return cache_hits_; }

private:
    struct region {
        std::string fn;
        std::vector<leaf> leaves;
        std::vector<const void*> pointers;
        void (*call)(const void* const*, void*) = nullptr;
    };
    void run(std::size_t index, std::span<const argument> args, const argument& out);
    std::string source_;
    std::vector<region> regions_;
    void* handle_ = nullptr;
    std::size_t cache_hits_ = 0;
};

// The function computing a float32, float16 or bfloat16 fused_reduce region (reduce_codegen.cpp),
// its operands added to `leaves`; empty when the region cannot be generated.
std::string generate_fused_reduce(const instruction& ins, const std::string& fn, std::vector<pointwise_library::leaf>& leaves);

struct cpu_context {
    explicit cpu_context(std::size_t threads);
    ~cpu_context();
    std::size_t threads;
    std::unique_ptr<onednn_state> dnnl;
    pointwise_library pointwise;
    // Constant weights in the primitives' layouts: those a saved program kept, by name, and those
    // of this executable, named by the instruction's position in main and the layout (executable::saved).
    std::unordered_map<std::string, argument> saved;
    std::vector<target_blob> packed;
    std::size_t reordered = 0, reused = 0;
    std::unordered_map<const instruction*, std::size_t> position;
    std::unordered_map<const instruction*, argument> observed;   // logical_value's buffers
    // The fused attention kernels' working buffers, one per thread, shared by all of them
    // (attention_kernel.cpp).
    std::vector<std::vector<float>> attention_scratch;
    // The Winograd convolutions' transformed inputs and GEMM results, shared likewise (sized for
    // the largest; 64 bytes more, to align them).
    std::vector<float> winograd_scratch;
    bool fast_math = true;   // convolutions may use Winograd (compile_options::fast_math)
};

// Whether this CPU computes in the precision natively (oneDNN's ISA at run time: AVX512-BF16 for
// bf16, AVX512-FP16 for fp16); where not, the cpu target computes in float32.
bool native_precision(compute_precision p);

// Gather as row copies (gather_kernel.cpp); none for other instructions.
cpu_kernel make_gather_kernel(const instruction& ins);
// Concat as block copies (concat_kernel.cpp); none for other instructions.
cpu_kernel make_concat_kernel(const instruction& ins);
// float32 attention as one fused kernel with an online softmax (attention_kernel.cpp); none for
// other instructions and types.
cpu_kernel make_attention_kernel(const instruction& ins, cpu_context& ctx);
// Builds the instruction's kernel (primitives created and weights reordered now, once).
cpu_kernel make_cpu_kernel(const instruction& ins, cpu_context& ctx);
// oneDNN's kernels for attention, layer norm and softmax (onednn_transformer.cpp).
host_kernel make_onednn_transformer_kernel(const instruction& ins, cpu_context& ctx);
namespace ops { struct attention; }
// Every attention variant in float32, float16 and bfloat16: masks, causal, softcap, grouped heads
// (onednn_attention.cpp).
host_kernel onednn_attention_kernel(const ops::attention& op, const instruction& ins, cpu_context& ctx);
// Lets consecutive oneDNN primitives pass their blocked layouts on (no reorder between them) where
// every user of a result is a primitive reading it in that layout, and the layout fits its buffer.
// Then the arena holds that result in oneDNN's layout: only those primitives read it.
void keep_blocked_layouts(const module& m, cpu_context& ctx);
// The input a oneDNN kernel's sum post-op accumulates onto, where the primitive writes its result
// straight into its planned buffer in the layout it reads that input in: the memory plan may then
// put the result over the input, and the residual is in dst without a copy. -1 otherwise.
int accumulates_in_place(const instruction& ins, const cpu_context& ctx);
// An instruction's value as kiln's layout: `value` itself, or, where keep_blocked_layouts left the
// instruction writing a blocked layout, a copy reordered from it (for observers: verify, dumps).
argument logical_value(cpu_context& ctx, const instruction& ins, const argument& value);
// oneDNN's part of it: convolution, matmul, pooling and the epilogues its post-ops express.
cpu_kernel make_onednn_kernel(const instruction& ins, cpu_context& ctx);

}  // namespace kiln
