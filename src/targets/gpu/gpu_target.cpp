// The gpu (CUDA) target. Its executable holds everything on the device: the literals uploaded
// once, one arena laid out by plan_memory, a device buffer per parameter, pinned staging for
// inputs and outputs, the compiled kernels and library plans, and one stream. A run copies the
// inputs in, launches the steps lowering made (pointers bound at load, so nothing is compiled or
// allocated), copies the outputs back into pinned buffers it owns, and synchronises once; then it
// reads the run-time checks' error slots (error_flags.hpp), copied back with the outputs. Inputs
// and outputs may also be the caller's device buffers: a replay of the CUDA graph reads and writes
// them in place where it can (graph_bindings.hpp), other runs copy them on the device.
// A cancel or --timeout (core/cancel.hpp) is checked before each launch: each step's when the
// steps launch one by one, the graph's when a run replays the CUDA graph.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/eval.hpp"
#include "core/target.hpp"
#include "passes/analysis/memory_plan.hpp"
#include "targets/gpu/conv_epilogue.hpp"
#include "targets/gpu/device.hpp"
#include "targets/gpu/dynamic_runner.hpp"
#include "targets/gpu/error_flags.hpp"
#include "targets/gpu/flash_attention.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/graph_bindings.hpp"
#include "targets/gpu/layout_nhwc.hpp"
#include "targets/gpu/libraries.hpp"
#include "targets/gpu/lowering.hpp"
#include "targets/gpu/tuning_store.hpp"

namespace kiln::gpu {
namespace {

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

// A result in device memory at `at`: a tensor, or a tuple whose elements lie one after another as
// the memory plan lays them out.
argument device_value(const shape& s, std::byte* at) {
    if (!s.is_tuple()) return argument(s, at, nullptr);
    std::vector<argument> elems;
    for (std::size_t i = 0; i < s.sub_shapes().size(); ++i)
        elems.push_back(device_value(s.sub_shapes()[i], at + tuple_element_offset(s, i)));
    return argument(std::move(elems));
}

// A view's result (a transpose, split's pieces, a tuple's element) found by running its
// reference compute over its inputs' device values: views only compute where they point, never
// read, so the result points into the device memory it views.
argument view_value(const instruction& ins, std::vector<argument> inputs) {
    return ins.get_operator().compute(ins.get_shape(), inputs, ins.module_inputs());
}

// The tensors of a value in order (a tuple's elements, depth first).
void tensors_of(const argument& a, std::vector<argument>& out) {
    if (!a.get_shape().is_tuple()) return out.push_back(a);
    for (const auto& e : a.sub_arguments()) tensors_of(e, out);
}

// A value of the same structure as `like` built from its tensors in order.
argument rebuild(const argument& like, std::span<const argument> tensors, std::size_t& next) {
    if (!like.get_shape().is_tuple()) return tensors[next++];
    std::vector<argument> elems;
    for (const auto& e : like.sub_arguments()) elems.push_back(rebuild(e, tensors, next));
    return argument(std::move(elems));
}

// A device value copied into fresh host memory (run_observed, after the stream synchronised).
argument read_back(const argument& dev, const std::string& what) {
    std::vector<argument> tensors, host;
    tensors_of(dev, tensors);
    for (const auto& t : tensors) {
        argument h(t.get_shape());
        KILN_GPU_CHECK(cudaMemcpy(h.data(), t.data(), t.get_shape().bytes(), cudaMemcpyDeviceToHost), what);
        host.push_back(h);
    }
    std::size_t next = 0;
    return rebuild(dev, host, next);
}

// Graphs can be turned off to measure what they save (docs/gpu.md lists the variable).
bool graphs_enabled() {
    const char* v = std::getenv("KILN_GPU_GRAPHS");
    return !v || std::string_view(v) != "0";
}

class gpu_executable final : public executable {
public:
    gpu_executable(program p, const compile_options& opts, const saved_parts& saved)
        : dev_(select_device(opts.device)),
          prog_(std::move(p)),
          libs_(stream_.get()),
          error_slots_(prog_.main().size() * sizeof(error_slot), "the run-time checks' error slots"),
          errors_(error_slots_.data(), prog_.main().size()) {
        const module& m = prog_.main();
        auto t0 = std::chrono::steady_clock::now();
        check_supported(m);
        libs_.allow_tf32 = opts.allow_tf32;
        // The tuning store lives beside the kernel cache (in memory only with --no-cache).
        if (opts.exhaustive_tune)
            libs_.tuning = std::make_unique<tuning_store>(opts.kernel_cache ? kernel_cache_dir(kernel_settings{}) : "");
        read_saved_plans(saved.blobs);
        plan_ = plan_memory(m);
        arena_ = device_buffer(plan_.arena_bytes, "the arena");
        auto t1 = std::chrono::steady_clock::now();
        upload_literals(m);
        auto t2 = std::chrono::steady_clock::now();
        for (const auto& name : m.parameter_names()) {
            const instruction& ins = *m.get_parameter(name);
            params_.push_back({name, &ins, device_buffer(ins.get_shape().bytes(), "an input")});
            values_[&ins] = argument(ins.get_shape(), params_.back().buffer.data(), nullptr);
        }
        std::size_t staging = 0;
        for (const auto& p : params_) staging = align_up(staging, 256) + p.ins->get_shape().bytes();
        staging_in_ = pinned_buffer(staging, "input staging");
        KILN_GPU_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "creating the input-ready event");

