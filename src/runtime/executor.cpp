#include "runtime/executor.hpp"

#include <chrono>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "passes/analysis/memory_plan.hpp"

namespace kiln {

namespace {

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

// The planned buffers of a result at arena offset `offset`: one, or a tuple's elements laid out
// one after another, each aligned (as plan_memory lays them out).
void add_buffers(const shape& s, std::size_t& offset, std::byte* arena, bool zero, const std::shared_ptr<void>& owner,
                 std::vector<planned_buffer>& out) {
    if (s.is_tuple()) {
        for (const auto& sub : s.sub_shapes()) add_buffers(sub, offset, arena, zero, owner, out);
        return;
    }
    offset = align_up(offset, buffer_alignment(s.type()));
    out.push_back({arena + offset, s.bytes(), zero, owner});
    offset += s.bytes();
}

bool in_buffers(const argument& r, std::span<const planned_buffer> into) {
    if (!r.get_shape().is_tuple()) return into.size() == 1 && r.data() == into[0].data;
    if (r.sub_arguments().size() != into.size()) return false;
    for (std::size_t i = 0; i < into.size(); ++i)
        if (r.sub_arguments()[i].data() != into[i].data) return false;
    return true;
}

// Control flow, and ops that build and run a program when they run (data_dependent), make their
// results with the interpreter; those are copied into their planned buffers.
bool runs_interpreted(const instruction& ins) {
    op_traits t = ins.get_operator().traits();
    return t.data_dependent || (!ins.module_inputs().empty() && !t.fusion);
}

}  // namespace

struct program_executor::module_state {
    // What run() does with a step, read from the instruction once: between two kernels the
    // executor's own data is cold in cache (the kernels stream megabytes), and each virtual call
    // into the instruction's op was a chain of misses (about 2.5 us a step, with the copies below).
    enum class step_kind { param, literal, ret, compute };
    struct step {
        const instruction* ins = nullptr;
        step_kind kind = step_kind::compute;
        std::vector<std::size_t> inputs;        // positions of its inputs
        std::vector<argument> args;             // reused every run
        std::vector<planned_buffer> into;       // empty: a view, or not planned
        host_kernel kernel;                     // the target's compute, or empty for the reference
        argument out;                           // the kernel's planned output (empty: not planned)
        std::vector<bool> fixed;                // per input: the same argument every run (set once)
        bool primed = false;                    // its fixed inputs are in args
        bool fixed_view = false;                // a view of fixed arguments: the same result every run
        bool computed = false;                  // it ran once
    };
    const program_executor* owner;              // null: fused bodies run on the interpreter
    const module& m;
    std::vector<step> steps;                    // one per instruction, in order
    std::vector<argument> results;
    std::vector<std::size_t> params;            // positions of the parameters, in declaration order
    std::vector<std::string> param_names;       // their names
    std::vector<argument> staging;              // standard copies of inputs given in other layouts
    std::shared_ptr<std::byte[]> arena;
    std::size_t arena_bytes = 0;
    bool planned = false;
    std::string report;
    int result_step = -1;   // computes the single returned value, which may go into the caller's buffer
    module_runner runner;

