#include "targets/gpu/dynamic_runner.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <unordered_map>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/eval.hpp"
#include "core/expand.hpp"
#include "core/pass.hpp"
#include "passes/analysis/memory_plan.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/libraries.hpp"
#include "targets/gpu/lowering.hpp"

namespace kiln::gpu {
namespace {

std::vector<gpu_dynamic_op>& dynamic_ops() {
    static std::vector<gpu_dynamic_op> r;
    return r;
}

bool has_dynamic(const shape& s) {
    return s.dynamic() || std::any_of(s.sub_shapes().begin(), s.sub_shapes().end(), has_dynamic);
}

std::size_t value_bytes(const shape& s) {
    if (!s.is_tuple()) return s.bytes();
    std::size_t n = s.sub_shapes().size();
    return n == 0 ? 0 : tuple_element_offset(s, n - 1) + value_bytes(s.sub_shapes().back());
}

// Tensors (or tuples of them) of the types the device holds: not a sequence, an optional or a
// string tensor (which the runner holds on the host: host_steps.cpp).
bool plain_values(const shape& s) {
    if (s.is_tuple()) return std::all_of(s.sub_shapes().begin(), s.sub_shapes().end(), plain_values);
    return s.is_tensor() && s.type() != dtype::string;
}

argument value_at(const shape& s, std::byte* p, const std::shared_ptr<void>& owner) {
    if (!s.is_tuple()) return argument(s, p, owner);
    std::vector<argument> elems;
    for (std::size_t i = 0; i < s.sub_shapes().size(); ++i)
        elems.push_back(value_at(s.sub_shapes()[i], p + tuple_element_offset(s, i), owner));
    return argument(std::move(elems));
}

const gpu_dynamic_op_registrar expanded_runs{{
    "an op expanded into a program once the inputs that decide its shapes are read back (onnx_node)",
    [](const instruction& ins) { return find_op_expander(ins.name()) != nullptr; },
    [](dynamic_runner& r, const instruction& ins, std::span<const argument> args) { return r.run_expanded(ins, args); }}};

}  // namespace

gpu_dynamic_op_registrar::gpu_dynamic_op_registrar(gpu_dynamic_op op) { dynamic_ops().push_back(op); }

const gpu_dynamic_op* find_dynamic_op(const instruction& ins) {
    for (const auto& d : dynamic_ops())
        if (d.matches(ins)) return &d;
    return nullptr;
}

bool static_module(const module& m) {
    for (const auto& ins : m)
        if (!plain_values(ins.get_shape()) || has_dynamic(ins.get_shape()) || find_dynamic_op(ins)) return false;
    return true;
}

// A cudaMalloc'd block per size class, kept for reuse: values (and a lowering's scratch) hold a
// block through the shared owner of their argument, whose deleter gives it back to the free list.
class device_pool {
public:
    ~device_pool() {
        for (void* p : blocks_) cudaFree(p);
    }
    std::shared_ptr<void> get(std::size_t bytes) {
        bytes = std::max<std::size_t>(256, (bytes + 255) / 256 * 256);
        void* p = nullptr;
        if (auto it = free_.find(bytes); it != free_.end()) {
            p = it->second;
            free_.erase(it);
        } else {
            KILN_GPU_CHECK(cudaMalloc(&p, bytes), cat("allocating ", bytes, " bytes for a result"));
            blocks_.push_back(p);
            stats_.reserved += bytes;
        }
        stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use += bytes);
        return std::shared_ptr<void>(p, [this, bytes](void* q) {
            free_.emplace(bytes, q);
            stats_.in_use -= bytes;
        });
    }
    const dynamic_memory& stats() const { return stats_; }

private:
    std::multimap<std::size_t, void*> free_;
    std::vector<void*> blocks_;
    dynamic_memory stats_;
};

