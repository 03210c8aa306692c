// The gpu executable of a program the static executable cannot plan (shapes not all static,
// control flow, data-dependent ops): each run copies the inputs to the device, runs main through
// the dynamic runner (dynamic_runner.hpp) and copies the outputs back. It synchronises where the
// runner reads data back (docs/gpu.md lists where) and once at the end; it allocates as it goes,
// from the runner's caching allocator, and compiles a kernel only for a shape it has not seen.
#include "core/error.hpp"
#include "core/eval.hpp"
#include "targets/gpu/device.hpp"
#include "targets/gpu/dynamic_runner.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/libraries.hpp"
#include "targets/gpu/lowering.hpp"

namespace kiln::gpu {
namespace {

class dynamic_executable final : public executable {
public:
    dynamic_executable(program p, const compile_options& opts)
        : dev_(select_device(opts.device)), prog_(std::move(p)), libs_(stream_.get()),
          runner_(dev_, libs_, stream_.get(), opts) {
        check_supported(prog_.main());
        libs_.allow_tf32 = opts.allow_tf32;
        stats_.memory = "no memory plan: the program's shapes are not all static or it holds control flow or "
                        "data-dependent ops, so it runs an instruction at a time from a device caching allocator";
        if (std::string steps = host_steps_report(prog_.main()); !steps.empty()) stats_.notes.push_back(steps);
    }

    const program& get_program() const override { return prog_; }
    const executable_stats& stats() const override { return stats_; }
    std::vector<argument> run(const param_map& inputs) override { return run_impl(inputs, nullptr); }
    std::vector<argument> run_observed(const param_map& inputs, const instruction_observer& observe) override {
        return run_impl(inputs, &observe);
    }
    void run_into(const caller_inputs& inputs, std::span<const caller_buffer> outputs) override {
        for (const auto& [name, b] : inputs)
            if (b.on_device)
                fail("input '", name, "' is a device buffer, but this gpu program runs an instruction at a time ",
                     "(its shapes are not all static, or it holds control flow or data-dependent ops), which takes ",
                     "host buffers only so far");
        for (std::size_t i = 0; i < outputs.size(); ++i)
            if (outputs[i].on_device)
                fail("output ", i, " is a device buffer, but this gpu program runs an instruction at a time, which ",
                     "takes host buffers only so far");
        executable::run_into(inputs, outputs);
    }

private:
    std::vector<argument> run_impl(const param_map& inputs, const instruction_observer* observe) {
        use_device(dev_);
        const module& m = prog_.main();
        auto params = m.parameters();
        auto ordered = order_inputs(m, inputs);
        std::vector<argument> in;
        for (std::size_t i = 0; i < params.size(); ++i) {
            argument a = bind_input(m, *params[i], ordered[i]);
            if (!a.get_shape().is_tensor() || a.get_shape().type() == dtype::string) {   // a sequence, optional, strings
                in.push_back(runner_.upload(a, cat("copying input '", m.parameter_name(*params[i]), "' to the device")));
                continue;
            }
            if (!a.get_shape().standard()) a = a.copy();
            argument d = runner_.allocate(a.get_shape());
            // From pageable memory: the copy has read it when the call returns.
            KILN_GPU_CHECK(cudaMemcpyAsync(d.data(), a.data(), a.get_shape().bytes(), cudaMemcpyHostToDevice, stream_.get()),
                           cat("copying input '", m.parameter_name(*params[i]), "' to the device"));
            in.push_back(d);
        }
        std::vector<argument> r;
        try {
            auto outs = runner_.run(m, in, observe);
            stream_.synchronize("running the program (an asynchronous error of an earlier launch; run with verify or "
                                "perf to find its instruction)");
            for (const auto& o : outs) r.push_back(runner_.to_host(o, "copying an output to the host"));
        } catch (...) {
            cudaStreamSynchronize(stream_.get());
            runner_.finish_run();   // a failed check explains a later error better
            throw;
        }
        runner_.finish_run();
        stats_.kernels = runner_.kernel_stats().kernels;
        stats_.cache_hits = runner_.kernel_stats().cache_hits;
        return r;
    }

    const device_info& dev_;
    program prog_;
    stream stream_;
    library_handles libs_;
    dynamic_runner runner_;
    executable_stats stats_;
};

}  // namespace

std::unique_ptr<executable> make_dynamic_executable(program p, const compile_options& opts) {
    return std::make_unique<dynamic_executable>(std::move(p), opts);
}

}  // namespace kiln::gpu