        lowering_context ctx(m, libs_, [this](const instruction& i) { return address_of(i); });
        ctx.error_flags = &errors_;
        ctx.layouts = choose_layouts(m);
        for (const auto& ins : m) {
            if (ins.is_return()) {
                for (auto r : ins.inputs()) outputs_.push_back({&*r, {}});
                continue;
            }
            if (ins.is_param() || ins.is_literal()) continue;
            if (needs_no_step(ins)) {
                std::vector<argument> in;
                for (auto i : ins.inputs()) in.push_back(values_.at(&*i));
                values_[&ins] = view_value(ins, std::move(in));
                continue;
            }
            values_[&ins] = device_value(ctx.layout(ins), arena_.data() + plan_.offsets.at(&ins));
            find_lowering(ins)->lower(ctx, ins);
        }
        auto t3 = std::chrono::steady_clock::now();
        build_kernels(ctx, opts, saved.kernels);
        auto t4 = std::chrono::steady_clock::now();
        auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
        // The lowering makes the cuBLASLt and cuDNN plans: their heuristics and, on first use, the
        // libraries' start-up fall in it.
        stats_.build_phases = {{"device setup and memory plan", ms(t0, t1)}, {"weights uploaded", ms(t1, t2)},
                               {"lowered (library plans chosen)", ms(t2, t3)}, {"kernels", ms(t3, t4)}};
        steps_ = std::move(ctx.steps);
        launches_ = std::move(ctx.launches);
        scratch_ = std::move(ctx.scratch_buffers);
        for (auto& o : outputs_) {
            tensors_of(values_.at(o.ins), o.device);
            for (const auto& t : o.device) o.host.emplace_back(t.get_shape().bytes(), "an output");
        }
        if (errors_.used()) errors_host_ = pinned_buffer(errors_.bytes(), "the run-time checks' error slots");
        stats_.arena_bytes = plan_.arena_bytes;
        stats_.weight_bytes = weights_.bytes();
        stats_.memory = plan_.report();
        if (libs_.tuning && !libs_.tuning->report().empty()) stats_.notes.push_back(libs_.tuning->report());
        if (libs_.plans.from_saved + libs_.plans.queried)
            stats_.notes.push_back(cat("library plans: ", libs_.plans.from_saved + libs_.plans.queried, " (from the saved program ",
                                       libs_.plans.from_saved, ", asked of the heuristics ", libs_.plans.queried, ")"));
        if (std::string note = attention_kernels_note(m); !note.empty()) stats_.notes.push_back(note);
        if (std::string note = conv_epilogue_note(ctx.conv_epilogues); !note.empty()) stats_.notes.push_back(note);
    }
    ~gpu_executable() override {
        if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
        if (graph_) cudaGraphDestroy(graph_);
        if (ready_) cudaEventDestroy(ready_);
        for (auto e : timing_)
            if (e) cudaEventDestroy(e);
    }

