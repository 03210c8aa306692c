// Running a program on the GPU an instruction at a time, for what the static executable cannot
// plan: shapes that are not all static, control flow (If, Loop) and ops whose result shape depends
// on their data (nonzero). It follows the ref/cpu executor's interpreter (runtime/executor.hpp),
// with device buffers and the GPU lowerings instead of reference computes:
//  - each instruction is lowered for its inputs' actual shapes as a one-instruction module (the
//    same lowerings as the static executable) and its steps launched at once on the stream;
//    generated kernels are kept by source, so a shape seen before compiles nothing (those of
//    static shapes are built before the first run, and travel in saved programs: prepare);
//  - results live in a device caching allocator (blocks reused by size, stream-ordered on the
//    one stream, so a block freed while kernels still read it is only reused after them), and so
//    does a lowering's scratch, given back once its steps are enqueued: a long Loop does not grow;
//  - views are computed over their inputs' device values, as in the static executable;
//  - values are device tensors, tuples, and ONNX sequences (lists of device tensors) and
//    optionals (none or one value: sequence_ops.cpp); string tensors have no device form and are
//    held on the host, where the string ops run as reported host steps (host_steps.cpp);
//  - the host synchronises where the data decides what runs next, and only there: an If's
//    condition, a Loop's trip count and condition (once per iteration), a data-dependent op's
//    result size, a sequence position (docs/gpu.md lists each). No numeric value is computed on
//    the host.
#pragma once
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/argument.hpp"
#include "core/eval.hpp"
#include "core/module.hpp"
#include "core/target.hpp"
#include "targets/gpu/graph_bindings.hpp"
#include "targets/gpu/kernel_compiler.hpp"


namespace kiln::gpu {

struct library_handles;
struct device_info;
class dynamic_runner;

// An instruction the runner executes itself rather than through a lowering: control flow and
// data-dependent ops. `run` enqueues its work and returns its result in device memory.
struct gpu_dynamic_op {
    const char* what;
    bool (*matches)(const instruction& ins);
    argument (*run)(dynamic_runner& r, const instruction& ins, std::span<const argument> args);
};
struct gpu_dynamic_op_registrar {
    explicit gpu_dynamic_op_registrar(gpu_dynamic_op op);
};
const gpu_dynamic_op* find_dynamic_op(const instruction& ins);

// Whether `ins` is a host step (host_steps.cpp): an op that takes strings (op_traits::strings),
// not a view, with a string tensor among its inputs or results; the runner runs it with the ref
// compute on the host. No other op ever runs on the host.
bool host_step(const instruction& ins);
// "host steps: 2 (string_normalizer 'norm', ...; ...)" for `m` and its bodies, or "" when none:
// a line of the compile report.
std::string host_steps_report(const module& m);

// Whether the static executable runs `m`: every shape static and no instruction the runner
// executes itself.
bool static_module(const module& m);

// The runner's caching allocator: device memory it holds (cudaMalloc'd, kept for reuse), what
// values and scratch use of it now, and the most they used at once.
struct dynamic_memory {
    std::size_t reserved = 0, in_use = 0, peak_in_use = 0;
    std::size_t expanded_programs = 0;   // kept for expanded ops (onnx_node), all instructions
};

class dynamic_runner {
public:
    dynamic_runner(const device_info& dev, library_handles& libs, cudaStream_t s, const compile_options& opts);
    ~dynamic_runner();
    dynamic_runner(const dynamic_runner&) = delete;
    dynamic_runner& operator=(const dynamic_runner&) = delete;

    // Runs `m` on device inputs (in parameter order); the outputs are device values that stay
    // valid until the next run. Enqueues on the stream; the caller synchronises. `observe` (perf,
    // verify) sees each computing instruction of `m` (not of its bodies) after a synchronisation.
    std::vector<argument> run(const module& m, std::span<const argument> inputs,
                              const instruction_observer* observe = nullptr);
    // A device value copied into fresh host memory (synchronous), tuples, sequences and optionals
    // value by value; a string tensor (held on the host) is copied.
    argument to_host(const argument& d, const std::string& what);
    // After the stream's synchronisation: throws naming the first instruction whose run-time
    // check failed (error_flags.hpp), then forgets this run's lowerings.
    void finish_run();

