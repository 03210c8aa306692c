// --exhaustive-tune: a library call's candidate plans (cuBLASLt's heuristic list, cuDNN's
// algorithms) timed on the real problem at load, the fastest kept in the disk cache
// ($XDG_CACHE_HOME/kiln/tuning, beside the kernels), keyed by the problem, the device and the
// library's version, so that the timing is paid once per machine. Any library lowering can use it:
// it names its problem, hands its candidates as plain bytes and a way to run each.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

typedef struct CUstream_st* cudaStream_t;

namespace kiln::gpu {

// A choice and what the timing found: the winner's time and the heuristic's first choice's.
struct tuned_plan {
    std::string plan;
    double best_ms = 0, first_ms = 0;
};

class tuning_store {
public:
    // `dir`: the cache directory (kernel_cache_dir); empty keeps choices in memory only (--no-cache).
    explicit tuning_store(std::string dir) : dir_(std::move(dir)) {}

    // The plan for `problem` (text naming everything the choice depends on; the device and
    // `library`, its name and version, are added to the key): from the store, else each of
    // `candidates` (the heuristic's order, first = its pick) run by `run` on `s` and timed, the
    // fastest stored. A candidate whose run throws is skipped; none left is an error naming `where`.
    tuned_plan choose(const std::string& library, const std::string& problem, const std::vector<std::string>& candidates,
                      const std::function<void(const std::string& plan, cudaStream_t)>& run, cudaStream_t s,
                      const std::string& where);

    // What this store did, for the compile report.
    std::size_t timed = 0, from_store = 0;
    double best_ms = 0, first_ms = 0;   // summed over every choice, timed or stored
    std::string report() const;

private:
    std::optional<tuned_plan> find(const std::string& key) const;
    std::string dir_;
    std::vector<std::pair<std::string, tuned_plan>> memory_;   // without a directory
};

// Milliseconds per call of `fn` on `s` (CUDA events around `reps` calls, after one warm-up call).
double time_on_stream(const std::function<void(cudaStream_t)>& fn, cudaStream_t s, int reps);

}  // namespace kiln::gpu
