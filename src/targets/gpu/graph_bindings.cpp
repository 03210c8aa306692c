#include "targets/gpu/graph_bindings.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstring>

#include "core/error.hpp"
#include "targets/gpu/gpu_error.hpp"

namespace kiln::gpu {
namespace {

// The driver calls this needs, found through the runtime (kiln does not link libcuda itself).
struct driver_calls {
    PFN_cuGraphKernelNodeGetParams_v12000 get_params = nullptr;
    PFN_cuGraphExecKernelNodeSetParams_v12000 set_params = nullptr;
    PFN_cuFuncGetParamInfo_v12040 param_info = nullptr;
    PFN_cuKernelGetFunction_v12000 kernel_function = nullptr;
    bool ok() const { return get_params && set_params && param_info && kernel_function; }
};

const driver_calls& driver() {
    static const driver_calls d = [] {
        driver_calls r;
        auto find = [](const char* name, auto& fn, unsigned version) {
            void* p = nullptr;
            cudaDriverEntryPointQueryResult q{};
            if (cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &q) == cudaSuccess &&
                q == cudaDriverEntryPointSuccess)
                fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
            else
                cudaGetLastError();
        };
        find("cuGraphKernelNodeGetParams", r.get_params, 12000);
        find("cuGraphExecKernelNodeSetParams", r.set_params, 12000);
        find("cuFuncGetParamInfo", r.param_info, 12040);
        find("cuKernelGetFunction", r.kernel_function, 12000);
        return r;
    }();
    return d;
}

// A pointer found in a kernel parameter: parameter `param`, byte `at` in it, pointing `delta`
// bytes into range `range`.
struct relocation {
    std::size_t param, at, range, delta;
};

// A kernel node with pointers into the ranges: its parameters as captured, our copies of their
// bytes (patched on binding), and where the pointers are.
struct kernel_node {
    CUgraphNode node = nullptr;
    CUDA_KERNEL_NODE_PARAMS params{};
    std::vector<std::vector<std::byte>> values;
    std::vector<void*> pointers;   // values[i].data(), as kernelParams
    std::vector<void*> extra;      // the "extra" form, when the launch gave one buffer
    std::size_t extra_bytes = 0;
    std::vector<relocation> relocations;
};

}  // namespace

struct graph_bindings::impl {
    std::vector<byte_range> ranges;
    std::vector<bool> bindable;
    std::vector<std::byte*> bound;   // each range's address in the instantiated graph now
    std::vector<kernel_node> nodes;

    // The range `p` points into, or -1.
    long long range_of(const void* p) const {
        auto* b = static_cast<const std::byte*>(p);
        for (std::size_t r = 0; r < ranges.size(); ++r)
            if (ranges[r].begin && b >= ranges[r].begin && b < ranges[r].begin + ranges[r].bytes) return static_cast<long long>(r);
        return -1;
    }
    void none_bindable() { bindable.assign(ranges.size(), false); }

    // Scans a parameter's bytes for pointers (8-byte aligned words: parameters and the members of
    // structs passed by value are laid out so) into the ranges.
    void scan(kernel_node& k, std::size_t param) {
        const auto& v = k.values[param];
        for (std::size_t at = 0; at + sizeof(void*) <= v.size(); at += sizeof(void*)) {
            void* p;
            std::memcpy(&p, v.data() + at, sizeof p);
            if (long long r = range_of(p); r >= 0)
                k.relocations.push_back({param, at, static_cast<std::size_t>(r),
                                         static_cast<std::size_t>(static_cast<std::byte*>(p) - ranges[r].begin)});
        }
    }

    // Reads a kernel node's parameters; false when they cannot be read (its ranges then stay unbound).
    bool add_kernel(CUgraphNode node) {
        const auto& d = driver();
        kernel_node k;
        k.node = node;
        if (d.get_params(node, &k.params) != CUDA_SUCCESS) return false;
        if (k.params.kernelParams) {
            CUfunction f = k.params.func;
            if (!f && (!k.params.kern || d.kernel_function(&f, k.params.kern) != CUDA_SUCCESS)) return false;
            for (std::size_t i = 0;; ++i) {
                std::size_t offset = 0, size = 0;
                CUresult e = d.param_info(f, i, &offset, &size);
                if (e == CUDA_ERROR_INVALID_VALUE) break;   // past the last parameter
                if (e != CUDA_SUCCESS) return false;
                auto* src = static_cast<const std::byte*>(k.params.kernelParams[i]);
                k.values.emplace_back(src, src + size);
            }
        } else if (k.params.extra) {
            void* buffer = nullptr;
            for (void** e = k.params.extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
                if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = e[1];
                else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE) k.extra_bytes = *static_cast<std::size_t*>(e[1]);
                else return false;
            }
            if (!buffer) return false;
            auto* src = static_cast<const std::byte*>(buffer);
            k.values.emplace_back(src, src + k.extra_bytes);
        }
        for (std::size_t i = 0; i < k.values.size(); ++i) scan(k, i);
        if (k.relocations.empty()) return true;
        for (auto& v : k.values) k.pointers.push_back(v.data());
        if (!k.params.kernelParams)
            k.extra = {CU_LAUNCH_PARAM_BUFFER_POINTER, k.pointers[0], CU_LAUNCH_PARAM_BUFFER_SIZE, nullptr, CU_LAUNCH_PARAM_END};
        nodes.push_back(std::move(k));
        return true;
    }
};

