// oneDNN primitives for the cpu target.
#include <dnnl.hpp>

#include "targets/cpu/kernels.hpp"

namespace kiln {

struct onednn_state {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
};

cpu_context::cpu_context(std::size_t n) : threads(n), dnnl(std::make_unique<onednn_state>()) {}
cpu_context::~cpu_context() = default;

cpu_kernel make_onednn_kernel(const instruction&, cpu_context&) { return {}; }

cpu_kernel make_cpu_kernel(const instruction& ins, cpu_context& ctx) { return make_onednn_kernel(ins, ctx); }

std::vector<pass> cpu_lowering_passes(const compile_options&) { return {}; }

}  // namespace kiln