    // Plans the module, or takes `given` (a plan to check by running it).
    module_state(const program_executor* o, const module& mod, const memory_plan* given = nullptr,
                 const kernel_factory* kernels = nullptr)
        : owner(o), m(mod) {
        runner = [this](const module& sub, std::span<const argument> in) {
            if (auto* body = owner ? owner->find_state(sub) : nullptr) return body->run_body(in);
            return evaluate(sub, in);   // control flow's bodies
        };
        std::unordered_map<const instruction*, std::size_t> pos;
        in_place_inputs overwrites;
        for (const auto& ins : m) {
            pos[&ins] = steps.size();
            step s{&ins, ins.is_param() ? step_kind::param
                         : ins.is_literal() ? step_kind::literal
                         : ins.is_return() ? step_kind::ret
                                           : step_kind::compute,
                   {}, {}, {}, {}, {}};
            if (kernels && *kernels && !ins.get_operator().traits().builtin) {
                target_kernel k = (*kernels)(ins);
                s.kernel = std::move(k.run);
                if (s.kernel && k.overwrites >= 0) overwrites[&ins] = static_cast<std::size_t>(k.overwrites);
            }
            for (auto in : ins.inputs()) s.inputs.push_back(pos.at(&*in));
            s.args.resize(s.inputs.size());
            if (ins.is_param()) {
                params.push_back(steps.size());
                param_names.push_back(m.parameter_name(ins));
            }
            steps.push_back(std::move(s));
        }
        results.resize(steps.size());
        for (auto& s : steps)
            if (s.ins->is_literal()) results[&s - steps.data()] = s.ins->get_literal().get_argument();
        if (given) {
            lay_out(*given);
        } else {
            try {
                lay_out(plan_memory(m, overwrites));
            } catch (const error& e) {
                report = std::string("not planned: ") + e.what();
            }
        }
        mark_fixed_inputs();
    }

    // A literal's argument, and a kernel's planned output (but the module's result, which may go
    // into the caller's buffer), are the same every run: copied into their users' args once. So is
    // a view (reshape, transpose, slice: an alias, no values computed) of such arguments, which
    // then runs once, not every run (a flatten before the classifier took ~8 us a run).
    void mark_fixed_inputs() {
        if (!planned) return;
        std::vector<bool> same(steps.size());
        for (std::size_t k = 0; k < steps.size(); ++k) {
            step& s = steps[k];
            s.fixed.resize(s.inputs.size());
            bool all_fixed = true;
            for (std::size_t i = 0; i < s.inputs.size(); ++i) {
                s.fixed[i] = same[s.inputs[i]];
                all_fixed = all_fixed && s.fixed[i];
            }
            s.fixed_view = s.kind == step_kind::compute && !s.kernel && s.into.empty() && all_fixed &&
                           !s.inputs.empty() && s.ins->module_inputs().empty() && is_alias(*s.ins);
            same[k] = s.kind == step_kind::literal || s.fixed_view ||
                      (s.kernel && !s.out.empty() && static_cast<int>(k) != result_step);
        }
    }

    static bool is_alias(const instruction& ins) {
        std::vector<shape> in;
        for (auto i : ins.inputs()) in.push_back(i->get_shape());
        return ins.get_operator().output_alias(in) >= 0;
    }

    void lay_out(const memory_plan& mp) {
        // A size bomb (Tile, Expand to huge sizes) is an error naming its node before the arena is
        // allocated, and so is an arena larger than any tensor may be.
        for (const auto& [ins, offset] : mp.offsets) {
            try {
                if (!ins->get_shape().is_tuple()) check_tensor_bytes(ins->get_shape());
            } catch (const error& e) {
                fail(describe(m, *ins), ": ", e.what());
            }
        }
        if (mp.arena_bytes > max_tensor_bytes())
            fail("module ", m.name(), ": its memory plan needs an arena of ", mp.arena_bytes,
                 " bytes, more than the limit of ", max_tensor_bytes());
        planned = true;
        report = mp.report();
        arena_bytes = mp.arena_bytes;
        // Rounded up so that 8-byte element loops never read past the end, as for fresh buffers.
        arena = std::make_shared<std::byte[]>(align_up(std::max<std::size_t>(arena_bytes, 1), 8));
        for (auto& s : steps) {
            auto it = mp.offsets.find(s.ins);
            if (it == mp.offsets.end()) continue;
            std::size_t offset = it->second;
            // Pointwise ops write every element, and may write over their input: no zero fill.
            bool zero = !s.ins->get_operator().traits().pointwise;
            add_buffers(s.ins->get_shape(), offset, arena.get(), zero, arena, s.into);
            if (s.kernel && s.into.size() == 1) s.out = argument(s.ins->get_shape(), s.into[0].data, arena);
        }
        auto ret = m.get_return();
        if (ret == m.end() || ret->inputs().size() != 1) return;
        const step& r = steps[pos_of(*ret->inputs()[0])];
        if (r.into.size() == 1 && r.ins->get_shape().standard() && !runs_interpreted(*r.ins))
            result_step = static_cast<int>(&r - steps.data());
    }