graph_bindings::graph_bindings(cudaGraph_t graph, std::vector<byte_range> ranges) : impl_(std::make_unique<impl>()) {
    auto& I = *impl_;
    I.ranges = std::move(ranges);
    I.bindable.assign(I.ranges.size(), true);
    for (std::size_t r = 0; r < I.ranges.size(); ++r) {
        I.bound.push_back(I.ranges[r].begin);
        if (!I.ranges[r].begin) I.bindable[r] = false;
    }
    if (!driver().ok()) {
        I.none_bindable();
        return;
    }
    std::size_t n = 0;
    KILN_GPU_CHECK(cudaGraphGetNodes(graph, nullptr, &n), "listing the CUDA graph's nodes");
    std::vector<cudaGraphNode_t> nodes(n);
    KILN_GPU_CHECK(cudaGraphGetNodes(graph, nodes.data(), &n), "listing the CUDA graph's nodes");
    for (cudaGraphNode_t node : nodes) {
        cudaGraphNodeType type{};
        KILN_GPU_CHECK(cudaGraphNodeGetType(node, &type), "reading a CUDA graph node's type");
        if (type == cudaGraphNodeTypeKernel) {
            if (!I.add_kernel(node)) {
                I.none_bindable();
                return;
            }
        } else if (type == cudaGraphNodeTypeMemcpy) {
            cudaMemcpy3DParms m{};
            KILN_GPU_CHECK(cudaGraphMemcpyNodeGetParams(node, &m), "reading a CUDA graph memcpy node");
            for (const void* p : {static_cast<const void*>(m.srcPtr.ptr), static_cast<const void*>(m.dstPtr.ptr)})
                if (long long r = I.range_of(p); r >= 0) I.bindable[r] = false;
        } else if (type == cudaGraphNodeTypeMemset) {
            cudaMemsetParams m{};
            KILN_GPU_CHECK(cudaGraphMemsetNodeGetParams(node, &m), "reading a CUDA graph memset node");
            if (long long r = I.range_of(m.dst); r >= 0) I.bindable[r] = false;
        } else if (type != cudaGraphNodeTypeEmpty && type != cudaGraphNodeTypeEventRecord &&
                   type != cudaGraphNodeTypeWaitEvent) {
            I.none_bindable();   // a node whose pointers this does not know how to find
            return;
        }
    }
}

graph_bindings::~graph_bindings() = default;

bool graph_bindings::bindable(std::size_t range) const { return impl_->bindable.at(range); }

std::size_t graph_bindings::bind(cudaGraphExec_t exec, std::span<std::byte* const> to) {
    auto& I = *impl_;
    std::vector<std::byte*> want(I.ranges.size());
    std::vector<bool> changed(I.ranges.size(), false);
    bool any = false;
    for (std::size_t r = 0; r < I.ranges.size(); ++r) {
        want[r] = r < to.size() && to[r] ? to[r] : I.ranges[r].begin;
        if (want[r] != I.ranges[r].begin && !I.bindable[r]) fail("gpu: range ", r, " of the CUDA graph is not bindable");
        changed[r] = want[r] != I.bound[r];
        any = any || changed[r];
    }
    if (!any) return 0;
    std::size_t updated = 0;
    for (auto& k : I.nodes) {
        bool touched = false;
        for (const auto& rel : k.relocations) touched = touched || changed[rel.range];
        if (!touched) continue;
        for (const auto& rel : k.relocations) {
            std::byte* p = want[rel.range] + rel.delta;
            std::memcpy(k.values[rel.param].data() + rel.at, &p, sizeof p);
        }
        // Our copies as the node's parameters (set here: the node records move with `nodes`).
        if (k.extra.empty()) {
            k.params.kernelParams = k.pointers.data();
        } else {
            k.extra[3] = &k.extra_bytes;
            k.params.extra = k.extra.data();
        }
        CUresult e = driver().set_params(reinterpret_cast<CUgraphExec>(exec), k.node, &k.params);
        if (e != CUDA_SUCCESS)
            fail("gpu: binding a caller buffer into the CUDA graph failed: cuGraphExecKernelNodeSetParams returned ", static_cast<int>(e));
        ++updated;
    }
    I.bound = std::move(want);
    return updated;
}

}  // namespace kiln::gpu