    const program& get_program() const override { return prog_; }
    const executable_stats& stats() const override { return stats_; }
    caller_buffers_in_place in_place() const { return in_place_; }
    std::vector<argument> run(const param_map& inputs) override {
        caller_inputs in;
        for (const auto& [name, a] : inputs) in.emplace(name, caller_buffer{a});
        return run_impl(in, {}, nullptr);
    }
    std::vector<argument> run_observed(const param_map& inputs, const instruction_observer& observe) override {
        caller_inputs in;
        for (const auto& [name, a] : inputs) in.emplace(name, caller_buffer{a});
        return run_impl(in, {}, &observe);
    }
    void run_into(const caller_inputs& inputs, std::span<const caller_buffer> outputs) override {
        if (outputs.size() != outputs_.size())
            fail(outputs.size(), " output buffers given, the program has ", outputs_.size(), " outputs");
        run_impl(inputs, outputs, nullptr);
    }
    bool enable_device_timing() override {
        use_device(dev_);
        for (auto& e : timing_)
            if (!e) KILN_GPU_CHECK(cudaEventCreate(&e), "creating perf's timing events");
        return true;
    }
    double last_run_device_ms() const override { return device_ms_; }
    saved_parts saved() const override {
        saved_parts r;
        for (const auto& [key, cubin] : kernels_.binaries())
            r.kernels.push_back({key, {reinterpret_cast<const std::uint8_t*>(cubin.data()),
                               reinterpret_cast<const std::uint8_t*>(cubin.data()) + cubin.size()}});
        if (std::string plans = libs_.plans.serialize(); !plans.empty()) {
            argument bytes(shape(dtype::uint8, std::vector<std::size_t>{plans.size()}));
            std::memcpy(bytes.data(), plans.data(), plans.size());
            r.blobs.push_back({library_plans_blob, std::move(bytes)});
        }
        return r;
    }

private:
    struct param_slot {
        std::string name;
        const instruction* ins;
        device_buffer buffer;
    };
    struct output_slot {
        const instruction* ins;
        std::vector<argument> device;      // its tensors (a tuple's elements in order)
        std::vector<pinned_buffer> host;   // one per tensor
    };

    // A tuple's address is its first element's, where a lowering finds the planned buffer (a
    // tuple reaches a lowering only as the result it computes; its elements are views' inputs).
    std::byte* address_of(const instruction& ins) const {
        const argument& v = values_.at(&ins);
        return v.get_shape().is_tuple() ? v.sub_arguments().at(0).data() : v.data();
    }

    // A saved program's library plans (cuBLASLt algorithms, cuDNN's choices): lowering takes them
    // instead of asking the heuristics.
    void read_saved_plans(const std::vector<target_blob>& blobs) {
        for (const auto& b : blobs) {
            if (b.name != library_plans_blob) fail("gpu: the saved program carries a blob '", b.name, "' the gpu target does not take");
            libs_.plans.read_saved(b.bytes.data(), b.bytes.get_shape().bytes());
        }
    }

