// A target compiles and runs programs on one kind of device. Targets are peers behind this
// interface: ref (the oracle), and later cpu and gpu.
#pragma once
#include <memory>
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
};

class target {
public:
    virtual ~target() = default;
    virtual std::string name() const = 0;
    // The device architecture compiled code is specific to ("sm_90"); "" when there is none (ref).
    // A saved program records it, and loading it elsewhere fails.
    virtual std::string device_arch() const { return ""; }
    // The target's lowering pipeline, run after the generic passes.
    virtual std::vector<pass> passes(const compile_options& opts) const = 0;
    // Buffers on the target's device, and copies between it and the host.
    virtual argument allocate(const shape& s) const = 0;
    virtual argument copy_to(const argument& host) const = 0;
    virtual argument copy_from(const argument& device) const = 0;
    // Runs a program compiled for this target.
    virtual std::vector<argument> run(const program& p, const param_map& inputs) const = 0;
    // Runs calling `observe` after each instruction (or kernel) of main where the target can
    // (perf's per-instruction report, verify's intermediate values); by default it cannot.
    virtual std::vector<argument> run_observed(const program& p, const param_map& inputs,
                                               const instruction_observer& observe) const {
        (void)observe;
        return run(p, inputs);
    }
};

// "ref" (and later "cpu", "gpu"); an unknown or unbuilt target is an error naming the built ones.
std::unique_ptr<target> make_target(std::string_view name);
std::vector<std::string> built_targets();
void register_target(std::string name, std::unique_ptr<target> (*factory)());

// Runs the target's passes over the program.
void compile(program& p, const target& t, const compile_options& opts = {}, const pass_options& popts = {});

}  // namespace kiln
