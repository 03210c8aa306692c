#include "targets/gpu/tuning_store.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/error.hpp"
#include "targets/gpu/device.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/kernel_compiler.hpp"

namespace kiln::gpu {
namespace {

// A stored choice: "kiln-tuning 1 KEYBYTES PLANBYTES BEST FIRST\n", the key (to tell a hash
// collision from a hit), the plan.
std::string encode(const std::string& key, const tuned_plan& t) {
    char head[160];
    std::snprintf(head, sizeof head, "kiln-tuning 1 %zu %zu %.9g %.9g\n", key.size(), t.plan.size(), t.best_ms, t.first_ms);
    return head + key + t.plan;
}

std::optional<tuned_plan> decode(const std::string& bytes, const std::string& key) {
    std::size_t nl = bytes.find('\n');
    if (nl == std::string::npos) return std::nullopt;
    std::istringstream head(bytes.substr(0, nl));
    std::string magic;
    int version = 0;
    std::size_t key_bytes = 0, plan_bytes = 0;
    tuned_plan t;
    if (!(head >> magic >> version >> key_bytes >> plan_bytes >> t.best_ms >> t.first_ms) || magic != "kiln-tuning" ||
        version != 1 || bytes.size() != nl + 1 + key_bytes + plan_bytes || bytes.compare(nl + 1, key_bytes, key) != 0)
        return std::nullopt;
    t.plan = bytes.substr(nl + 1 + key_bytes);
    return t;
}

struct event {
    cudaEvent_t e = nullptr;
    event() { KILN_GPU_CHECK(cudaEventCreate(&e), "creating a tuning event"); }
    ~event() { cudaEventDestroy(e); }
};

}  // namespace

double time_on_stream(const std::function<void(cudaStream_t)>& fn, cudaStream_t s, int reps) {
    event start, stop;
    fn(s);
    KILN_GPU_CHECK(cudaEventRecord(start.e, s), "timing a tuning candidate");
    for (int i = 0; i < reps; ++i) fn(s);
    KILN_GPU_CHECK(cudaEventRecord(stop.e, s), "timing a tuning candidate");
    KILN_GPU_CHECK(cudaEventSynchronize(stop.e), "timing a tuning candidate");
    float ms = 0;
    KILN_GPU_CHECK(cudaEventElapsedTime(&ms, start.e, stop.e), "timing a tuning candidate");
    return ms / reps;
}

std::optional<tuned_plan> tuning_store::find(const std::string& key) const {
    if (dir_.empty()) {
        for (const auto& [k, t] : memory_)
            if (k == key) return t;
        return std::nullopt;
    }
    return decode(read_cache_file((std::filesystem::path(dir_) / "tuning" / cache_hash({key})).string()), key);
}

tuned_plan tuning_store::choose(const std::string& library, const std::string& problem,
                                const std::vector<std::string>& candidates,
                                const std::function<void(const std::string&, cudaStream_t)>& run, cudaStream_t s,
                                const std::string& where) {
    const device_info& dev = current_device();
    const std::string key = cat(library, "\n", dev.name, " ", dev.arch, "\n", problem);
    if (auto t = find(key)) {
        ++from_store;
        best_ms += t->best_ms;
        first_ms += t->first_ms;
        return *t;
    }
    // Sub-millisecond calls: enough repetitions for ~1% event resolution, few for long ones.
    tuned_plan best;
    double first = -1;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        double ms;
        try {
            auto call = [&](cudaStream_t st) { run(candidates[i], st); };
            double once = time_on_stream(call, s, 1);
            ms = time_on_stream(call, s, once < 0.05 ? 50 : once < 1 ? 10 : 2);
        } catch (const std::exception&) {
            cudaGetLastError();   // a candidate the library refuses at run time is no choice
            continue;
        }
        if (i == 0) first = ms;
        if (best.plan.empty() || ms < best.best_ms) best = {candidates[i], ms, 0};
    }
    if (best.plan.empty()) fail("gpu: --exhaustive-tune: no candidate of ", library, " ran for ", where);
    best.first_ms = first < 0 ? best.best_ms : first;
    ++timed;
    best_ms += best.best_ms;
    first_ms += best.first_ms;
    if (dir_.empty())
        memory_.emplace_back(key, best);
    else
        write_cache_file((std::filesystem::path(dir_) / "tuning" / cache_hash({key})).string(), encode(key, best));
    return best;
}

std::string tuning_store::report() const {
    if (timed + from_store == 0) return {};
    char gain[64];
    std::snprintf(gain, sizeof gain, "%.4f ms -> %.4f ms (%.1f%% less)", first_ms, best_ms,
                  first_ms > 0 ? 100 * (first_ms - best_ms) / first_ms : 0.0);
    return cat("exhaustive tune: ", timed + from_store, " library calls (timed now ", timed, ", from the tuning store ",
               from_store, "); one run of each, heuristic's pick -> fastest: ", gain);
}

}  // namespace kiln::gpu
