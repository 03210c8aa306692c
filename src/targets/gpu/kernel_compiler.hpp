// Generated kernels: CUDA C++ sources that include the device library, compiled by NVRTC for
// the device's architecture into cubins and loaded as CUDA libraries.
//  - Identical sources are compiled once per program; distinct ones in parallel (one thread per
//    core).
//  - A disk cache ($XDG_CACHE_HOME/kiln, default ~/.cache/kiln) keyed by a hash of the source,
//    the device library, the architecture, the NVRTC version and the flags holds the cubins;
//    entries are written to a temporary file and renamed, so concurrent processes never read a
//    partial one.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

typedef struct CUkern_st* cudaKernel_t;
typedef struct CUlib_st* cudaLibrary_t;
typedef struct CUstream_st* cudaStream_t;

namespace kiln::gpu {

struct kernel_source {
    std::string entry;   // the extern "C" __global__ function to load
    std::string code;    // CUDA C++ (may #include the device library's headers)
    std::string where;   // the instruction it is for, for error messages
};

struct kernel_settings {
    std::string arch;          // "sm_90"
    bool fast_math = true;
    bool use_cache = true;
    std::string cache_dir;     // empty: $XDG_CACHE_HOME/kiln or ~/.cache/kiln
};

struct kernel_build_stats {
    std::size_t kernels = 0;      // distinct kernels
    std::size_t cache_hits = 0;   // of those, loaded from the disk cache
    std::size_t from_saved = 0;   // of those, taken from a saved program
    double compile_ms = 0;        // wall time of compiling and loading them
    std::size_t threads = 0;      // the most compiling at once
    // Each kernel compiled with NVRTC (not a cache hit or saved): the instruction it is for, ms.
    std::vector<std::pair<std::string, double>> compiled;
};

// Owns the loaded libraries (unloaded on destruction).
class kernel_set {
public:
    kernel_set() = default;
    ~kernel_set();
    kernel_set(const kernel_set&) = delete;
    kernel_set& operator=(const kernel_set&) = delete;
    // Compiles and loads the sources; returns one kernel per source, in order. A compile error
    // names the instruction of the source and prints the NVRTC log.
    // Cubins a saved program carries, by key: taken before the disk cache and NVRTC.
    std::vector<cudaKernel_t> build(const std::vector<kernel_source>& sources, const kernel_settings& s,
                                    kernel_build_stats& stats, const std::map<std::string, std::string>& saved = {});
    // The loaded kernels' cubins by key, for a saved program.
    const std::vector<std::pair<std::string, std::string>>& binaries() const { return binaries_; }

private:
    std::vector<cudaLibrary_t> libs_;
    std::vector<std::pair<std::string, std::string>> binaries_;
};

// Launches a loaded kernel (args: addresses of its parameters), checked.
void launch_kernel(cudaKernel_t k, unsigned grid, unsigned block, void** args, cudaStream_t s, const std::string& where);

// The cache directory the settings use.
std::string kernel_cache_dir(const kernel_settings& s);
// The disk cache's file access, shared with the tuning store: a missing or unreadable file reads
// empty, and a cache that cannot be written is no error (written to a temporary, then renamed).
std::string read_cache_file(const std::string& path);
void write_cache_file(const std::string& path, const std::string& bytes);
// A 128-bit hash of the fields, as hex: the cache's file names.
std::string cache_hash(std::initializer_list<std::string_view> fields);
// Compiles one source to a cubin (no cache); for tests and for the cache's misses.
std::string compile_to_cubin(const kernel_source& src, const kernel_settings& s);

}  // namespace kiln::gpu
