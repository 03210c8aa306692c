// The gpu (CUDA) target. Its executable holds everything on the device: the literals uploaded
// once, one arena laid out by plan_memory, a device buffer per parameter, pinned staging for
// inputs and outputs, the compiled kernels and library plans, and one stream. A run copies the
// inputs in, launches the steps lowering made (pointers bound at load, so nothing is compiled or
// allocated), copies the outputs back into pinned buffers it owns, and synchronises once; then it
// reads the run-time checks' error slots (error_flags.hpp), copied back with the outputs. A
// cancel or --timeout (core/cancel.hpp) is checked before each launch.
#include <chrono>
#include <cstring>
#include <unordered_map>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/eval.hpp"
#include "core/target.hpp"
#include "passes/analysis/memory_plan.hpp"
#include "targets/gpu/device.hpp"
#include "targets/gpu/error_flags.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/libraries.hpp"
#include "targets/gpu/lowering.hpp"

namespace kiln::gpu {
namespace {

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

// Byte offset of a view's result from its aliased input's, found by running the view's reference
// compute on a sentinel address: views only compute where they point, never read.
std::ptrdiff_t view_offset(const instruction& ins, int alias) {
    static std::byte sentinel[1];
    std::vector<argument> args;
    for (auto in : ins.inputs())
        args.emplace_back(in->get_shape(), in == ins.inputs()[alias] ? sentinel : sentinel, nullptr);
    argument r = ins.get_operator().compute(ins.get_shape(), args, ins.module_inputs());
    return r.data() - sentinel;
}

class gpu_executable final : public executable {
public:
    gpu_executable(program p, const compile_options& opts)
        : prog_(std::move(p)),
          libs_(stream_.get()),
          error_slots_(prog_.main().size() * sizeof(error_slot), "the run-time checks' error slots"),
          errors_(error_slots_.data(), prog_.main().size()) {
        const module& m = prog_.main();
        check_supported(m);
        libs_.allow_tf32 = false;
        plan_ = plan_memory(m);
        arena_ = device_buffer(plan_.arena_bytes, "the arena");
        upload_literals(m);
        for (const auto& name : m.parameter_names()) {
            const instruction& ins = *m.get_parameter(name);
            params_.push_back({name, &ins, device_buffer(ins.get_shape().bytes(), "an input")});
            address_[&ins] = params_.back().buffer.data();
        }
        std::size_t staging = 0;
        for (const auto& p : params_) staging = align_up(staging, 256) + p.ins->get_shape().bytes();
        staging_in_ = pinned_buffer(staging, "input staging");

        lowering_context ctx(m, libs_, [this](const instruction& i) { return address_of(i); });
        ctx.error_flags = &errors_;
        for (const auto& ins : m) {
            if (ins.is_return()) {
                for (auto r : ins.inputs()) outputs_.push_back({&*r, {}});
                continue;
            }
            if (ins.is_param() || ins.is_literal()) continue;
            std::vector<shape> in;
            for (auto i : ins.inputs()) in.push_back(i->get_shape());
            if (int alias = ins.get_operator().output_alias(in); alias >= 0) {
                address_[&ins] = address_of(*ins.inputs()[alias]) + view_offset(ins, alias);
                continue;
            }
            address_[&ins] = arena_.data() + plan_.offsets.at(&ins);
            find_lowering(ins)->lower(ctx, ins);
        }
        kernel_settings ks{current_device().arch, opts.fast_math, true, {}};
        kernel_build_stats kstats;
        auto kernels = kernels_.build(ctx.sources, ks, kstats);
        for (auto& l : ctx.launches) l.kernel = kernels[l.source];
        steps_ = std::move(ctx.steps);
        launches_ = std::move(ctx.launches);
        scratch_ = std::move(ctx.scratch_buffers);
        for (auto& o : outputs_) {
            if (o.ins->get_shape().is_tuple()) fail("gpu: a tuple-valued program output is not supported yet: ", describe(m, *o.ins));
            o.host = pinned_buffer(o.ins->get_shape().bytes(), "an output");
        }
        if (errors_.used()) errors_host_ = pinned_buffer(errors_.bytes(), "the run-time checks' error slots");
        stats_.kernels = kstats.kernels;
        stats_.cache_hits = kstats.cache_hits;
        stats_.arena_bytes = plan_.arena_bytes;
        stats_.weight_bytes = weights_.bytes();
        stats_.memory = plan_.report();
    }

    const program& get_program() const override { return prog_; }
    const executable_stats& stats() const override { return stats_; }
    std::vector<argument> run(const param_map& inputs) override { return run_impl(inputs, nullptr); }
    std::vector<argument> run_observed(const param_map& inputs, const instruction_observer& observe) override {
        return run_impl(inputs, &observe);
    }

private:
    struct param_slot {
        std::string name;
        const instruction* ins;
        device_buffer buffer;
    };
    struct output_slot {
        const instruction* ins;
        pinned_buffer host;
    };

    std::byte* address_of(const instruction& ins) const { return address_.at(&ins); }

