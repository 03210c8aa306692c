// Stopping a compile or run from outside it: a run_control that another thread cancels (the C
// API's kiln_program_cancel, Python's Program.cancel) or that expires at a deadline (the driver's
// --timeout). Whoever runs a program makes its control current on that thread (run_control_scope);
// the interpreter, the executor and the gpu target check it before each instruction, and Loop
// and Scan run their body through them, so every iteration checks it too. A single instruction
// is not interrupted: the granularity is one instruction (one kernel launch on gpu).
#pragma once
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>

namespace kiln {

// Thrown at a check of a cancelled or expired control. Not a kiln::error, so that nothing that
// handles bad input (and may go on without a result, as constant folding does) swallows it; the
// message names the instruction it stopped before.
struct cancelled : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class run_control {
public:
    using clock = std::chrono::steady_clock;
    // Thread-safe; the next check on the running thread throws, once (the run stops, and a later
    // run on the same control starts afresh). Cancelling when nothing runs stops the next run.
    void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
    // Every check after `seconds` from now stops the run (the driver's --timeout).
    void set_timeout(double seconds);
    bool should_stop() const {
        return cancelled_.load(std::memory_order_relaxed) || (has_deadline_ && clock::now() >= deadline_);
    }
    // Why the run stops ("cancelled", "timed out after 2 s"); takes the cancel request.
    std::string take_reason();

private:
    std::atomic<bool> cancelled_{false};
    bool has_deadline_ = false;
    clock::time_point deadline_;
    double seconds_ = 0;
};

// Makes `c` the calling thread's current control until the scope ends (scopes nest; the
// innermost wins).
class run_control_scope {
public:
    explicit run_control_scope(run_control& c);
    ~run_control_scope();
    run_control_scope(const run_control_scope&) = delete;
    run_control_scope& operator=(const run_control_scope&) = delete;

private:
    run_control* previous_;
};

// The calling thread's current control, or null.
run_control* current_run_control();

// Checks the current control, if any: throws `cancelled` with "WHERE: REASON", `where()` (called
// only then, since describing an instruction walks its module) naming where the run stopped.
template <class Where>
void check_cancelled(const Where& where) {
    run_control* c = current_run_control();
    if (c && c->should_stop()) {
        std::string reason = c->take_reason();
        throw cancelled(std::string(where()) + ": " + reason);
    }
}

}  // namespace kiln