    std::size_t pos_of(const instruction& ins) const {
        for (std::size_t i = 0; i < steps.size(); ++i)
            if (steps[i].ins == &ins) return i;
        fail("executor: instruction not in module ", m.name());
    }

    // Instructions were planned and their shapes computed for the parameters' standard layout, so an
    // input in another layout (column-major, a view) is copied into a staging buffer, made once.
    argument standard_input(std::size_t i, const argument& a) {
        const shape& want = steps[params[i]].ins->get_shape();
        if (a.get_shape() == want || a.get_shape().is_tuple() || want.dynamic()) return a;
        if (staging.size() != params.size()) staging.resize(params.size());
        if (staging[i].empty()) staging[i] = argument(want);
        std::size_t n = want.elements(), esize = want.type_bits() / 8;
        const shape& s = a.get_shape();
        if (is_packed(want.type()) || esize == 0 || want.type() == dtype::string) return a.copy();
        for (std::size_t k = 0; k < n; ++k) std::memcpy(staging[i].data() + k * esize, a.data() + s.index(k) * esize, esize);
        return staging[i];
    }

    // A fused region's body: its result goes into the buffer the caller's scope offers for it.
    std::vector<argument> run_body(std::span<const argument> in) {
        const planned_buffer* dest = nullptr;
        if (result_step >= 0) dest = result_buffer_scope::take(steps[result_step].into[0].bytes);
        return run(in, dest, nullptr);
    }

