// The gpu executable of a program the static executable cannot plan (shapes not all static,
// control flow, data-dependent ops): each run copies host inputs to the device (a caller's device
// input is read in place), runs main through the dynamic runner (dynamic_runner.hpp) and copies
// the outputs back (or into the caller's device buffers: main's last lowered instruction writes
// straight into one where its shape allows). It synchronises where the runner reads data back
// (docs/gpu.md lists where) and once at the end; it allocates as it goes, from the runner's
// caching allocator, and compiles a kernel only for a shape it has not seen.
#include <cstdint>
#include <cstring>
#include <optional>

#include "core/error.hpp"
#include "core/eval.hpp"
#include "targets/gpu/device.hpp"
#include "targets/gpu/dynamic_runner.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/libraries.hpp"
#include "targets/gpu/lowering.hpp"

namespace kiln::gpu {
namespace {

bool overlap(const argument& a, const argument& b) {
    const std::byte *p = a.data(), *q = b.data();
    return p < q + b.get_shape().bytes() && q < p + a.get_shape().bytes();
}

class dynamic_executable final : public executable {
public:
    dynamic_executable(program p, const compile_options& opts, const saved_parts& saved)
        : dev_(select_device(opts.device)), prog_(std::move(p)), libs_(stream_.get()),
          runner_(dev_, libs_, stream_.get(), opts) {
        check_supported(prog_.main());
        libs_.allow_tf32 = opts.allow_tf32;
        exhaustive_tune_ = opts.exhaustive_tune;
        for (const auto& b : saved.blobs) {
            if (b.name != library_plans_blob) fail("gpu: the saved program carries a blob '", b.name, "' the gpu target does not take");
            libs_.plans.read_saved(b.bytes.data(), b.bytes.get_shape().bytes());
        }
        runner_.use_saved_kernels(saved.kernels);
        runner_.prepare(prog_.main());
        host_steps_ = host_steps_report(prog_.main());
        update_stats();
        KILN_GPU_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "creating the input-ready event");
        stats_.memory = "no memory plan: the program's shapes are not all static or it holds control flow or "
                        "data-dependent ops, so it runs an instruction at a time from a device caching allocator";
    }
    ~dynamic_executable() override {
        if (ready_) cudaEventDestroy(ready_);
    }

    const program& get_program() const override { return prog_; }
    const executable_stats& stats() const override { return stats_; }
    caller_buffers_in_place in_place() const { return in_place_; }
    dynamic_memory memory() const { return runner_.memory(); }
    std::vector<argument> run(const param_map& inputs) override { return run_impl(host_buffers(inputs), {}, nullptr); }
    std::vector<argument> run_observed(const param_map& inputs, const instruction_observer& observe) override {
        return run_impl(host_buffers(inputs), {}, &observe);
    }
    void run_into(const caller_inputs& inputs, std::span<const caller_buffer> outputs) override {
        std::size_t count = prog_.main().output_shapes().size();
        if (outputs.size() != count) fail(outputs.size(), " output buffers given, the program has ", count, " outputs");
        run_impl(inputs, outputs, nullptr);
    }

    // The kernels loaded so far (those prepare built, and those of the shapes the runs met) and
    // the library plans the runs chose.
    saved_parts saved() const override {
        saved_parts r;
        r.kernels = runner_.binaries();
        if (std::string plans = libs_.plans.serialize(); !plans.empty()) {
            argument bytes(shape(dtype::uint8, std::vector<std::size_t>{plans.size()}));
            std::memcpy(bytes.data(), plans.data(), plans.size());
            r.blobs.push_back({library_plans_blob, std::move(bytes)});
        }
        return r;
    }

private:
    void update_stats() {
        const kernel_build_stats& k = runner_.kernel_stats();
        stats_.kernels = k.kernels;
        stats_.cache_hits = k.cache_hits;
        stats_.saved_kernels = k.from_saved;
        stats_.kernel_build_ms = k.compile_ms;
        stats_.compile_threads = k.threads;
        if (stats_.compiled_kernels.size() != k.compiled.size()) stats_.compiled_kernels = k.compiled;   // grows, never changes
        stats_.notes.clear();
        if (!host_steps_.empty()) stats_.notes.push_back(host_steps_);
        // Its library calls are planned at each launch, where timing candidates would cost every run.
        if (exhaustive_tune_)
            stats_.notes.push_back("--exhaustive-tune not applied: this program runs an instruction at a time, and its "
                                   "library calls take the heuristics' first choice");
        // Each launch of a cuBLASLt or cuDNN instruction looks its plan up again (a Loop body's
        // matmul once per iteration), so these count launches, not distinct plans.
        if (libs_.plans.from_saved + libs_.plans.queried)
            stats_.notes.push_back(cat("library plan lookups: ", libs_.plans.from_saved + libs_.plans.queried,
                                       ", one per launch of a library call (from the saved program ", libs_.plans.from_saved,
                                       ", asked of the heuristics ", libs_.plans.queried, ")"));
    }