    void build_kernels(lowering_context& ctx, const compile_options& opts, std::span<const kernel_binary> saved) {
        std::map<std::string, std::string> cubins;
        for (const auto& k : saved) cubins.emplace(k.name, std::string(k.code.begin(), k.code.end()));
        kernel_settings_ = {dev_.arch, opts.fast_math, opts.kernel_cache, {}};
        kernel_build_stats kstats;
        auto kernels = kernels_.build(ctx.sources, kernel_settings_, kstats, cubins);
        for (auto& l : ctx.launches) l.kernel = kernels[l.source];
        stats_.kernels = kstats.kernels;
        stats_.cache_hits = kstats.cache_hits;
        stats_.saved_kernels = kstats.from_saved;
        stats_.kernel_build_ms = kstats.compile_ms;
        stats_.compile_threads = kstats.threads;
        stats_.compiled_kernels = std::move(kstats.compiled);
    }

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
            values_[&ins] = argument(ins.get_shape(), weights_.data() + at, nullptr);
            at += ins.get_shape().bytes();
        }
        // The DMAs of those pageable copies may still run when cudaMemcpy returns, and the stream
        // is non-blocking: the steps must not start before they complete.
        KILN_GPU_CHECK(cudaStreamSynchronize(nullptr), "uploading the literals");
    }

    // Output i, a strided view (a transpose, a slice), into a caller's dense device buffer: a copy
    // kernel to the row-major layout, compiled the first time that output needs it.
    void copy_to_dense(std::size_t i, std::byte* dst, const std::byte* src, const std::string& label) {
        const shape& s = outputs_[i].ins->get_shape();
        if (s.elements() == 0) return;
        auto [it, fresh] = dense_copies_.try_emplace(i, nullptr);
        if (fresh) {
            elementwise_spec spec{{s}, shape(s.type(), s.lens()), "const auto y = x0;"};
            kernel_build_stats built;
            it->second = dense_kernels_.build({make_elementwise_kernel(spec, cat(label, " (", describe(prog_.main(), *outputs_[i].ins), ")"))},
                                              kernel_settings_, built).at(0);
        }
        void* d = dst;
        const void* x = src;
        void* args[] = {&d, &x};
        launch_dims dims = elementwise_launch(s.elements());
        launch_kernel(it->second, dims.grid, dims.block, args, stream_.get(), cat("copying ", label, " on the device"));
    }

    // A device buffer of the caller: on this device, in the standard layout of `want`.
    void check_device_buffer(const caller_buffer& b, const shape& want, const std::string& label) const {
        const shape& got = b.arg.get_shape();
        if (got.type() != want.type() || got.lens() != want.lens())
            fail(label, ": expected ", to_string(want), ", got ", to_string(got));
        if (!got.standard()) fail(label, ": a device buffer must be contiguous (row-major), got ", to_string(got));
        if (std::string why = check_device_pointer(b.arg.data(), dev_); !why.empty())
            fail(label, " is given as a device buffer, but ", why);
    }

    // Host inputs go through pinned staging; device inputs are copied on the device after the
    // stream they are ready on (the parameters' buffers stay where the steps were bound).
    void stage_inputs(const caller_inputs& inputs, std::span<std::byte* const> bound) {
        param_map args;
        for (const auto& [name, b] : inputs) args.emplace(name, b.arg);
        auto ordered = order_inputs(prog_.main(), args);
        std::size_t at = 0;
        for (std::size_t i = 0; i < params_.size(); ++i) {
            const shape& want = params_[i].ins->get_shape();
            const caller_buffer& b = inputs.find(params_[i].name)->second;
            std::string label = cat("input '", params_[i].name, "'");
            if (b.on_device) {
                check_device_buffer(b, want, label);
                auto* on = static_cast<cudaStream_t>(b.ready_on);
                KILN_GPU_CHECK(cudaEventRecord(ready_, on ? on : cudaStreamLegacy), cat("waiting for ", label));
                KILN_GPU_CHECK(cudaStreamWaitEvent(stream_.get(), ready_, 0), cat("waiting for ", label));
                if (bound[i]) continue;   // the graph reads it in place
                KILN_GPU_CHECK(cudaMemcpyAsync(params_[i].buffer.data(), b.arg.data(), want.bytes(),
                                               cudaMemcpyDeviceToDevice, stream_.get()),
                               cat("copying ", label, " on the device"));
                continue;
            }
            const argument& a = ordered[i];
            const shape& got = a.get_shape();
            if (got.type() != want.type() || got.lens() != want.lens())
                fail(label, ": expected ", to_string(want), ", got ", to_string(got));
            argument std_copy;
            const argument* src = &a;
            if (got.strides() != want.strides()) {   // another layout: its standard copy, then ours
                if (!want.standard()) fail(label, ": expected strides ", to_string(want));
                std_copy = a.copy();
                src = &std_copy;
            }
            at = align_up(at, 256);
            std::memcpy(staging_in_.data() + at, src->data(), want.bytes());
            KILN_GPU_CHECK(cudaMemcpyAsync(params_[i].buffer.data(), staging_in_.data() + at, want.bytes(),
                                           cudaMemcpyHostToDevice, stream_.get()),
                           cat("copying ", label, " to the device"));
            at += want.bytes();
        }
    }

    void launch_steps(const instruction_observer* observe, std::span<std::byte* const> bound) {
        const module& m = prog_.main();
        errors_.clear(stream_.get());
        if (!observe && graph_exec_) {
            check_cancelled([&] { return cat("the CUDA graph of ", m.name(), " (not launched)"); });
            if (bindings_) bindings_->bind(graph_exec_, bound);
            KILN_GPU_CHECK(cudaGraphLaunch(graph_exec_, stream_.get()), "launching the program's CUDA graph");
            return;
        }
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
            (*observe)(*s.ins, read_back(values_.at(s.ins), cat("reading back the result of ", describe(m, *s.ins))), ms);
        }
    }

    // After the first run (which loaded every kernel and library module lazily), the steps are
    // captured once as a CUDA graph that later runs replay: one launch instead of one per step.
    // Capturing runs nothing; a step that cannot be captured (a host sync, an allocation) fails
    // here naming its instruction.
    void capture_graph() {
        if (graph_exec_ || steps_.empty() || !graphs_enabled()) return;   // no steps: nothing to replay
        const module& m = prog_.main();
        KILN_GPU_CHECK(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal), "capturing the program");
        cudaGraph_t graph = nullptr;
        try {
            for (auto& s : steps_) s.launch(stream_.get());
        } catch (const error& e) {
            cudaStreamEndCapture(stream_.get(), &graph);
            if (graph) cudaGraphDestroy(graph);
            cudaGetLastError();
            fail("gpu: capturing the program as a CUDA graph failed (KILN_GPU_GRAPHS=0 runs without one): ", e.what());
        }
        KILN_GPU_CHECK(cudaStreamEndCapture(stream_.get(), &graph), "capturing the program as a CUDA graph");
        graph_ = graph;   // kept: binding caller buffers names its nodes
        KILN_GPU_CHECK(cudaGraphInstantiate(&graph_exec_, graph, 0), cat("instantiating the CUDA graph of ", m.name()));
        bindings_ = std::make_unique<graph_bindings>(graph_, bindable_ranges());
    }

    // What a replay can bind to caller buffers: each parameter's buffer, then each output's range
    // of the arena where only that output lives there (anything else the plan puts in that range
    // lies wholly inside it, so it moves along; a view of a parameter or literal is not bound).
    std::vector<byte_range> bindable_ranges() const {
        std::vector<byte_range> r;
        for (const auto& p : params_) r.push_back({p.buffer.bytes() ? p.buffer.data() : nullptr, p.buffer.bytes()});
        auto overlap = [](const std::byte* a, std::size_t an, const std::byte* b, std::size_t bn) { return a < b + bn && b < a + an; };
        for (std::size_t i = 0; i < outputs_.size(); ++i) {
            const shape& s = outputs_[i].ins->get_shape();
            // A tuple's elements live apart, and a strided view is not laid out as the caller's
            // dense buffer: both copied.
            if (!s.is_tensor() || !s.standard()) {
                r.push_back({});
                continue;
            }
            std::byte* a = address_of(*outputs_[i].ins);
            std::size_t n = s.bytes();
            bool own = n > 0 && a >= arena_.data() && a + n <= arena_.data() + plan_.arena_bytes;
            for (std::size_t j = 0; own && j < outputs_.size(); ++j)
                own = j == i || !outputs_[j].ins->get_shape().is_tensor() ||
                      !overlap(a, n, address_of(*outputs_[j].ins), outputs_[j].ins->get_shape().bytes());
            for (const auto& [ins, off] : plan_.offsets) {
                std::byte* b = arena_.data() + off;
                std::size_t bn = ins->get_shape().bytes();
                own = own && (!overlap(a, n, b, bn) || (b >= a && b + bn <= a + n));
            }
            r.push_back(own ? byte_range{a, n} : byte_range{});
        }
        return r;
    }

    // The caller buffers this run binds into the graph (null: copied), by bindable range: device
    // buffers of a graph replay, 256-byte aligned (as the library plans assume); an output buffer
    // that overlaps an input's or another output's is copied after the graph instead.
    std::vector<std::byte*> choose_bindings(const caller_inputs& inputs, std::span<const caller_buffer> into,
                                            const instruction_observer* observe) {
        std::vector<std::byte*> bound(params_.size() + outputs_.size(), nullptr);
        if (observe || !graph_exec_ || !bindings_) return bound;
        auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 256 == 0; };
        std::vector<std::pair<const std::byte*, std::size_t>> taken;   // caller device memory in use
        for (std::size_t i = 0; i < params_.size(); ++i) {
            auto it = inputs.find(params_[i].name);
            if (it == inputs.end() || !it->second.on_device) continue;
            taken.emplace_back(it->second.arg.data(), it->second.arg.get_shape().bytes());
            if (bindings_->bindable(i) && aligned(it->second.arg.data())) bound[i] = it->second.arg.data();
        }
        for (std::size_t i = 0; i < into.size() && i < outputs_.size(); ++i) {
            if (!into[i].on_device || !bindings_->bindable(params_.size() + i) || !aligned(into[i].arg.data())) continue;
            check_device_buffer(into[i], outputs_[i].ins->get_shape(), cat("output ", i));   // before the graph writes it
            const std::byte* b = into[i].arg.data();
            std::size_t n = into[i].arg.get_shape().bytes();
            bool apart = true;
            for (const auto& [t, tn] : taken) apart = apart && (b + n <= t || t + tn <= b);
            taken.emplace_back(b, n);
            if (apart) bound[params_.size() + i] = into[i].arg.data();
        }
        for (std::size_t i = 0; i < bound.size(); ++i)
            if (bound[i]) ++(i < params_.size() ? in_place_.inputs : in_place_.outputs);
        return bound;
    }

    // Where a tensor at `a` is after the run: in the caller's buffer of a bound parameter when it
    // is a view of it, else at `a`.
    const std::byte* source_of(const std::byte* a, std::span<std::byte* const> bound) const {
        for (std::size_t i = 0; i < params_.size(); ++i) {
            const std::byte* b = params_[i].buffer.data();
            if (bound[i] && a >= b && a < b + params_[i].buffer.bytes()) return bound[i] + (a - b);
        }
        return a;
    }

    std::vector<argument> run_impl(const caller_inputs& inputs, std::span<const caller_buffer> into,
                                   const instruction_observer* observe) {
        use_device(dev_);
        const module& m = prog_.main();
        std::vector<std::byte*> bound = choose_bindings(inputs, into, observe);
        stage_inputs(inputs, bound);
        // perf's device clock brackets the launches (the graph's replay), not the copies.
        bool timed = timing_[0] && !observe;
        if (timed) KILN_GPU_CHECK(cudaEventRecord(timing_[0], stream_.get()), "recording perf's start event");
        launch_steps(observe, bound);
        if (timed) KILN_GPU_CHECK(cudaEventRecord(timing_[1], stream_.get()), "recording perf's end event");
        std::vector<argument> r;
        for (std::size_t i = 0; i < outputs_.size(); ++i) {
            const output_slot& o = outputs_[i];
            const shape& s = o.ins->get_shape();
            if (i < into.size() && into[i].on_device) {
                if (bound[params_.size() + i]) continue;   // the graph wrote it in place
                std::string label = cat("output ", i);
                if (s.is_tuple()) fail(label, " is a tuple (", describe(m, *o.ins), "); a device buffer takes one tensor");
                check_device_buffer(into[i], s, label);
                if (!s.standard()) {
                    copy_to_dense(i, into[i].arg.data(), source_of(address_of(*o.ins), bound), label);
                    continue;
                }
                KILN_GPU_CHECK(cudaMemcpyAsync(into[i].arg.data(), source_of(address_of(*o.ins), bound), s.bytes(), cudaMemcpyDeviceToDevice,
                                               stream_.get()),
                               cat("copying ", label, " on the device"));
                continue;
            }
            std::vector<argument> host;
            for (std::size_t t = 0; t < o.device.size(); ++t) {
                const shape& ts = o.device[t].get_shape();
                KILN_GPU_CHECK(cudaMemcpyAsync(o.host[t].data(), source_of(o.device[t].data(), bound), ts.bytes(), cudaMemcpyDeviceToHost,
                                               stream_.get()),
                               cat("copying the output ", describe(m, *o.ins), " to the host"));
                host.emplace_back(ts, o.host[t].data(), nullptr);
            }
            std::size_t next = 0;
            r.push_back(rebuild(values_.at(o.ins), host, next));
        }
        errors_.read(errors_host_.data(), stream_.get());
        stream_.synchronize("running the program (an asynchronous error of an earlier launch; run with verify or perf to find its instruction)");
        errors_.check(errors_host_.data());
        float device_ms = 0;
        if (timed) KILN_GPU_CHECK(cudaEventElapsedTime(&device_ms, timing_[0], timing_[1]), "reading perf's timing events");
        device_ms_ = device_ms;
        for (std::size_t i = 0, h = 0; i < into.size(); ++i)
            if (!into[i].on_device) copy_result(r[h++], into[i].arg, cat("#", i));
        if (!observe) capture_graph();
        return r;
    }

    const device_info& dev_;
    program prog_;
    stream stream_;
    library_handles libs_;
    memory_plan plan_;
    device_buffer arena_, weights_;
    std::vector<param_slot> params_;
    pinned_buffer staging_in_;
    std::vector<output_slot> outputs_;
    std::unordered_map<const instruction*, argument> values_;   // every result's device memory
    kernel_set kernels_;
    kernel_settings kernel_settings_;
    kernel_set dense_kernels_;                                 // copy_to_dense's, built on first use
    std::map<std::size_t, cudaKernel_t> dense_copies_;         // by output
    std::vector<gpu_step> steps_;
    std::deque<kernel_launch> launches_;
    std::vector<device_buffer> scratch_;
    device_buffer error_slots_;      // one slot per instruction at most; those used are cleared each run
    device_error_flags errors_;
    pinned_buffer errors_host_;
    cudaEvent_t ready_ = nullptr;
    cudaEvent_t timing_[2] = {};   // perf's device clock (enable_device_timing)
    double device_ms_ = 0;
    cudaGraph_t graph_ = nullptr;
    cudaGraphExec_t graph_exec_ = nullptr;
    std::unique_ptr<graph_bindings> bindings_;   // made with the graph
    caller_buffers_in_place in_place_;
    executable_stats stats_;
};

}  // namespace