// The error slot of the launches of one instruction for one op and input shapes (a Loop body's
// instruction takes the same one every iteration), kept until the run is over: device memory per
// run grows with the distinct shapes, never with the iterations. Cleared when first taken; the
// first failure recorded stays.
struct checked_launch {
    std::shared_ptr<void> slot;
    std::unique_ptr<device_error_flags> flags;   // with the words of that lowering
};

// The programs an expanded op (core/expand.hpp) ran as: the inputs whose values the expander read,
// and a program per input shapes and read values (their passes run once), the most recent
// max_expansions of them: a Loop whose read value changes every iteration would otherwise keep
// every iteration's program and its uploaded literals.
struct expansions {
    std::vector<std::size_t> reads;
    std::unordered_map<std::string, std::unique_ptr<program>> programs;
    std::deque<std::string> order;   // programs' keys, least recently used first
};
constexpr std::size_t max_expansions = 16;

struct dynamic_runner::state {
    const device_info& dev;
    library_handles& libs;
    compile_options opts;
    kernel_settings settings;
    device_pool pool;   // before the values that hold its blocks
    std::unordered_map<const instruction*, argument> literals;
    std::vector<std::unique_ptr<kernel_set>> kernel_sets;
    std::unordered_map<std::string, cudaKernel_t> kernels;   // by source
    std::map<std::string, std::string> saved;                 // a saved program's cubins, by key
    std::unordered_map<std::string, checked_launch> checks;   // this run's, by checks_key
    std::vector<std::string> check_order;                     // their keys, first launch first
    kernel_build_stats built;
    std::unordered_map<const instruction*, expansions> expanded;
    std::unordered_map<const instruction*, argument> destinations;   // this run's (write_into)
};

dynamic_runner::dynamic_runner(const device_info& dev, library_handles& libs, cudaStream_t s,
                               const compile_options& opts)
    : st_(new state{dev, libs, opts, {dev.arch, opts.fast_math, opts.kernel_cache, {}}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}), stream_(s) {}

dynamic_runner::~dynamic_runner() = default;

argument dynamic_runner::allocate(const shape& s) {
    auto block = st_->pool.get(value_bytes(s));
    return value_at(s, static_cast<std::byte*>(block.get()), block);
}

std::int64_t dynamic_runner::read_scalar(const argument& a, const std::string& why) {
    const shape& s = a.get_shape();
    if (s.elements() != 1) fail(why, ": expected one element, got ", to_string(s));
    argument host(shape(s.type(), std::vector<std::size_t>{1}));
    KILN_GPU_CHECK(cudaMemcpyAsync(host.data(), a.data(), s.type_bits() / 8, cudaMemcpyDeviceToHost, stream_), why);
    KILN_GPU_CHECK(cudaStreamSynchronize(stream_), why);
    return to_int64s(host).at(0);
}

argument dynamic_runner::scalar(const shape& s, std::int64_t v) {
    return upload(from_int64s(s, std::vector<std::int64_t>{v}), "writing a loop counter to the device");
}

argument dynamic_runner::upload(const argument& host, const std::string& why) {
    const shape& s = host.get_shape();
    if (!s.is_tensor()) {   // a tuple, sequence or optional: each value
        std::vector<argument> elems;
        for (const auto& e : host.sub_arguments()) elems.push_back(upload(e, why));
        return s.is_tuple() ? argument(std::move(elems)) : argument(s, std::move(elems));
    }
    if (s.type() == dtype::string) return host.copy();   // strings stay on the host
    if (!s.standard() && s.elements() != 0) return upload(host.copy(), why);   // empty: nothing to copy
    argument d = allocate(s);
    // From pageable memory: the copy has read it when the call returns.
    KILN_GPU_CHECK(cudaMemcpyAsync(d.data(), host.data(), s.bytes(), cudaMemcpyHostToDevice, stream_), why);
    return d;
}

