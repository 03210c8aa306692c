// Lowering for the gpu target: each computing instruction of main becomes one or more steps
// (a generated kernel, a cuBLASLt matmul, a cuDNN convolution) whose device pointers are bound
// when the executable is made, so a run only launches. Each op family's file registers the
// lowerings it provides (gpu_lowering_registrar); matching reads ops typed and asks traits.
#pragma once
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/module.hpp"
#include "core/pass.hpp"
#include "core/target.hpp"
#include "targets/gpu/device.hpp"
#include "targets/gpu/elementwise.hpp"
#include "targets/gpu/error_flags.hpp"
#include "targets/gpu/kernel_compiler.hpp"

namespace kiln::gpu {

struct library_handles;   // cuBLASLt and cuDNN handles and their workspace (libraries.hpp)

// One thing a run does for an instruction.
struct gpu_step {
    const instruction* ins = nullptr;
    std::function<void(cudaStream_t)> launch;
};

// A generated kernel's launch: its arguments are the device pointers, fixed at load.
struct kernel_launch {
    std::size_t source = 0;           // index into the program's kernel sources
    cudaKernel_t kernel = nullptr;    // set once the sources are compiled
    launch_dims dims;
    std::vector<void*> pointers;
    std::vector<void*> args;          // addresses of `pointers`, as cudaLaunchKernel wants them
    std::string where;
};

class lowering_context {
public:
    // `on_device` false: lowering only, to check and compile what it generates where there is no
    // GPU; device memory it would keep (uploads, scratch) is a stand-in pointer then.
    lowering_context(const module& m, library_handles& libs, std::function<std::byte*(const instruction&)> address,
                     bool on_device = true)
        : m_(m), libs_(libs), address_(std::move(address)), on_device_(on_device) {}

    const module& main() const { return m_; }
    std::byte* address(const instruction& ins) const { return address_(ins); }
    // The layout of the buffer holding ins's value: channels-last where `layouts` says so
    // (layout_nhwc.hpp), else its IR shape. Lowerings marked `reads_layouts` read their inputs
    // with it; those marked `writes_layouts` write their result in it.
    const shape& layout(const instruction& ins) const {
        auto it = layouts.find(&ins);
        return it == layouts.end() ? ins.get_shape() : it->second;
    }
    // Element i of a tuple result `ins` computes (topk's values and indices): its planned buffer's
    // elements lie one after another (tuple_element_offset in passes/analysis/memory_plan.hpp).
    std::byte* element_address(const instruction& ins, std::size_t i) const;
    std::string where(const instruction& ins) const;   // the instruction and its ONNX node
    library_handles& libraries() { return libs_; }

    // A generated kernel for `ins` launched over these device pointers (output first, as the
    // generator's parameters are ordered).
    void add_kernel(const instruction& ins, kernel_source src, launch_dims dims, std::vector<void*> pointers);
    void add_step(const instruction& ins, std::function<void(cudaStream_t)> launch);
    // A host tensor copied to device memory the executable keeps (a fused body's literal).
    std::byte* upload(const argument& a, const std::string& where);
    // Device memory a step keeps for itself (a materialised operand, a library's workspace).
    std::byte* scratch(std::size_t bytes, const char* what);
    // Scratch memory shared by every step that asks under `key`, made at the first ask, whose
    // `bytes` must be the most any of them needs: steps run in order on one stream, so they take
    // turns (every attention's scores).
    std::byte* shared_scratch(const std::string& key, std::size_t bytes, const char* what);
    // The error slot of `ins`, for a kernel that checks its data (device/kiln_error.cuh: it takes
    // the slot as its last parameter and calls kiln::raise); `explain` words a recorded failure.
    void* error_slot(const instruction& ins, error_explainer explain);

    device_error_flags* error_flags = nullptr;   // the executable's; set before lowering
    std::unordered_map<const instruction*, shape> layouts;   // set before lowering (choose_layouts)
    // Set by the dynamic runner: scratch and uploads come from its caching allocator (kept by
    // the caller, given back once the steps are enqueued: reuse is ordered on `stream`, which
    // uploads are enqueued on too). Unset: owned device buffers (scratch_buffers).
    std::function<std::byte*(std::size_t bytes, const char* what)> take_scratch;
    cudaStream_t stream = nullptr;
    // Each convolution epilogue's lowering by reason ("": cuDNN's fused call; conv_epilogue.hpp),
    // for the compile report.
    std::unordered_map<std::string, std::size_t> conv_epilogues;

    // What load takes over once every instruction is lowered.
    std::vector<gpu_step> steps;
    std::vector<kernel_source> sources;
    std::deque<kernel_launch> launches;      // stable addresses: steps point at them
    std::vector<device_buffer> scratch_buffers;

private:
    std::unordered_map<std::string, std::pair<std::byte*, std::size_t>> shared_;
    const module& m_;
    library_handles& libs_;
    std::function<std::byte*(const instruction&)> address_;
    bool on_device_ = true;
};

struct gpu_lowering {
    const char* what;                                           // "pointwise region", for reports
    bool (*matches)(const instruction& ins);
    void (*lower)(lowering_context& ctx, const instruction& ins);
    bool library = false;   // plans a cuBLASLt or cuDNN call while lowering, so it needs a device
    // Takes the small element types too (fp8, fp8e8m0, the packed int4/uint4/int2/uint2/fp4e2m1).
    bool small_types = false;
    bool reads_layouts = false;    // reads every input through ctx.layout (any strides)
    bool writes_layouts = false;   // writes its result in ctx.layout (channels-last too)
};

const std::vector<gpu_lowering>& gpu_lowerings();
struct gpu_lowering_registrar {
    explicit gpu_lowering_registrar(gpu_lowering l);
};

// Instructions that need no step: parameters, literals, the return and views (their result is
// their input's memory).
bool needs_no_step(const instruction& ins);
// The lowering of an instruction, or null (also for element types the gpu target does not take:
// sequences; the small types where the lowering does not take them; and for dynamic shapes).
const gpu_lowering* find_lowering(const instruction& ins);
// Whether the gpu target runs `ins`: the dynamic runner's ops (control flow, data-dependent ops;
// dynamic_runner.hpp), views and the interface in element types the target takes, static-shape
// instructions through a lowering. An instruction with dynamic shapes is lowered for its actual
// shapes when it runs, so only its element types are known here (a missing lowering is then a run
// error naming it); other data-dependent ops are refused.
bool gpu_supported(const instruction& ins);
// Throws, listing every instruction of the program's main (and of the bodies the runner runs) that
// has no GPU implementation with its ONNX node ("gpu: no GPU implementation for 2 instructions:
// ..."); does nothing otherwise.
void check_supported(const module& m);
// The gpu target's pipeline: the generic passes with the fusion policy the lowerings execute,
// then the check above (the pass `gpu_check_supported`).
std::vector<pass> gpu_passes(const compile_options& opts);

}  // namespace kiln::gpu
