#include "tools/progress.hpp"

#include <cstdio>
#include <ostream>

namespace kiln {

compile_progress::compile_progress(std::ostream& os, bool enabled, std::size_t passes, double delay_s)
    : os_(os), enabled_(enabled), passes_(passes), delay_s_(delay_s) {}

compile_progress::~compile_progress() {
    if (shown_) os_ << "\r\x1b[K" << std::flush;   // clear the line: the report follows
}

void compile_progress::pass_done(const std::string& name) {
    ++passes_done_;
    show("pass " + std::to_string(passes_done_) + "/" + std::to_string(passes_) + " " + name);
}

void compile_progress::kernel_done(std::size_t total, bool cache_hit) {
    ++kernels_done_;
    cache_hits_ += cache_hit;
    show("kernels " + std::to_string(kernels_done_) + "/" + std::to_string(total) + " (" +
         std::to_string(cache_hits_) + " cache hits)");
}

void compile_progress::show(const std::string& what) {
    if (!enabled_) return;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (s < delay_s_) return;
    char t[32];
    std::snprintf(t, sizeof t, "%.1f s", s);
    os_ << "\r\x1b[Kcompiling: " << what << " (" << t << ")" << std::flush;
    shown_ = true;
}

}  // namespace kiln