    void upload_literals(const module& m) {
        std::size_t total = 0;
        for (const auto& ins : m)
            if (ins.is_literal()) total = align_up(total, 256) + ins.get_shape().bytes();
        weights_ = device_buffer(total, "the literals");
        std::size_t at = 0;
        for (const auto& ins : m) {
            if (!ins.is_literal()) continue;
            at = align_up(at, 256);
            const argument& a = ins.get_literal().get_argument();
            KILN_GPU_CHECK(cudaMemcpy(weights_.data() + at, a.data(), ins.get_shape().bytes(), cudaMemcpyHostToDevice),
                           cat("uploading the literal of ", describe(m, ins)));
            address_[&ins] = weights_.data() + at;
            at += ins.get_shape().bytes();
        }
    }

    void stage_inputs(const param_map& inputs) {
        auto ordered = order_inputs(prog_.main(), inputs);
        std::size_t at = 0;
        for (std::size_t i = 0; i < params_.size(); ++i) {
            const shape& want = params_[i].ins->get_shape();
            const argument& a = ordered[i];
            const shape& got = a.get_shape();
            if (got.type() != want.type() || got.lens() != want.lens())
                fail("input '", params_[i].name, "': expected ", to_string(want), ", got ", to_string(got));
            argument std_copy;
            const argument* src = &a;
            if (got.strides() != want.strides()) {   // another layout: its standard copy, then ours
                if (!want.standard()) fail("input '", params_[i].name, "': expected strides ", to_string(want));
                std_copy = a.copy();
                src = &std_copy;
            }
            at = align_up(at, 256);
            std::memcpy(staging_in_.data() + at, src->data(), want.bytes());
            KILN_GPU_CHECK(cudaMemcpyAsync(params_[i].buffer.data(), staging_in_.data() + at, want.bytes(),
                                           cudaMemcpyHostToDevice, stream_.get()),
                           cat("copying input '", params_[i].name, "' to the device"));
            at += want.bytes();
        }
    }

    std::vector<argument> run_impl(const param_map& inputs, const instruction_observer* observe) {
        stage_inputs(inputs);
        const module& m = prog_.main();
        errors_.clear(stream_.get());
        for (auto& s : steps_) {
            if (run_control* c = current_run_control(); c && c->should_stop()) {
                // What was launched finishes first: the next run reuses the staging buffers.
                stream_.synchronize("finishing the launched kernels of a stopped run");
                check_cancelled([&] { return describe(m, *s.ins); });
            }
            auto t0 = std::chrono::steady_clock::now();
            s.launch(stream_.get());
            if (!observe) continue;
            stream_.synchronize(cat("running ", describe(m, *s.ins)));
            double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            argument host(s.ins->get_shape());
            KILN_GPU_CHECK(cudaMemcpy(host.data(), address_of(*s.ins), s.ins->get_shape().bytes(), cudaMemcpyDeviceToHost),
                           cat("reading back the result of ", describe(m, *s.ins)));
            (*observe)(*s.ins, host, ms);
        }
        std::vector<argument> r;
        for (auto& o : outputs_) {
            const shape& s = o.ins->get_shape();
            KILN_GPU_CHECK(cudaMemcpyAsync(o.host.data(), address_of(*o.ins), s.bytes(), cudaMemcpyDeviceToHost, stream_.get()),
                           cat("copying the output ", describe(m, *o.ins), " to the host"));
            r.emplace_back(s, o.host.data(), nullptr);
        }
        errors_.read(errors_host_.data(), stream_.get());
        stream_.synchronize("running the program (an asynchronous error of an earlier launch; run with verify or perf to find its instruction)");
        errors_.check(errors_host_.data());
        return r;
    }

    program prog_;
    stream stream_;
    library_handles libs_;
    memory_plan plan_;
    device_buffer arena_, weights_;
    std::vector<param_slot> params_;
    pinned_buffer staging_in_;
    std::vector<output_slot> outputs_;
    std::unordered_map<const instruction*, std::byte*> address_;
    kernel_set kernels_;
    std::vector<gpu_step> steps_;
    std::deque<kernel_launch> launches_;
    std::vector<device_buffer> scratch_;
    device_buffer error_slots_;      // one slot per instruction at most; those used are cleared each run
    device_error_flags errors_;
    pinned_buffer errors_host_;
    executable_stats stats_;
};

class gpu_target final : public target {
public:
    gpu_target() : arch_(current_device().arch) {}
    std::string name() const override { return "gpu"; }
    std::string device_arch() const override { return arch_; }
    std::vector<pass> passes(const compile_options& opts) const override { return gpu_passes(opts); }
    std::vector<std::string> ignored_options(const compile_options& opts) const override {
        std::vector<std::string> r;
        if (opts.offload_copy) r.push_back("--enable-offload-copy (the gpu target always copies host inputs and outputs)");
        if (opts.exhaustive_tune) r.push_back("--exhaustive-tune (the gpu target uses the libraries' heuristics so far)");
        return r;
    }
    std::unique_ptr<executable> load(program lowered, const compile_options& opts) const override {
        return std::make_unique<gpu_executable>(std::move(lowered), opts);
    }

private:
    std::string arch_;
};

const bool registered = [] {
    register_target("gpu", [] { return std::unique_ptr<target>(new gpu_target()); });
    return true;
}();

}  // namespace
}  // namespace kiln::gpu
