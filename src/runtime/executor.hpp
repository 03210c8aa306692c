// The executor: runs a lowered program's instructions inside one arena laid out by plan_memory.
// The ref target's executable is this executor over reference computes; other targets use it
// for the instructions they run on the host.
//  - Each computing instruction's result is made in the arena at its planned offset (views and
//    in-place reuse included), through a result_buffer_scope around its compute; a result found
//    elsewhere afterwards is an error naming the instruction, so a wrong plan or an op that
//    ignores its buffer shows up in every test instead of being hidden by a copy.
//  - Fused regions' bodies run in arenas of their own, and the instruction computing a body's
//    result writes it straight into the fused instruction's planned buffer.
//  - Control flow (If, Loop, Scan) runs its bodies on the interpreter, since their shapes may
//    depend on data, and so do ops that build a program when they run (data_dependent ones such
//    as the frontend's deferred onnx_node); their results are copied into their planned buffers.
//    They allocate while they run.
//  - A module whose shapes are not all static is not planned: it runs on the interpreter, and
//    memory_report() says why.
//  - A target may give instructions kernels of its own (host_kernel): the executor runs those
//    instead of the reference compute, writing into the same planned buffer; a fused region with
//    a kernel has no body state.
// After the first run, running allocates no host buffers (except in control flow, as above).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/eval.hpp"

namespace kiln {

// A target's compute for one instruction: writes its result (standard layout, every element)
// into `out`, which the memory plan placed; `args` are its inputs.
using host_kernel = std::function<void(std::span<const argument> args, const argument& out)>;
// A target's kernel for one instruction (empty: its reference compute runs). `overwrites`: the
// input the kernel may write its result over, because it reads each element of that input only
// to accumulate onto the same element of the result (a convolution's sum post-op adding the
// residual in dst); -1: none. The memory plan puts the result in that input's buffer where the
// input has no later use (plan_memory's in_place_inputs); the kernel must work either way.
struct target_kernel {
    host_kernel run;
    int overwrites = -1;
};
using kernel_factory = std::function<target_kernel(const instruction& ins)>;

class program_executor {
public:
    // Plans every module it runs. `p` must outlive the executor and stay unchanged.
    explicit program_executor(const program& p, const kernel_factory& kernels = {});
    ~program_executor();
    program_executor(const program_executor&) = delete;
    program_executor& operator=(const program_executor&) = delete;

    // Outputs live in the arena (or are inputs or literals) until the next run.
    std::vector<argument> run(const param_map& inputs, const instruction_observer* observe = nullptr);

    std::size_t arena_bytes() const;    // main's and every body's arenas together
    std::string memory_report() const;  // main's plan ("arena N bytes ...") or why it has none

    struct module_state;

private:
    module_state* find_state(const module& m) const;   // a fused region's body, or null
    const program& prog_;
    std::vector<std::unique_ptr<module_state>> states_;   // main first
};

struct memory_plan;
// Runs one module as the executor does, inside an arena laid out by `plan` (its fused regions'
// bodies on the interpreter), and returns copies of its outputs: a plan that lets a live buffer
// be overwritten gives different outputs than evaluate().
std::vector<argument> run_with_plan(const module& m, const memory_plan& plan, const param_map& inputs);

}  // namespace kiln
