// The library handles an executable owns: cuBLASLt and cuDNN, bound to its stream, one
// workspace they share (steps run one after another on the stream), and the library plans it chose.
#pragma once
#include <cublasLt.h>
#include <cudnn.h>

#include <map>
#include <memory>
#include <string>

#include "targets/gpu/device.hpp"

namespace kiln::gpu {

class tuning_store;

// The libraries' choices by problem (a cuBLASLt algorithm, cuDNN's convolution algorithm), as
// plain bytes, so that a saved program keeps them and loading it asks no heuristic. A problem is a
// text naming everything the choice depends on (types, lens, strides, attributes, TF32); the same
// problem twice shares one entry.
class library_plans {
public:
    // The plan a saved program holds for `problem`, or null.
    const std::string* saved(const std::string& problem) const;
    // Records the plan this executable uses for `problem` (`from_saved`: taken from the file).
    void use(const std::string& problem, std::string plan, bool from_saved);
    // The plans as one blob of a saved program, and back (an unreadable blob is an error).
    std::string serialize() const;
    void read_saved(const std::byte* data, std::size_t bytes);
    std::size_t from_saved = 0, queried = 0;   // plans taken from the file, and asked of a heuristic

private:
    std::map<std::string, std::string> saved_, used_;
};
inline constexpr const char* library_plans_blob = "gpu library plans";

struct library_handles {
    explicit library_handles(cudaStream_t s);
    ~library_handles();
    library_handles(const library_handles&) = delete;
    library_handles& operator=(const library_handles&) = delete;

    // Created on first use (cuDNN's start-up costs ~100 ms; a program without GEMMs needs neither).
    cublasLtHandle_t blas();
    cudnnHandle_t dnn();
    cudaStream_t stream;
    bool allow_tf32 = false;
    library_plans plans;
    std::unique_ptr<tuning_store> tuning;   // --exhaustive-tune (null: the heuristics' first choice)

    // The shared workspace, grown at load time to the largest a step asked for.
    void reserve_workspace(std::size_t bytes);
    std::byte* workspace() const { return workspace_.data(); }
    std::size_t workspace_bytes() const { return workspace_.bytes(); }

private:
    cublasLtHandle_t blas_ = nullptr;
    cudnnHandle_t dnn_ = nullptr;
    device_buffer workspace_;
};

}  // namespace kiln::gpu
