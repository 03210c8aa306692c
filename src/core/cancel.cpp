#include "core/cancel.hpp"

#include <cmath>
#include <sstream>

namespace kiln {

namespace {
thread_local run_control* current = nullptr;
}

void run_control::set_timeout(double seconds) {
    has_deadline_ = true;
    seconds_ = seconds;
    // A deadline beyond any run (and beyond what the clock can hold) is none.
    if (!std::isfinite(seconds) || seconds > 1e9) has_deadline_ = false;
    else deadline_ = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
}

std::string run_control::take_reason() {
    if (cancelled_.exchange(false, std::memory_order_relaxed)) return "cancelled";
    std::ostringstream os;
    os << "timed out after " << seconds_ << " s";
    return os.str();
}

run_control_scope::run_control_scope(run_control& c) : previous_(current) { current = &c; }
run_control_scope::~run_control_scope() { current = previous_; }

run_control* current_run_control() { return current; }

}  // namespace kiln