    static caller_inputs host_buffers(const param_map& inputs) {
        caller_inputs r;
        for (const auto& [name, a] : inputs) r.emplace(name, caller_buffer{a});
        return r;
    }

    // A caller's device input, read in place: its type and lens fit the parameter (dynamic dims
    // bound), it is contiguous and on this device; the stream waits for the stream it is ready on.
    argument device_input(const instruction& param, const caller_buffer& b) {
        const module& m = prog_.main();
        std::string label = cat("input '", m.parameter_name(param), "'");
        argument a = bind_input(m, param, b.arg);
        if (!a.get_shape().standard())
            fail(label, ": a device buffer must be contiguous (row-major), got ", to_string(a.get_shape()));
        if (std::string why = check_device_pointer(a.data(), dev_); !why.empty())
            fail(label, " is given as a device buffer, but ", why);
        auto* on = static_cast<cudaStream_t>(b.ready_on);
        KILN_GPU_CHECK(cudaEventRecord(ready_, on ? on : cudaStreamLegacy), cat("waiting for ", label));
        KILN_GPU_CHECK(cudaStreamWaitEvent(stream_.get(), ready_, 0), cat("waiting for ", label));
        ++in_place_.inputs;
        return argument(a.get_shape(), a.data(), nullptr);
    }

    argument host_input(const instruction& param, const argument& given) {
        const module& m = prog_.main();
        argument a = bind_input(m, param, given);
        if (!a.get_shape().is_tensor() || a.get_shape().type() == dtype::string)   // a sequence, optional, strings
            return runner_.upload(a, cat("copying input '", m.parameter_name(param), "' to the device"));
        if (!a.get_shape().standard()) a = a.copy();
        argument d = runner_.allocate(a.get_shape());
        // From pageable memory: the copy has read it when the call returns.
        KILN_GPU_CHECK(cudaMemcpyAsync(d.data(), a.data(), a.get_shape().bytes(), cudaMemcpyHostToDevice, stream_.get()),
                       cat("copying input '", m.parameter_name(param), "' to the device"));
        return d;
    }

    // Main's results computed by a lowering go straight into the caller's device output buffers
    // that are on this device, 256-byte aligned (as library plans assume) and apart from every
    // caller device buffer (an input still read, another output).
    void choose_destinations(const caller_inputs& inputs, std::span<const caller_buffer> into) {
        const module& m = prog_.main();
        const instruction& ret = *m.get_return();
        auto apart = [&](std::size_t i) {
            const argument& a = into[i].arg;
            if (reinterpret_cast<std::uintptr_t>(a.data()) % 256 != 0 || !a.get_shape().standard()) return false;
            for (const auto& [name, b] : inputs)
                if (b.on_device && overlap(b.arg, a)) return false;
            for (std::size_t j = 0; j < into.size(); ++j)
                if (j != i && into[j].on_device && overlap(into[j].arg, a)) return false;
            for (std::size_t j = 0; j < i; ++j)   // returned twice: the later output is copied
                if (ret.inputs()[j] == ret.inputs()[i]) return false;
            return true;
        };
        for (std::size_t i = 0; i < into.size(); ++i) {
            if (!into[i].on_device) continue;
            if (std::string why = check_device_pointer(into[i].arg.data(), dev_); !why.empty())
                fail(output_label(i), " is given as a device buffer, but ", why);
            if (apart(i)) runner_.write_into(*ret.inputs()[i], into[i].arg);
        }
    }

