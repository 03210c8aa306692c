// The cpu target: convolutions, GEMMs and pooling (with the epilogues oneDNN's post-ops express)
// on oneDNN primitives created when the executable is built, weights reordered once into the
// layouts oneDNN prefers; pointwise regions as code generated for the region and compiled with
// the system C++ compiler; the rest on the ops' reference computes, which the compile report
// lists. The executable is program_executor over those kernels, inside the memory plan, with one
// OpenMP pool (oneDNN's) of opts.threads threads.
#include <omp.h>

#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "core/error.hpp"
#include "core/target.hpp"
#include "ops/attention.hpp"
#include "ops/convolution.hpp"
#include "ops/fused.hpp"
#include "ops/gemm.hpp"
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

// Below this much work a kernel runs on the calling thread alone: waking the pool's other threads
// for it costs more than they save. 8M (every kernel of the BERT-like
// encoder, most of mobilenet_v2's) was chosen on a busy machine with the pool sleeping at once at
// barriers; with the short spin the driver sets (GOMP_SPINCOUNT=1000) and a quiet machine, 1M
// gives mobilenet_v2 at 2 threads 4.9 ms against 5.3 (decoder and encoder the same). 2e5 (~5 us
// of work) at load ~1.5, 2 threads: mobilenet_v2 4.1-4.7 -> 3.8-3.9 ms, the encoder 0.77-1.00 ->
// 0.62-0.70 (mixing one- and two-thread kernels let the second thread fall asleep between them);
// under contention it costs more (the encoder 2.2 -> 3.1 ms at load 2-3): docs/performance.md.
// KILN_CPU_PARALLEL_WORK sets it, for measuring another threshold on a quiet machine (debugging
// only: docs/driver.md).
double parallel_work() {
    const char* v = std::getenv("KILN_CPU_PARALLEL_WORK");
    if (v == nullptr) return 2e5;
    char* end = nullptr;
    double n = std::strtod(v, &end);
    if (end == v || *end != '\0' || !(n >= 0))
        fail("KILN_CPU_PARALLEL_WORK expects a number of multiply-adds (e.g. 2e5), got '", v, "'");
    return n;
}

// Multiply-adds of a contraction (or elements touched by anything else), to tell small kernels.
double work(const instruction& ins) {
    auto sized = [](const shape& s) { return !s.dynamic() && !s.is_tuple(); };
    bool known = sized(ins.get_shape());
    for (auto i : ins.inputs()) known = known && sized(i->get_shape());
    if (!known) return std::numeric_limits<double>::infinity();   // no kernel takes these; the reference runs them
    const instruction* c = &ins;
    if (ins.get_operator().get_if<ops::fused_epilogue>() && !ins.module_inputs().empty())
        for (const auto& b : *ins.module_inputs()[0])
            if (b.get_operator().traits().contraction) c = &b;
    auto out = static_cast<double>(ins.get_shape().elements());
    const auto& in = c->inputs();
    const operation& op = c->get_operator();
    if (op.get_if<ops::convolution>() && in.size() > 1 && in[1]->get_shape().ndim() > 0)
        return out * static_cast<double>(in[1]->get_shape().elements() / in[1]->get_shape().lens()[0]);
    if (const auto* g = op.get_if<ops::gemm>(); g || op.get_if<ops::dot>()) {
        const auto& a = in[0]->get_shape().lens();
        return out * static_cast<double>(g && g->trans_a ? a[a.size() - 2] : a.back());
    }
    if (op.get_if<ops::attention>()) return 2 * static_cast<double>(in[0]->get_shape().elements() * in[1]->get_shape().lens()[2]);
    for (auto i : in) out += static_cast<double>(i->get_shape().elements());
    return out;
}

// "onednn: 3 instructions (gemm 2, softmax 1)"
std::string placement_line(const std::string& where, const std::map<std::string, std::size_t>& ops) {
    std::size_t n = 0;
    std::string list;
    for (const auto& [name, count] : ops) {
        n += count;
        list += (list.empty() ? "" : ", ") + name + " " + std::to_string(count);
    }
    return where + ": " + std::to_string(n) + " instruction" + (n == 1 ? "" : "s") + " (" + list + ")";
}

// What runs on the reference computes, by op and result type, with the model nodes (the first few)
// so that a slow or unexpected one can be found: "ref compute: 3 (attention half_type 2: 'a',
// 'b'; fused_reduce bf16_type 1: 'ln')". Nothing there for the ops and types the cpu kernels take.
class ref_compute_report {
public:
    void add(const instruction& ins, std::size_t position) {
        const shape& s = ins.get_shape();
        std::string type(dtype_name(s.is_tuple() && !s.sub_shapes().empty() ? s.sub_shapes()[0].type() : s.type()));
        auto& g = groups_[std::string(ins.name()) + " " + type];
        if (g.count++ < shown) g.nodes.push_back(ins.source_name().empty() ? "@" + std::to_string(position) : ins.source_name());
        ++total_;
    }
    std::optional<std::string> line() const {
        if (total_ == 0) return std::nullopt;
        std::string list;
        for (const auto& [key, g] : groups_) {
            list += (list.empty() ? "" : "; ") + key + " " + std::to_string(g.count) + ":";
            for (std::size_t i = 0; i < g.nodes.size(); ++i) list += (i ? ", '" : " '") + g.nodes[i] + "'";
            if (g.count > shown) list += ", ...";
        }
        return "ref compute: " + std::to_string(total_) + " (" + list + ")";
    }

private:
    static constexpr std::size_t shown = 3;
    struct group {
        std::size_t count = 0;
        std::vector<std::string> nodes;
    };
    std::map<std::string, group> groups_;
    std::size_t total_ = 0;
};