    // For the ops that run themselves:
    cudaStream_t stream() const { return stream_; }
    // Device memory for a value of static shape `s` (a tuple laid out as plan_memory lays it out).
    argument allocate(const shape& s);
    // A standard-layout device value with the same elements (a copy kernel unless it is one);
    // tuples, sequences and optionals value by value, string tensors copied on the host.
    argument standard(const instruction& ins, const argument& a);
    // The result of a view op (output_alias >= 0) over device values: where it points.
    argument view(const operation& op, std::span<const argument> args);
    // Lowers `op` over `args` (their actual shapes) as `ins`'s work and launches it. The result
    // goes to `into` (a caller's dense device buffer) when it has the result's type and lens,
    // else to fresh memory.
    argument launch(const instruction& ins, const operation& op, std::span<const argument> args,
                    const argument* into = nullptr);
    // Until finish_run: main's instruction `ins`, when a lowering computes it with `into`'s type
    // and lens, writes its result there (a caller's output buffer) instead of fresh memory.
    void write_into(const instruction& ins, const argument& into);
    // One element of a device scalar or 1-element tensor, read to the host: a synchronisation,
    // `why` says which (it names the instruction in errors).
    std::int64_t read_scalar(const argument& a, const std::string& why);
    // A device tensor of shape `s` (one element) holding `v`.
    argument scalar(const shape& s, std::int64_t v);
    // A small host tensor (a loop counter, shape_of's lens) copied to the device on the run's stream;
    // tuples, sequences and optionals value by value; a string tensor stays on the host (copied).
    argument upload(const argument& host, const std::string& why);
    // An op with an expander (core/expand.hpp, onnx_node): the inputs it reads back, then its
    // program lowered by the gpu passes (once per input shapes and values read) and run here.
    argument run_expanded(const instruction& ins, std::span<const argument> args);
    // A generated kernel, compiled (or taken from the disk cache) the first time its source is seen.
    cudaKernel_t kernel(const kernel_source& src);
    // The distinct kernels loaded so far, and how many came from the disk cache or a saved program.
    const kernel_build_stats& kernel_stats() const;
    // A saved program's cubins, by key: kernels come from them before the disk cache and NVRTC.
    void use_saved_kernels(std::span<const kernel_binary> saved);
    // Builds at once, before any run, the kernels of the instructions of `m` and of the bodies it
    // runs whose shapes are all static (dynamic_runner.cpp says which).
    void prepare(const module& m);
    // The cubins of every kernel loaded so far, by key, for a saved program.
    std::vector<kernel_binary> binaries() const;
    // Its caching allocator's counters.
    dynamic_memory memory() const;

    struct state;

private:
    argument run_instruction(const instruction& ins, std::span<const argument> args);
    argument literal_value(const instruction& ins);
    void build(const std::vector<kernel_source>& sources);
    std::unique_ptr<state> st_;
    cudaStream_t stream_;
};

// nonzero's kernels (nonzero_kernel.cpp): counting the nonzero elements of x, and writing their
// multi-indices once the count is known.
kernel_source nonzero_count_kernel(const shape& x, const std::string& where);
kernel_source nonzero_write_kernel(const shape& x, const std::string& where);

// compress's kernel listing the indices where the condition is true (select_kernels.cpp), and
// range's writing start + i * delta for an element type.
kernel_source compress_list_kernel(const shape& cond, const std::string& where);
kernel_source range_kernel(dtype t, const std::string& where);

// unique's kernels (unique_kernel.cpp) over a standard input of `outer` rows, `len` slices along
// the axis and `inner` elements: each slice's representative (its first equal slice) and the
// count of distinct slices, then the four results once that count is known.
kernel_source unique_first_kernel(dtype t, std::size_t outer, std::size_t len, std::size_t inner,
                                  const std::string& where);
kernel_source unique_write_kernel(dtype t, std::size_t outer, std::size_t len, std::size_t inner, bool sorted,
                                  const std::string& where);

// nonmax_suppression's kernels (nms_kernel.cpp): the boxes kept per batch and class with their
// counts, then the rows once the total is known. `limits` are the types of the optional inputs
// present (max_output_boxes_per_class, iou_threshold, score_threshold).
struct nms_geometry {
    std::size_t batches = 0, classes = 0, boxes = 0;
    dtype boxes_type = dtype::float32, scores_type = dtype::float32;
    std::vector<dtype> limits;
};
kernel_source nms_select_kernel(const nms_geometry& g, bool center, const std::string& where);
kernel_source nms_write_kernel(const nms_geometry& g, const std::string& where);

// The gpu executable of a program main of which static_module refuses.
std::unique_ptr<executable> make_dynamic_executable(program p, const compile_options& opts, const saved_parts& saved);
// The caller buffers its runs read or wrote in place, or nothing for another executable.
std::optional<caller_buffers_in_place> dynamic_in_place_counts(const executable& e);
// Its runner's device memory, or nothing for another executable.
std::optional<dynamic_memory> dynamic_memory_of(const executable& e);

}  // namespace kiln::gpu