    std::string output_label(std::size_t i) const {
        const module& m = prog_.main();
        return cat("output ", i, " (", describe(m, *m.get_return()->inputs().at(i)), ")");
    }

    // Result i into the caller's device buffer: already there when its instruction wrote it in
    // place, else one device-to-device copy (a copy kernel to the row-major layout for a view).
    void to_device_output(std::size_t i, const argument& v, const argument& buf) {
        std::string label = output_label(i);
        const shape &s = v.get_shape(), &b = buf.get_shape();
        if (!s.is_tensor()) fail(label, " is ", to_string(s), "; a device buffer takes one tensor");
        if (s.type() != b.type() || s.lens() != b.lens())
            fail(label, " computes ", to_string(shape(s.type(), s.lens())), " but its buffer is ", to_string(b));
        if (!b.standard()) fail(label, ": a device buffer must be contiguous (row-major), got ", to_string(b));
        if (s.elements() == 0) return;
        if (v.data() == buf.data() && s.standard()) {
            ++in_place_.outputs;
            return;
        }
        if (s.standard()) {
            KILN_GPU_CHECK(cudaMemcpyAsync(buf.data(), v.data(), s.bytes(), cudaMemcpyDeviceToDevice, stream_.get()),
                           cat("copying ", label, " on the device"));
            return;
        }
        std::vector<argument> in{v};
        runner_.launch(*prog_.main().get_return()->inputs().at(i), make_op("contiguous"), in, &buf);
    }

    std::vector<argument> run_impl(const caller_inputs& inputs, std::span<const caller_buffer> into,
                                   const instruction_observer* observe) {
        use_device(dev_);
        const module& m = prog_.main();
        auto params = m.parameters();
        param_map args;
        for (const auto& [name, b] : inputs) args.emplace(name, b.arg);
        order_inputs(m, args);   // a missing or unknown input is an error naming it
        std::vector<argument> r;
        try {
            std::vector<argument> in;
            for (const auto& p : params) {
                const caller_buffer& b = inputs.find(m.parameter_name(*p))->second;
                in.push_back(b.on_device ? device_input(*p, b) : host_input(*p, b.arg));
            }
            choose_destinations(inputs, into);
            auto outs = runner_.run(m, in, observe);
            for (std::size_t i = 0; i < outs.size(); ++i) {
                if (i < into.size() && into[i].on_device) {
                    to_device_output(i, outs[i], into[i].arg);
                    continue;
                }
                // Synchronises: after it every launch has run.
                r.push_back(runner_.to_host(outs[i], "copying an output to the host"));
            }
            stream_.synchronize("running the program (an asynchronous error of an earlier launch; run with verify or "
                                "perf to find its instruction)");
        } catch (...) {
            cudaStreamSynchronize(stream_.get());
            runner_.finish_run();   // a failed check explains a later error better
            throw;
        }
        runner_.finish_run();
        update_stats();
        for (std::size_t i = 0, h = 0; i < into.size(); ++i)
            if (!into[i].on_device) copy_result(r[h++], into[i].arg, cat("#", i));
        return r;
    }

    const device_info& dev_;
    program prog_;
    stream stream_;
    library_handles libs_;
    dynamic_runner runner_;
    cudaEvent_t ready_ = nullptr;
    caller_buffers_in_place in_place_;
    executable_stats stats_;
    std::string host_steps_;   // the string ops that run on the host, reported with the stats
    bool exhaustive_tune_ = false;
};

}  // namespace

std::unique_ptr<executable> make_dynamic_executable(program p, const compile_options& opts, const saved_parts& saved) {
    return std::make_unique<dynamic_executable>(std::move(p), opts, saved);
}

std::optional<caller_buffers_in_place> dynamic_in_place_counts(const executable& e) {
    auto* d = dynamic_cast<const dynamic_executable*>(&e);
    if (!d) return std::nullopt;
    return d->in_place();
}

std::optional<dynamic_memory> dynamic_memory_of(const executable& e) {
    auto* d = dynamic_cast<const dynamic_executable*>(&e);
    if (!d) return std::nullopt;
    return d->memory();
}

}  // namespace kiln::gpu