argument dynamic_runner::standard(const instruction& ins, const argument& a) {
    const shape& s = a.get_shape();
    if (!s.is_tensor()) {   // a tuple, sequence or optional: each value
        std::vector<argument> elems;
        for (const auto& e : a.sub_arguments()) elems.push_back(standard(ins, e));
        return s.is_tuple() ? argument(std::move(elems)) : argument(s, std::move(elems));
    }
    if (s.standard()) return a;
    if (s.type() == dtype::string) return a.copy();   // strings live on the host
    std::vector<argument> in{a};
    return launch(ins, make_op("contiguous"), in);
}

// `op` as `ins`'s work over inputs of these shapes, as the one instruction of a module that
// lowering takes (launch and prepare build it alike, so that their kernels' sources match).
instruction_ref one_instruction(module& m, const instruction& ins, const operation& op, std::span<const shape> in) {
    std::vector<instruction_ref> params;
    for (std::size_t i = 0; i < in.size(); ++i) params.push_back(m.add_parameter(cat("x", i), in[i]));
    instruction_ref r = m.add_instruction(op, params, ins.module_inputs());
    r->set_source_name(ins.source_name());
    m.add_return({r});
    return r;
}

argument dynamic_runner::launch(const instruction& ins, const operation& op, std::span<const argument> args,
                                const argument* into) {
    module m("main");
    std::vector<shape> in;
    std::string key = cat(static_cast<const void*>(&ins), " ", op.name());
    for (const auto& a : args) {
        in.push_back(a.get_shape());
        key += " " + to_string(a.get_shape());
    }
    instruction_ref r = one_instruction(m, ins, op, in);
    auto params = m.parameters();
    if (has_dynamic(r->get_shape()))
        fail("gpu: ", describe(m, *r), " has a result shape that depends on its data, "
             "which the gpu target does not compute for this op yet (kiln does not fall back to the host)");
    const gpu_lowering* l = find_lowering(*r);
    if (!l) {
        std::string shapes;
        for (const auto& a : args) shapes += (shapes.empty() ? "" : ", ") + to_string(a.get_shape());
        fail("gpu: no GPU implementation for ", describe(m, *r), " with inputs ", shapes,
             " (kiln does not fall back to the host)");
    }
    const shape& rs = r->get_shape();
    bool fits = into && rs.is_tensor() && rs.standard() && rs.type() == into->get_shape().type() &&
                rs.lens() == into->get_shape().lens();
    argument out = fits ? argument(rs, into->data(), nullptr) : allocate(rs);
    if (!out.get_shape().is_tuple() && out.get_shape().elements() == 0) return out;   // nothing to write
    std::unordered_map<const instruction*, std::byte*> address;
    for (std::size_t i = 0; i < args.size(); ++i) address[&*params[i]] = args[i].data();
    address[&*r] = out.get_shape().is_tuple() ? out.sub_arguments().at(0).data() : out.data();
    lowering_context ctx(m, st_->libs, [address](const instruction& i) { return address.at(&i); });
    // Scratch from the pool, given back when this call returns: the steps are enqueued by then,
    // and the stream orders the next use of those blocks after them.
    std::vector<std::shared_ptr<void>> scratch;
    ctx.take_scratch = [&](std::size_t bytes, const char*) {
        return static_cast<std::byte*>(scratch.emplace_back(st_->pool.get(bytes)).get());
    };
    ctx.stream = stream_;
    auto [check, fresh] = st_->checks.try_emplace(key);
    if (fresh) check->second.slot = st_->pool.get(sizeof(error_slot));
    auto flags = std::make_unique<device_error_flags>(check->second.slot.get(), 1);
    ctx.error_flags = flags.get();
    try {
        l->lower(ctx, *r);
    } catch (...) {
        if (fresh) st_->checks.erase(check);
        throw;
    }
    if (fresh && flags->used()) {
        flags->clear(stream_);
        check->second.flags = std::move(flags);
        st_->check_order.push_back(key);
    } else if (fresh) {
        st_->checks.erase(check);   // its slot back to the pool
    }
    for (auto& k : ctx.launches) k.kernel = kernel(ctx.sources[k.source]);
    for (auto& s : ctx.steps) s.launch(stream_);
    return out;
}

