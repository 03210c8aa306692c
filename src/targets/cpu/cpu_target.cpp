// The cpu target: convolutions, GEMMs and pooling (with the epilogues oneDNN's post-ops express)
// on oneDNN primitives created when the executable is built, weights reordered once into the
// layouts oneDNN prefers; pointwise regions as code generated for the region and compiled with
// the system C++ compiler; the rest on the ops' reference computes, which the compile report
// lists. The executable is program_executor over those kernels, inside the memory plan, with one
// OpenMP pool (oneDNN's) of opts.threads threads.
#include <omp.h>

#include <map>

#include "core/error.hpp"
#include "core/target.hpp"
#include "passes/pipeline.hpp"
#include "runtime/executor.hpp"
#include "tools/program_tools.hpp"
#include "targets/cpu/epilogue.hpp"
#include "targets/cpu/kernels.hpp"

namespace kiln {
namespace {

std::size_t thread_count(const compile_options& opts) {
    return opts.threads ? opts.threads : static_cast<std::size_t>(omp_get_num_procs());
}

bool is_view(const instruction& ins) {
    std::vector<shape> in;
    for (auto i : ins.inputs()) in.push_back(i->get_shape());
    return ins.get_operator().output_alias(in) >= 0;
}

// "reference computes: 3 instructions (gather 2, softmax 1)"
std::string placement_line(const std::string& where, const std::map<std::string, std::size_t>& ops) {
    std::size_t n = 0;
    std::string list;
    for (const auto& [name, count] : ops) {
        n += count;
        list += (list.empty() ? "" : ", ") + name + " " + std::to_string(count);
    }
    return where + ": " + std::to_string(n) + " instruction" + (n == 1 ? "" : "s") + " (" + list + ")";
}

class cpu_executable final : public executable {
public:
    cpu_executable(program p, const compile_options& opts, std::vector<target_blob> saved)
        : prog_(std::move(p)), ctx_(thread_count(opts)) {
        omp_set_num_threads(static_cast<int>(ctx_.threads));
        for (auto& b : saved) ctx_.saved.emplace(std::move(b.name), std::move(b.bytes));
        std::size_t pos = 0;
        for (const auto& ins : prog_.main()) ctx_.position[&ins] = pos++;
        std::map<std::string, std::map<std::string, std::size_t>> placed;   // where -> op -> count
        kernel_factory factory = [&](const instruction& ins) {
            cpu_kernel k = make_cpu_kernel(ins, ctx_);
            if (k.run) placed[k.where][std::string(ins.name())]++;
            else if (is_computing(ins) && !is_view(ins)) placed["reference computes"][std::string(ins.name())]++;
            if (k.run) ++stats_.kernels;
            return k.run;
        };
        exec_ = std::make_unique<program_executor>(prog_, factory);
        keep_blocked_layouts(prog_.main(), ctx_);
        ctx_.pointwise.build();
        stats_.cache_hits = ctx_.pointwise.cache_hits();
        stats_.arena_bytes = exec_->arena_bytes();
        stats_.memory = exec_->memory_report();
        stats_.placement.push_back(std::to_string(ctx_.threads) + " thread" + (ctx_.threads == 1 ? "" : "s"));
        for (const auto& [where, ops] : placed) stats_.placement.push_back(placement_line(where, ops));
        if (ctx_.reordered + ctx_.reused > 0)
            stats_.notes.push_back("weights in oneDNN layouts: " + std::to_string(ctx_.reordered) + " reordered now, " +
                                   std::to_string(ctx_.reused) + " read as saved");
        ctx_.saved.clear();   // the blobs in use are in ctx_.packed
    }
    saved_parts saved() const override {
        saved_parts r;
        for (const auto& b : ctx_.packed)
            if (!b.name.empty()) r.blobs.push_back(b);
        return r;
    }
    const program& get_program() const override { return prog_; }
    const executable_stats& stats() const override { return stats_; }
    std::vector<argument> run(const param_map& inputs) override {
        omp_set_num_threads(static_cast<int>(ctx_.threads));   // per calling thread
        return exec_->run(inputs);
    }
    std::vector<argument> run_observed(const param_map& inputs, const instruction_observer& observe) override {
        omp_set_num_threads(static_cast<int>(ctx_.threads));
        return exec_->run(inputs, &observe);
    }

private:
    program prog_;
    cpu_context ctx_;
    std::unique_ptr<program_executor> exec_;
    executable_stats stats_;
};

class cpu_target final : public target {
public:
    std::string name() const override { return "cpu"; }
    std::vector<pass> passes(const compile_options& opts) const override {
        // Epilogues take only what oneDNN's post-ops express; kernels are chosen per instruction
        // when the executable is built.
        fusion_policy policy;
        policy.epilogue_op = onednn_post_op;
        return generic_passes(opts, policy);
    }
    std::vector<std::string> ignored_options(const compile_options& opts) const override {
        std::vector<std::string> r;
        if (opts.offload_copy) r.push_back("--enable-offload-copy (cpu runs in host memory)");
        if (opts.exhaustive_tune) r.push_back("--exhaustive-tune (cpu takes oneDNN's heuristic choices)");
        if (!opts.fast_math) r.push_back("--disable-fast-math (cpu's generated code uses exact libm calls)");
        for (auto& d : ignored_device_options(opts, "cpu")) r.push_back(std::move(d));
        return r;
    }
    std::unique_ptr<executable> load(program lowered, const compile_options& opts) const override {
        return std::make_unique<cpu_executable>(std::move(lowered), opts, std::vector<target_blob>{});
    }
    std::unique_ptr<executable> load_saved(program lowered, const compile_options& opts,
                                           saved_parts parts) const override {
        if (!parts.kernels.empty())
            fail("the saved program carries ", parts.kernels.size(), " compiled kernels, which the cpu target does not take");
        return std::make_unique<cpu_executable>(std::move(lowered), opts, std::move(parts.blobs));
    }
};

const bool registered = [] {
    register_target("cpu", [] { return std::unique_ptr<target>(new cpu_target()); });
    return true;
}();

}  // namespace
}  // namespace kiln
