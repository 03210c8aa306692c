// perf: timing a compiled program. Whole runs give the rate and the spread (min, median, p90,
// p99); runs observed per instruction give each instruction's (or kernel's) share; one observed
// run can be written as a Chrome trace (chrome://tracing, ui.perfetto.dev).
#pragma once
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/target.hpp"

namespace kiln {

struct instruction_time {
    std::string line;   // the instruction in the printed form
    std::string op;     // its op name (the summary groups by it)
    double ms = 0;      // interquartile mean over the observed runs
};

// The spread of a set of run times (ms).
struct run_spread {
    double mean = 0, min = 0, p10 = 0, median = 0, p90 = 0, p99 = 0, max = 0;
    double iq_mean = 0;   // the mean of the middle half
};
run_spread spread_of(const std::vector<double>& sorted);

struct perf_options {
    std::size_t iterations = 100;   // timed whole runs (and as many observed runs)
    std::size_t warmup = 1;         // untimed runs first (the first touches the arena and caches;
                                    // the gpu's captures its CUDA graph)
    bool instructions = true;       // also time each instruction (observed runs)
};

struct perf_report {
    std::size_t iterations = 0, warmup = 0;
    std::size_t input_sets = 1;  // the runs take the input sets in turn
    double first_run_ms = 0;   // the first warm-up run, not in the statistics
    std::vector<instruction_time> instructions;               // main's, in order (empty when
                                                              // the target cannot observe or
                                                              // perf_options::instructions is off)
    std::vector<std::pair<std::string, double>> by_op;        // total ms per op, largest first
    std::vector<double> run_ms;                               // each whole run, sorted (host clock)
    double mean = 0, min = 0, p10 = 0, median = 0, p90 = 0, p99 = 0, max = 0;
    // The mean of the middle half of the runs (as MIGraphX reports): the total time and the
    // rate, steady where a busy machine stalls a few runs.
    double iq_mean = 0;
    // Each whole run's time on the device's own clock (executable::enable_device_timing), sorted;
    // empty on host targets.
    std::vector<double> device_run_ms;
    run_spread device;
    double instructions_ms = 0;   // the sum of the instructions' averages
    double overhead_ms = 0;       // iq_mean minus that (negative when observing costs more)
    double rate() const { return iq_mean > 0 ? 1000.0 / iq_mean : 0; }
};

// `warmup` untimed runs, `iterations` whole runs, then (with `instructions`) `iterations`
// observed runs; run i takes input_sets[i % size] (at least one set).
perf_report measure_program(executable& e, std::span<const param_map> input_sets, const perf_options& o);
// One warm-up run, `iterations` whole runs, then `iterations` observed runs.
perf_report measure_program(executable& e, const param_map& inputs, std::size_t iterations);

// A Chrome trace (JSON) of one observed run: a slice for the run and one per instruction.
std::string trace_program(executable& e, const std::string& target_name, const param_map& inputs);

// The value at fraction q (0..1) of sorted values (nearest rank).
double percentile(const std::vector<double>& sorted, double q);

}  // namespace kiln