caller_buffers_in_place in_place_counts(const executable& e) {
    if (auto* g = dynamic_cast<const gpu_executable*>(&e)) return g->in_place();
    return dynamic_in_place_counts(e).value_or(caller_buffers_in_place{});
}

namespace {

class gpu_target final : public target {
public:
    gpu_target() : arch_(current_device().arch) {}
    std::string name() const override { return "gpu"; }
    std::string device_arch() const override { return arch_; }
    std::vector<pass> passes(const compile_options& opts) const override { return gpu_passes(opts); }
    std::vector<std::string> ignored_options(const compile_options& opts) const override {
        std::vector<std::string> r;
        if (opts.offload_copy) r.push_back("--enable-offload-copy (the gpu target always copies host inputs and outputs)");
        if (opts.threads) r.push_back("--threads (the gpu target runs on its device)");
        return r;
    }
    // A program the memory plan cannot lay out runs an instruction at a time (dynamic_runner.hpp).
    std::unique_ptr<executable> load(program lowered, const compile_options& opts) const override {
        if (!static_module(lowered.main())) return make_dynamic_executable(std::move(lowered), opts, saved_parts{});
        return std::make_unique<gpu_executable>(std::move(lowered), opts, saved_parts{});
    }
    std::unique_ptr<executable> load_saved(program lowered, const compile_options& opts,
                                           saved_parts parts) const override {
        if (!static_module(lowered.main())) return make_dynamic_executable(std::move(lowered), opts, parts);
        return std::make_unique<gpu_executable>(std::move(lowered), opts, parts);
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
