// Caller device buffers bound into the captured CUDA graph in place of the executable's own
// memory, so that a replay reads the caller's inputs and writes its outputs without a copy.
// After capture, the parameters of every kernel node (ours, cuBLASLt's, cuDNN's: each kernel's
// parameter layout comes from cuFuncGetParamInfo) are scanned for pointers into the bindable
// ranges (the parameters' buffers, the outputs' arena ranges); binding a range to another address
// rewrites those parameters in the instantiated graph (cuGraphExecKernelNodeSetParams, a host
// call of about a microsecond per node, only when an address changes). A range that a memcpy or
// memset node touches, or any range when the graph has a node of another kind, is not bindable:
// its buffers are copied as before.
#pragma once
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

typedef struct CUgraph_st* cudaGraph_t;
typedef struct CUgraphExec_st* cudaGraphExec_t;

namespace kiln {
class executable;
}

namespace kiln::gpu {

// How many caller device buffers a gpu executable's runs have read or written in place so far
// (zero for another target's executable): what tells a bound buffer from a copied one.
struct caller_buffers_in_place {
    std::size_t inputs = 0, outputs = 0;
};
caller_buffers_in_place in_place_counts(const executable& e);

struct byte_range {
    std::byte* begin = nullptr;   // null: nothing to bind
    std::size_t bytes = 0;
};

class graph_bindings {
public:
    graph_bindings(cudaGraph_t graph, std::vector<byte_range> ranges);
    ~graph_bindings();
    graph_bindings(const graph_bindings&) = delete;
    graph_bindings& operator=(const graph_bindings&) = delete;

    bool bindable(std::size_t range) const;
    // Makes the kernels of `exec` use to[i] for range i (its own memory where to[i] is null) from
    // its next launch; `exec` was instantiated from the scanned graph. Returns the nodes updated.
    std::size_t bind(cudaGraphExec_t exec, std::span<std::byte* const> to);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace kiln::gpu