    std::vector<argument> run(std::span<const argument> in, const planned_buffer* dest,
                              const instruction_observer* observe) {
        if (!planned) return evaluate(m, in);
        if (in.size() != params.size())
            fail("module ", m.name(), ": ", params.size(), " inputs expected, ", in.size(), " given");
        for (std::size_t i = 0; i < params.size(); ++i) {
            results[params[i]] = standard_input(i, bind_input(m, *steps[params[i]].ins, in[i]));
            if (observe) (*observe)(*steps[params[i]].ins, results[params[i]], 0.0);
        }
        for (std::size_t k = 0; k < steps.size(); ++k) {
            step& s = steps[k];
            if (s.kind == step_kind::param) continue;
            check_cancelled([&] { return describe(m, *s.ins); });
            if (s.kind == step_kind::literal) {
                if (observe) (*observe)(*s.ins, results[k], 0.0);
                continue;
            }
            if (s.kind == step_kind::ret) {
                std::vector<argument> outs;
                for (auto i : s.inputs) outs.push_back(results[i]);
                return outs;
            }
            if (s.fixed_view && s.computed && !observe) continue;
            std::span<const planned_buffer> into = s.into;
            if (dest && static_cast<int>(k) == result_step) into = {dest, 1};
            auto start = observe ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
            try {
                compute(s, into, results[k]);
                s.computed = true;
            } catch (const error& e) {
                fail(describe(m, *s.ins), ": ", e.what());
            } catch (const cancelled& e) {
                throw cancelled(cat(describe(m, *s.ins), ": ", e.what()));
            }
            if (observe)
                (*observe)(*s.ins, results[k],
                           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        }
        return {};
    }

    // Into `result`, which holds the step's previous result: assigning over it reuses its shape's
    // storage, where returning a fresh argument allocated and freed a shape every step.
    void compute(step& s, std::span<const planned_buffer> into, argument& result) {
        for (std::size_t i = 0; i < s.inputs.size(); ++i)
            if (!s.primed || !s.fixed[i]) s.args[i] = results[s.inputs[i]];
        s.primed = !s.fixed.empty();
        if (!s.kernel) {
            result = compute_reference(s, into);
            return;
        }
        // The planned output, as made when the module was laid out.
        if (into.size() == 1 && !s.out.empty() && s.out.data() == into[0].data) {
            s.kernel(s.args, s.out);
            result = s.out;
            return;
        }
        result = run_kernel(s, into);
    }

    argument compute_reference(step& s, std::span<const planned_buffer> into) {
        const instruction& ins = *s.ins;
        // An interpreted op allocates much while it runs (its program's literals and values), so
        // it gets no planned buffers until its result is copied.
        // Without an owner (run_with_plan) fused bodies run on the interpreter too.
        bool interpreted = runs_interpreted(ins) || (!owner && !ins.module_inputs().empty());
        argument r = compute_op(ins.get_operator(), ins.get_shape(), s.args, ins.module_inputs(), runner,
                                interpreted ? std::span<const planned_buffer>() : into);
        if (into.empty() || in_buffers(r, into)) return r;
        if (interpreted) {
            result_buffer_scope scope(into);
            r = r.copy();
            if (in_buffers(r, into)) return r;
        }
        fail("its result is not in the buffer the memory plan gave it (the op allocated its own)");
    }

    // The target's kernel writes into the planned buffer (the caller's, for a body's result), or
    // into a fresh one when the module is not planned.
    argument run_kernel(step& s, std::span<const planned_buffer> into) {
        argument out = s.out;
        if (into.size() == 1 && (out.empty() || out.data() != into[0].data))
            out = argument(s.ins->get_shape(), into[0].data, into[0].owner);
        if (out.empty()) out = argument(s.ins->get_shape());
        s.kernel(s.args, out);
        return out;
    }
};

program_executor::program_executor(const program& p, const kernel_factory& kernels) : prog_(p) {
    states_.push_back(std::make_unique<module_state>(this, p.main(), nullptr, &kernels));
    std::unordered_set<const instruction*> with_kernel;   // fused regions whose bodies never run
    for (const auto& s : states_.front()->steps)
        if (s.kernel) with_kernel.insert(s.ins);
    for (const module* m : p.modules())
        for (const auto& ins : *m)
            if (ins.get_operator().traits().fusion && !with_kernel.count(&ins))
                for (const module* sub : ins.module_inputs())
                    if (!find_state(*sub)) states_.push_back(std::make_unique<module_state>(this, *sub, nullptr, &kernels));
}

program_executor::~program_executor() = default;

program_executor::module_state* program_executor::find_state(const module& m) const {
    for (const auto& s : states_)
        if (&s->m == &m) return s.get();
    return nullptr;
}

std::vector<argument> program_executor::run(const param_map& inputs, const instruction_observer* observe) {
    module_state& main = *states_.front();
    if (!main.planned) return observe ? evaluate(prog_, inputs, *observe) : evaluate(prog_, inputs);
    // By the names kept at load: order_inputs walks the module and builds every parameter's
    // attributes (~20 us a run on mobilenet_v2); it still gives a missing or unknown input's error.
    std::vector<argument> ordered;
    if (inputs.size() == main.param_names.size())
        for (const auto& name : main.param_names) {
            auto it = inputs.find(name);
            if (it == inputs.end()) break;
            ordered.push_back(it->second);
        }
    if (ordered.size() != inputs.size() || ordered.size() != main.param_names.size())
        ordered = order_inputs(main.m, inputs);
    return main.run(ordered, nullptr, observe);
}

std::size_t program_executor::arena_bytes() const {
    std::size_t n = 0;
    for (const auto& s : states_) n += s->arena_bytes;
    return n;
}

std::string program_executor::memory_report() const { return states_.front()->report; }

std::vector<argument> run_with_plan(const module& m, const memory_plan& plan, const param_map& inputs) {
    program_executor::module_state state(nullptr, m, &plan);
    auto ordered = order_inputs(m, inputs);
    std::vector<argument> outs;
    for (const auto& out : state.run(ordered, nullptr, nullptr)) outs.push_back(out.copy());
    return outs;
}

}  // namespace kiln
