// Progress of a long compile on a terminal: silent for the first second (most compiles finish
// by then), then one line rewritten in place with the pass and kernel counts; nothing at all
// when the stream is not a terminal or the user asked for quiet.
#pragma once
#include <chrono>
#include <iosfwd>
#include <string>

namespace kiln {

class compile_progress {
public:
    // `enabled`: the stream is a terminal and output is not quieted.
    compile_progress(std::ostream& os, bool enabled, std::size_t passes, double delay_s = 1.0);
    ~compile_progress();
    void pass_done(const std::string& name);
    // Kernel compilation (targets that compile kernels report each one, and whether it came
    // from the cache).
    void kernel_done(std::size_t total, bool cache_hit);
    bool shown() const { return shown_; }

private:
    void show(const std::string& what);
    std::ostream& os_;
    bool enabled_;
    std::size_t passes_, passes_done_ = 0, kernels_done_ = 0, cache_hits_ = 0;
    double delay_s_;
    bool shown_ = false;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace kiln