dynamic_memory dynamic_runner::memory() const {
    dynamic_memory r = st_->pool.stats();
    for (const auto& [ins, e] : st_->expanded) r.expanded_programs += e.programs.size();
    return r;
}

// Kernels by source: a shape seen before compiles nothing (and one a saved program carries, or
// another process compiled, comes from there).
cudaKernel_t dynamic_runner::kernel(const kernel_source& src) {
    if (auto it = st_->kernels.find(src.code); it != st_->kernels.end()) return it->second;
    build({src});
    return st_->kernels.at(src.code);
}

void dynamic_runner::build(const std::vector<kernel_source>& sources) {
    auto set = std::make_unique<kernel_set>();
    kernel_build_stats stats;
    auto kernels = set->build(sources, st_->settings, stats, st_->saved);
    st_->kernel_sets.push_back(std::move(set));
    st_->built.kernels += stats.kernels;
    st_->built.cache_hits += stats.cache_hits;
    st_->built.from_saved += stats.from_saved;
    for (std::size_t i = 0; i < sources.size(); ++i) st_->kernels.emplace(sources[i].code, kernels[i]);
}

void dynamic_runner::use_saved_kernels(std::span<const kernel_binary> saved) {
    for (const auto& k : saved) st_->saved.emplace(k.name, std::string(k.code.begin(), k.code.end()));
}

std::vector<kernel_binary> dynamic_runner::binaries() const {
    std::vector<kernel_binary> r;
    for (const auto& set : st_->kernel_sets)
        for (const auto& [key, cubin] : set->binaries())
            r.push_back({key, {reinterpret_cast<const std::uint8_t*>(cubin.data()),
                               reinterpret_cast<const std::uint8_t*>(cubin.data()) + cubin.size()}});
    return r;
}

// What can be known before a run: the instructions whose input and result shapes are all static
// and that a generated-kernel lowering computes, in `m` and in the bodies the runner runs (If's
// branches, Loop's and Scan's bodies, taken or not). Each is lowered as launch lowers it, over
// stand-in addresses, and their kernels built at once (in parallel, from a saved program's cubins
// first). Library lowerings (cuBLASLt, cuDNN) are left to the run: planning them here would ask
// the heuristics for calls that may never be made.
void dynamic_runner::prepare(const module& top) {
    std::vector<kernel_source> sources;
    std::vector<const module*> todo{&top}, seen;
    while (!todo.empty()) {
        const module* m = todo.back();
        todo.pop_back();
        if (std::find(seen.begin(), seen.end(), m) != seen.end()) continue;
        seen.push_back(m);
        for (const auto& ins : *m) {
            if (ins.is_param() || ins.is_literal() || ins.is_return()) continue;
            if (find_dynamic_op(ins)) {
                for (const module* b : ins.module_inputs()) todo.push_back(b);
                continue;
            }
            std::vector<shape> in;
            for (auto i : ins.inputs()) in.push_back(i->get_shape());
            if (has_dynamic(ins.get_shape()) || std::any_of(in.begin(), in.end(), has_dynamic) ||
                ins.get_operator().output_alias(in) >= 0)
                continue;
            module one("main");
            instruction_ref r = one_instruction(one, ins, ins.get_operator(), in);
            const gpu_lowering* l = find_lowering(*r);
            if (!l || l->library) continue;
            lowering_context ctx(one, st_->libs, [](const instruction&) { return static_cast<std::byte*>(nullptr); }, false);
            static error_slot stand_in;   // never written: nothing prepared here is launched
            device_error_flags flags(&stand_in, 1);
            ctx.error_flags = &flags;
            try {
                l->lower(ctx, *r);
            } catch (const error&) {
                continue;   // the run lowers it again with its actual values, and fails there if it gets there
            }
            for (auto& src : ctx.sources)
                if (!st_->kernels.count(src.code)) sources.push_back(std::move(src));
        }
    }
    if (!sources.empty()) build(sources);
}

