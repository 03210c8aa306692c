// A target compiles programs for one kind of device into executables. Targets are peers behind
// this interface: ref (the oracle), cpu and gpu.
//
//   program --target::compile--> lowering passes --target::load--> executable --run--> outputs
//
// An executable owns everything a run needs (its lowered program, weights resident on its
// device, the arena from the memory plan, compiled kernels and library plans); run() does no
// compile work and, after the first run, allocates nothing.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/eval.hpp"
#include "core/pass.hpp"

namespace kiln {

// The float type a program computes in after compile (--fp16, --bf16).
enum class compute_precision { fp32, fp16, bf16 };

// Every compile option in one typed struct (stored with saved programs).
struct compile_options {
    bool optimize = true;        // run the generic passes (simplify, fold, fuse, plan memory)
    compute_precision precision = compute_precision::fp32;
    bool fast_math = true;
    bool exhaustive_tune = false;
    bool offload_copy = false;
    std::size_t threads = 0;     // cpu: threads of its one pool (0: the machine's cores)
    bool kernel_cache = true;    // gpu: read and write the compiled-kernel disk cache
    bool allow_tf32 = false;     // gpu: float32 GEMMs and convolutions may round inputs to TF32
    int device = 0;              // gpu: the CUDA device ordinal
};

// A buffer the caller owns, for executable::run_into: host memory, or memory on the executable's
// device (a CUDA device pointer for gpu) that the caller keeps alive during the call.
struct caller_buffer {
    argument arg;              // its shape and address (borrowed)
    bool on_device = false;
    // Device buffers: the CUDA stream whose queued work makes an input ready (null: the legacy
    // default stream); the run waits for it on the device, not on the host.
    void* ready_on = nullptr;
};
using caller_inputs = std::map<std::string, caller_buffer, std::less<>>;

// A kernel's compiled code (gpu: a cubin, named by its cache key).
struct kernel_binary {
    std::string name;
    std::vector<std::uint8_t> code;
};

// Data a target derives from a program when it builds the executable (cpu: weights reordered into
// oneDNN's layouts). `bytes` is a uint8 argument, owned or borrowed from a saved program's mapping.
struct target_blob {
    std::string name;
    argument bytes;
};

// What a saved program keeps of an executable besides the program, so that loading it skips that
// work: compiled kernels (gpu) and derived data (cpu).
struct saved_parts {
    std::vector<kernel_binary> kernels;
    std::vector<target_blob> blobs;
};

// What building an executable did, for compile reports.
struct executable_stats {
    std::size_t kernels = 0, cache_hits = 0;   // kernels built, and how many came from the disk cache
    std::size_t saved_kernels = 0;             // of `kernels`, taken from a saved program (not compiled)
    std::size_t arena_bytes = 0;               // the memory plan's arena (0: no plan, see `memory`)
    std::size_t weight_bytes = 0;              // literals resident on the device
    std::string memory;                        // the memory plan's report, or why there is none
    // Where the instructions run, one line each ("onednn: 20 instructions (convolution 17, ...)");
    // a target names what runs on reference computes so that nothing is hidden.
    std::vector<std::string> placement;
    std::vector<std::string> notes;   // more lines for the report ("weights: 21 reordered ...")
    // The compile report's breakdown of building the executable: its phases ("weights uploaded",
    // ms), the generated kernels' build (wall time, how many compiled at once) and each kernel
    // compiled, not a cache hit nor taken from a saved program, with its compile time.
    std::vector<std::pair<std::string, double>> build_phases;
    double kernel_build_ms = 0;
    std::size_t compile_threads = 0;
    std::vector<std::pair<std::string, double>> compiled_kernels;   // by the instruction it is for
};

class executable {
public:
    virtual ~executable() = default;
    // The lowered program it runs (for printing and saving).
    virtual const program& get_program() const = 0;
    virtual const executable_stats& stats() const = 0;
    // Runs on host inputs (checked against the program's parameters: a missing or mis-shaped
    // input is an error naming it). The outputs live in memory the executable owns and stay
    // valid until its next run; copy them to keep them. One executable runs one call at a time;
    // separate executables of one program may run at once from different threads.
    virtual std::vector<argument> run(const param_map& inputs) = 0;
    // Same, calling `observe` after each instruction of main with its result (valid only during
    // the call) and its time, where the target can (perf's per-instruction report, verify's
    // intermediate values); otherwise it runs without observing.
    virtual std::vector<argument> run_observed(const param_map& inputs, const instruction_observer& observe) = 0;
    // Runs on the caller's buffers and writes the outputs into `outputs` (one per output, in order,
    // of the type and lens it computes; host buffers may have any strides). This default takes
    // host buffers only (a device buffer is an error naming it): it runs and copies the outputs.
    // Device targets override it to read and write device buffers without a host round trip.
    virtual void run_into(const caller_inputs& inputs, std::span<const caller_buffer> outputs);
    // What a saved program keeps of this executable besides the program (none by default).
    virtual saved_parts saved() const { return {}; }
    // perf's device clock: a target that runs on a device times each later run's work there (gpu:
    // CUDA events around the launches, the input and output copies left out) once this returns
    // true; last_run_device_ms() is the last run's time. Host targets have no other clock: false.
    virtual bool enable_device_timing() { return false; }
    virtual double last_run_device_ms() const { return 0; }
};

// Copies a result into a caller's host buffer of the same type and lens (either may be strided);
// `label` names the output in the error when they differ.
void copy_result(const argument& from, const argument& to, const std::string& label);

class target {
public:
    virtual ~target() = default;
    virtual std::string name() const = 0;
    // The device architecture compiled code is specific to ("sm_90"); "" when there is none (ref).
    // A saved program records it, and loading it elsewhere fails.
    virtual std::string device_arch() const { return ""; }
    // The target's pipeline: the generic passes with its fusion policy, then its lowering.
    virtual std::vector<pass> passes(const compile_options& opts) const = 0;
    // Options this target has no use for, each with why ("--exhaustive-tune (ref has no
    // kernels to tune)"); the driver reports them instead of silently dropping them.
    virtual std::vector<std::string> ignored_options(const compile_options& opts) const = 0;
    // Builds the executable of a program this target's passes lowered already (a saved program
    // loads straight into one this way).
    virtual std::unique_ptr<executable> load(program lowered, const compile_options& opts) const = 0;
    // Builds the executable of a saved program with what its executable kept (executable::saved):
    // kernels are used instead of compiling them; a blob that does not fit (another CPU's layout)
    // is derived again. This default is for targets that keep nothing: kernels are an error.
    virtual std::unique_ptr<executable> load_saved(program lowered, const compile_options& opts,
                                                   saved_parts parts) const;
    // Lowers (runs passes(opts)) and builds the executable.
    std::unique_ptr<executable> compile(program p, const compile_options& opts = {},
                                        const pass_options& popts = {}) const;
};

// The gpu-only options that are set (--allow-tf32, --device N, --no-cache), each with why a host
// target named `target` ignores it: for host targets' ignored_options.
std::vector<std::string> ignored_device_options(const compile_options& opts, std::string_view target);

// "ref", "cpu", "gpu"; an unknown or unbuilt target is an error naming the built ones.
std::unique_ptr<target> make_target(std::string_view name);
// The target used when none is named: "gpu" where it is built and finds a device, else "cpu"
// where built, else "ref". ref stays the oracle (verify compares against it).
std::string default_target();
std::vector<std::string> built_targets();
void register_target(std::string name, std::unique_ptr<target> (*factory)());

// Runs the target's passes over the program in place (what compile does before load).
void lower(program& p, const target& t, const compile_options& opts = {}, const pass_options& popts = {});

}  // namespace kiln
