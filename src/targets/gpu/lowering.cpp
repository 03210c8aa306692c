#include "targets/gpu/lowering.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/eval.hpp"
#include "passes/analysis/memory_plan.hpp"
#include "passes/pipeline.hpp"
#include "targets/gpu/dynamic_runner.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/layout_nhwc.hpp"
#include "targets/gpu/patch_convolution.hpp"
#include "targets/gpu/row_products.hpp"

namespace kiln::gpu {
namespace {

std::vector<gpu_lowering>& registry() {
    static std::vector<gpu_lowering> r;
    return r;
}

}  // namespace

std::string lowering_context::where(const instruction& ins) const { return describe(m_, ins); }

std::byte* lowering_context::element_address(const instruction& ins, std::size_t i) const {
    return address(ins) + tuple_element_offset(ins.get_shape(), i);
}

void lowering_context::add_kernel(const instruction& ins, kernel_source src, launch_dims dims,
                                  std::vector<void*> pointers) {
    auto& l = launches.emplace_back();
    l.source = sources.size();
    sources.push_back(std::move(src));
    l.dims = dims;
    l.pointers = std::move(pointers);
    for (auto& p : l.pointers) l.args.push_back(&p);
    l.where = where(ins);
    kernel_launch* lp = &l;
    add_step(ins, [lp](cudaStream_t s) {
        launch_kernel(lp->kernel, lp->dims.grid, lp->dims.block, lp->args.data(), s, lp->where);
    });
}

void lowering_context::add_step(const instruction& ins, std::function<void(cudaStream_t)> launch) {
    steps.push_back({&ins, std::move(launch)});
}

void* lowering_context::error_slot(const instruction& ins, error_explainer explain) {
    if (!error_flags) fail("gpu: lowering without error slots, but this kernel checks its data: ", where(ins));
    return error_flags->slot(ins, where(ins), std::move(explain));
}

std::byte* lowering_context::scratch(std::size_t bytes, const char* what) {
    static std::byte stand_in[1];
    if (!on_device_) return stand_in;
    if (take_scratch) return take_scratch(bytes, what);
    return scratch_buffers.emplace_back(bytes, what).data();
}

std::byte* lowering_context::shared_scratch(const std::string& key, std::size_t bytes, const char* what) {
    auto it = shared_.find(key);
    if (it == shared_.end()) it = shared_.emplace(key, std::pair{scratch(bytes, what), bytes}).first;
    if (bytes > it->second.second)
        fail("gpu: internal error: ", what, " needs ", bytes, " bytes of the ", it->second.second, " shared");
    return it->second.first;
}

std::byte* lowering_context::upload(const argument& a, const std::string& where) {
    if (!on_device_) return scratch(0, "a stand-in");
    argument std_copy = a.get_shape().standard() ? a : a.copy();
    std::byte* d = scratch(std_copy.get_shape().bytes(), "a fused body's literal");
    if (!take_scratch) {
        copy_to_device(d, std_copy.data(), std_copy.get_shape().bytes(), cat("uploading a literal of ", where));
        return d;
    }
    // After the kernels that used this memory last (the stream orders it); from pageable memory,
    // so the copy has read the literal when the call returns.
    KILN_GPU_CHECK(cudaMemcpyAsync(d, std_copy.data(), std_copy.get_shape().bytes(), cudaMemcpyHostToDevice, stream),
                   cat("uploading a literal of ", where));
    return d;
}

const std::vector<gpu_lowering>& gpu_lowerings() { return registry(); }
gpu_lowering_registrar::gpu_lowering_registrar(gpu_lowering l) { registry().push_back(l); }

bool needs_no_step(const instruction& ins) {
    if (ins.is_param() || ins.is_literal() || ins.is_return()) return true;
    std::vector<shape> in;
    for (auto i : ins.inputs()) in.push_back(i->get_shape());
    return ins.get_operator().output_alias(in) >= 0;
}

namespace {

// Element types generated kernels and the libraries take (never sequences or optionals, which
// only the interpreter runs; a list of what is taken, so that a new dtype is refused until it is
// implemented). The small types (fp8, fp8e8m0 and the packed ones) only where a lowering says it
// takes them. A tuple (a multi-output op's result, laid out by the memory plan) when all its
// elements are.
bool gpu_element_type(const shape& s, bool small_ok) {
    // A sequence or optional is a list of tensors to the dynamic runner (sequence_ops.cpp).
    if (s.is_sequence() || s.is_optional()) return gpu_element_type(s.element(), small_ok);
    if (s.is_tuple())
        return std::all_of(s.sub_shapes().begin(), s.sub_shapes().end(),
                           [&](const shape& e) { return gpu_element_type(e, small_ok); });
    switch (s.type()) {
        case dtype::bool_:
        case dtype::int8: case dtype::int16: case dtype::int32: case dtype::int64:
        case dtype::uint8: case dtype::uint16: case dtype::uint32: case dtype::uint64:
        case dtype::float16: case dtype::bfloat16: case dtype::float32: case dtype::float64: return true;
        case dtype::fp8e4m3fn: case dtype::fp8e5m2: case dtype::fp8e4m3fnuz: case dtype::fp8e5m2fnuz:
        case dtype::fp8e8m0: case dtype::int4: case dtype::uint4: case dtype::int2: case dtype::uint2:
        case dtype::fp4e2m1: return small_ok;
        default: return false;
    }
}

bool has_dynamic(const shape& s) {
    return s.dynamic() || std::any_of(s.sub_shapes().begin(), s.sub_shapes().end(), has_dynamic);
}

bool holds_strings(const shape& s) {
    if (s.is_tuple()) return std::any_of(s.sub_shapes().begin(), s.sub_shapes().end(), holds_strings);
    return s.is_tensor() && s.type() == dtype::string;
}

// A sequence or optional holding string tensors: the runner carries sequences of device tensors,
// and strings have none.
bool strings_in_container(const shape& s) {
    if (s.is_tuple()) return std::any_of(s.sub_shapes().begin(), s.sub_shapes().end(), strings_in_container);
    if (!s.is_sequence() && !s.is_optional()) return false;
    const shape& e = s.element();
    return e.is_tensor() ? e.type() == dtype::string : strings_in_container(e);
}

// Lowerings take static shapes (kernels and the memory plan bake them in).
bool gpu_type(const shape& s, bool small_ok) { return !has_dynamic(s) && gpu_element_type(s, small_ok); }

bool gpu_types(const instruction& ins, bool small_ok) {
    if (!gpu_type(ins.get_shape(), small_ok)) return false;
    for (auto i : ins.inputs())
        if (!gpu_type(i->get_shape(), small_ok)) return false;
    return true;
}

bool gpu_element_types(const instruction& ins) {
    if (!gpu_element_type(ins.get_shape(), false)) return false;
    for (auto i : ins.inputs())
        if (!gpu_element_type(i->get_shape(), false)) return false;
    return true;
}

}  // namespace

const gpu_lowering* find_lowering(const instruction& ins) {
    for (const auto& l : registry())
        if (gpu_types(ins, l.small_types) && l.matches(ins)) return &l;
    return nullptr;
}

bool gpu_supported(const instruction& ins) {
    if (ins.is_return()) return true;
    // String tensors have no device form: the dynamic runner holds them on the host, runs views
    // over them there and the string ops as reported host steps (host_steps.cpp).
    if (strings_in_container(ins.get_shape()) ||
        std::any_of(ins.inputs().begin(), ins.inputs().end(), [](auto i) { return strings_in_container(i->get_shape()); }))
        return false;
    const bool strings = ins.get_shape().type() == dtype::string;
    if (ins.is_param() || ins.is_literal()) return strings || gpu_element_type(ins.get_shape(), true);
    if (find_dynamic_op(ins)) return true;
    // A view over strings (or over a tuple holding some: string_split's results) points into host
    // memory; its result is a string tensor or one the device holds.
    if (ins.get_operator().traits().output_alias >= 0 &&
        (strings || std::any_of(ins.inputs().begin(), ins.inputs().end(), [](auto i) { return holds_strings(i->get_shape()); })))
        return strings || gpu_element_type(ins.get_shape(), true);
    if (ins.get_operator().traits().data_dependent) return false;   // its result shape needs an op of the runner
    if (has_dynamic(ins.get_shape()) || std::any_of(ins.inputs().begin(), ins.inputs().end(), [](auto i) {
            return has_dynamic(i->get_shape());
        }))
        return gpu_element_types(ins);   // lowered for its actual shapes when it runs
    return needs_no_step(ins) ? gpu_types(ins, true) : find_lowering(ins) != nullptr;
}

namespace {

void collect_unsupported(const module& m, std::vector<std::string>& missing) {
    for (const auto& ins : m) {
        if (!gpu_supported(ins)) missing.push_back(describe(m, ins));
        if (find_dynamic_op(ins))
            for (const module* body : ins.module_inputs()) collect_unsupported(*body, missing);
    }
}

}  // namespace

void check_supported(const module& m) {
    std::vector<std::string> missing;
    collect_unsupported(m, missing);
    if (missing.empty()) return;
    std::string msg = cat("gpu: no GPU implementation for ", missing.size(), " instruction", missing.size() > 1 ? "s" : "",
                          " (kiln does not fall back to the host):");
    for (const auto& s : missing) msg += "\n  " + s;
    throw error(msg);
}

std::vector<pass> gpu_passes(const compile_options& opts) {
    auto ps = generic_passes(opts, fusion_policy{.epilogues = true, .reductions = true, .pointwise = true});
    // Patch convolutions become GEMMs, and products of transposed rows one GEMM, once the precision
    // is chosen, before the fusions (a bias or activation after one then joins the GEMM's epilogue).
    auto fusion = std::find_if(ps.begin(), ps.end(), [](const pass& p) { return p.name() == "fuse_epilogues"; });
    if (fusion != ps.end()) fusion = std::next(ps.insert(fusion, patch_convolutions{}));
    if (fusion != ps.end()) ps.insert(fusion, row_products{});
    ps.push_back(nhwc_weights{});
    ps.push_back(pass{"gpu_check_supported", [](module& m) { check_supported(m); }});
    return ps;
}

}  // namespace kiln::gpu