argument dynamic_runner::to_host(const argument& d, const std::string& what) {
    const shape& s = d.get_shape();
    if (!s.is_tensor()) {   // a tuple, sequence or optional: each value
        std::vector<argument> elems;
        for (const auto& e : d.sub_arguments()) elems.push_back(to_host(e, what));
        return s.is_tuple() ? argument(std::move(elems)) : argument(s, std::move(elems));
    }
    if (s.type() == dtype::string) return d.copy();   // already on the host
    argument h(d.get_shape());
    KILN_GPU_CHECK(cudaMemcpyAsync(h.data(), d.data(), d.get_shape().bytes(), cudaMemcpyDeviceToHost, stream_), what);
    KILN_GPU_CHECK(cudaStreamSynchronize(stream_), what);
    return h;
}

const kernel_build_stats& dynamic_runner::kernel_stats() const { return st_->built; }

std::vector<argument> dynamic_runner::run(const module& m, std::span<const argument> inputs,
                                          const instruction_observer* observe) {
    auto params = m.parameters();
    if (params.size() != inputs.size())
        fail("gpu: module ", m.name(), " takes ", params.size(), " inputs, got ", inputs.size());
    std::unordered_map<const instruction*, argument> values;
    for (std::size_t i = 0; i < params.size(); ++i) values[&*params[i]] = inputs[i];
    for (const auto& ins : m) {
        if (ins.is_param()) continue;
        if (ins.is_literal()) {
            values[&ins] = literal_value(ins);
            continue;
        }
        std::vector<argument> args;
        for (auto i : ins.inputs()) args.push_back(values.at(&*i));
        if (ins.is_return()) return args;
        check_cancelled([&] { return describe(m, ins); });
        auto t0 = std::chrono::steady_clock::now();
        try {
            values[&ins] = run_instruction(ins, args);
            if (observe) {
                KILN_GPU_CHECK(cudaStreamSynchronize(stream_), describe(m, ins));
                double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                (*observe)(ins, to_host(values[&ins], cat("reading back the result of ", describe(m, ins))), ms);
            }
        } catch (const cancelled&) {
            throw;
        } catch (const error& e) {
            // The target's own errors ("gpu: ...") already name the instruction and its node; an
            // op's (a shape check, a loop past max_iterations, a nested body's) gets them here.
            std::string msg = e.what();
            if (msg.rfind("gpu", 0) == 0) throw;
            fail(describe(m, ins), ": ", msg);
        }
    }
    return {};
}

argument dynamic_runner::literal_value(const instruction& ins) {
    auto it = st_->literals.find(&ins);
    if (it != st_->literals.end()) return it->second;
    const argument& a = ins.get_literal().get_argument();
    if (a.get_shape().type() == dtype::string) return st_->literals.emplace(&ins, a).first->second;   // host
    argument d = allocate(a.get_shape());
    // On the stream (the stream is non-blocking: a cudaMemcpy on the legacy stream would be ordered
    // neither after the kernels that last used this pool block nor before the reads of the
    // literal, which then could see the block's old bytes). From pageable memory: the copy has read
    // the literal when the call returns.
    KILN_GPU_CHECK(cudaMemcpyAsync(d.data(), a.data(), a.get_shape().bytes(), cudaMemcpyHostToDevice, stream_),
                   cat("uploading the literal of ", ins.name()));
    return st_->literals.emplace(&ins, d).first->second;
}

argument dynamic_runner::run_instruction(const instruction& ins, std::span<const argument> args) {
    if (const gpu_dynamic_op* d = find_dynamic_op(ins)) return d->run(*this, ins, args);
    std::vector<shape> shapes;
    for (const auto& a : args) shapes.push_back(a.get_shape());
    if (ins.get_operator().output_alias(shapes) >= 0) return view(ins.get_operator(), args);
    auto into = st_->destinations.find(&ins);
    return launch(ins, ins.get_operator(), args, into == st_->destinations.end() ? nullptr : &into->second);
}