class cpu_executable final : public executable {
public:
    cpu_executable(program p, const compile_options& opts, std::vector<target_blob> saved)
        : prog_(std::move(p)), ctx_(thread_count(opts)) {
        omp_set_num_threads(static_cast<int>(ctx_.threads));
        ctx_.fast_math = opts.fast_math;
        for (auto& b : saved) ctx_.saved.emplace(std::move(b.name), std::move(b.bytes));
        std::size_t pos = 0;
        for (const auto& ins : prog_.main()) ctx_.position[&ins] = pos++;
        std::map<std::string, std::map<std::string, std::size_t>> placed;   // where -> op -> count
        std::size_t small = 0;
        ref_compute_report on_ref;
        const double small_work = parallel_work();
        auto make = [&](const instruction& ins) {
            // A primitive runs with the threads it was created with.
            int threads = ctx_.threads > 1 && work(ins) < small_work ? 1 : static_cast<int>(ctx_.threads);
            omp_set_num_threads(threads);
            cpu_kernel k = make_cpu_kernel(ins, ctx_);
            omp_set_num_threads(static_cast<int>(ctx_.threads));
            if (k.run && threads != static_cast<int>(ctx_.threads)) {
                ++small;
                k.run = [run = std::move(k.run), all = static_cast<int>(ctx_.threads)](std::span<const argument> a,
                                                                                      const argument& out) {
                    omp_set_num_threads(1);
                    run(a, out);
                    omp_set_num_threads(all);
                };
            }
            if (k.run) placed[k.where][std::string(ins.name())]++;
            // A region's body is counted as the region (it runs inside the region's compute).
            else if (auto at = ctx_.position.find(&ins); at != ctx_.position.end() && is_computing(ins) && !is_view(ins))
                on_ref.add(ins, at->second);
            if (k.run) ++stats_.kernels;
            return k;
        };
        // main's kernels first, so that their layouts are settled (keep_blocked_layouts) before
        // the memory plan asks which of them accumulate onto an input in place.
        std::unordered_map<const instruction*, cpu_kernel> main_kernels;
        for (const auto& ins : prog_.main())
            if (!ins.get_operator().traits().builtin) main_kernels[&ins] = make(ins);
        keep_blocked_layouts(prog_.main(), ctx_);
        kernel_factory factory = [&](const instruction& ins) {
            auto it = main_kernels.find(&ins);
            if (it == main_kernels.end()) return target_kernel{make(ins).run};   // a fused region's body
            return target_kernel{std::move(it->second.run), accumulates_in_place(ins, ctx_)};
        };
        exec_ = std::make_unique<program_executor>(prog_, factory);
        ctx_.pointwise.build();
        stats_.cache_hits = ctx_.pointwise.cache_hits();
        stats_.arena_bytes = exec_->arena_bytes();
        stats_.memory = exec_->memory_report();
        stats_.placement.push_back(std::to_string(ctx_.threads) + " thread" + (ctx_.threads == 1 ? "" : "s") +
                                   (small ? " (" + std::to_string(small) + " small kernels on 1)" : ""));
        for (const auto& [where, ops] : placed) stats_.placement.push_back(placement_line(where, ops));
        if (auto line = on_ref.line()) stats_.placement.push_back(*line);
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
    // The observer sees every value in kiln's layout (blocked intermediates reordered after their
    // time is taken), so what it compares or dumps is the logical tensor.
    std::vector<argument> run_observed(const param_map& inputs, const instruction_observer& observe) override {
        omp_set_num_threads(static_cast<int>(ctx_.threads));
        instruction_observer logical = [&](const instruction& ins, const argument& value, double ms) {
            observe(ins, logical_value(ctx_, ins, value), ms);
        };
        return exec_->run(inputs, &logical);
    }

private:
    program prog_;
    cpu_context ctx_;
    std::unique_ptr<program_executor> exec_;
    executable_stats stats_;
};

class cpu_target final : public target {
    // The options the pipeline runs with: a low precision the CPU has no arithmetic for computes
    // in float32 (ignored_options says so).
    static compile_options effective(compile_options o) {
        if (!native_precision(o.precision)) o.precision = compute_precision::fp32;
        return o;
    }

public:
    std::string name() const override { return "cpu"; }
    std::vector<pass> passes(const compile_options& opts) const override {
        // Epilogues take only what oneDNN's post-ops express; kernels are chosen per instruction
        // when the executable is built.
        fusion_policy policy;
        policy.epilogue_op = onednn_post_op;
        return generic_passes(effective(opts), policy);
    }
    std::vector<std::string> ignored_options(const compile_options& opts) const override {
        std::vector<std::string> r;
        if (opts.offload_copy) r.push_back("--enable-offload-copy (cpu runs in host memory)");
        if (opts.exhaustive_tune) r.push_back("--exhaustive-tune (cpu takes oneDNN's heuristic choices)");
        for (auto& d : ignored_device_options(opts, "cpu")) r.push_back(std::move(d));
        if (effective(opts).precision != opts.precision)
            r.push_back(opts.precision == compute_precision::fp16
                            ? "--fp16 (this CPU has no AVX512-FP16: cpu computes in float32)"
                            : "--bf16 (this CPU has no AVX512-BF16: cpu computes in float32)");
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