void dynamic_runner::write_into(const instruction& ins, const argument& into) { st_->destinations[&ins] = into; }

// Views only compute where they point, never read, so their reference compute runs over device
// values.
argument dynamic_runner::view(const operation& op, std::span<const argument> args) {
    std::vector<shape> shapes;
    for (const auto& a : args) shapes.push_back(a.get_shape());
    return op.compute(op.compute_shape(shapes), args);
}

// An expanded op: the inputs its expander reads come back to the host (one synchronisation each,
// the values that decide its shapes), the program it builds is lowered by the gpu passes once per
// input shapes and read values, and runs here with the other inputs staying on the device.
argument dynamic_runner::run_expanded(const instruction& ins, std::span<const argument> args) {
    std::vector<argument> in;
    std::string key;
    for (const auto& a : args) {
        in.push_back(standard(ins, a));
        key += to_string(in.back().get_shape()) + ";";
    }
    expansions& e = st_->expanded[&ins];
    std::map<std::size_t, argument> host;
    auto read = [&](std::size_t k) {
        if (auto it = host.find(k); it != host.end()) return it->second;
        return host[k] = to_host(in.at(k), cat("reading back input ", k, " of ", ins.name(), " (node '", ins.source_name(), "')"));
    };
    auto value_key = [&] {
        std::string r = key;
        for (std::size_t k : e.reads) {
            const argument& h = read(k);
            r += cat(k, ":", std::string(reinterpret_cast<const char*>(h.data()), h.get_shape().bytes()), ";");
        }
        return r;
    };
    std::string full = value_key();
    auto it = e.programs.find(full);
    if (it != e.programs.end()) {
        e.order.erase(std::find(e.order.begin(), e.order.end(), full));
        e.order.push_back(full);
    } else {
        if (e.programs.size() == max_expansions) {
            // The least recently used program goes, with the literals uploaded for its
            // instructions (keyed by address, which a later program may reuse). Its work is
            // enqueued on this stream, before anything that could reuse that memory.
            auto old = e.programs.find(e.order.front());
            for (const module* m : old->second->modules())
                for (const auto& i : *m) st_->literals.erase(&i);
            e.programs.erase(old);
            e.order.pop_front();
        }
        std::vector<shape> shapes;
        for (const auto& a : in) shapes.push_back(a.get_shape());
        auto p = std::make_unique<program>();
        (*find_op_expander(ins.name()))(ins.get_operator(), shapes,
                                        [&](std::size_t k) {
                                            if (std::find(e.reads.begin(), e.reads.end(), k) == e.reads.end()) e.reads.push_back(k);
                                            return read(k);
                                        },
                                        *p);
        // In float32 whatever the precision asked: convert_precision left this op's operands and
        // results float32 (an expanded op declares its types), and ref computes it so; the low
        // type here would round its inputs (topk's ties would then differ from ref's).
        compile_options opts = st_->opts;
        opts.precision = compute_precision::fp32;
        run_passes(*p, gpu_passes(opts));
        std::string k = value_key();
        e.order.push_back(k);
        it = e.programs.emplace(std::move(k), std::move(p)).first;
    }
    const module& m = it->second->main();
    std::vector<argument> params;
    for (const auto& name : m.parameter_names()) params.push_back(in.at(static_cast<std::size_t>(std::stoul(name.substr(1)))));
    std::vector<argument> out = run(m, params);
    return out.size() == 1 ? out[0] : argument(std::move(out));
}

void dynamic_runner::finish_run() {
    st_->destinations.clear();
    auto checks = std::move(st_->checks);
    auto order = std::move(st_->check_order);
    st_->checks.clear();
    for (const auto& key : order) {
        const checked_launch& c = checks.at(key);
        std::vector<error_slot> host(1);
        copy_to_host(host.data(), c.slot.get(), sizeof(error_slot), "reading a run-time check");
        c.flags->check(host.data());
    }
}

}  // namespace kiln::gpu
