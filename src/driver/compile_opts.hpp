// The options that say how a program is compiled (target, -O, precision, target tuning), shared
// by compile, run, verify and perf; and compiling with progress and a report of where the time
// went.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/target.hpp"
#include "driver/args.hpp"
#include "driver/loader.hpp"

namespace kiln::driver {

struct compile_settings {
    std::string target;                 // the flag given, else default_target()
    compile_options options;
    std::vector<std::string> ignored;   // options the target has no use for, with why
    bool time_passes = false;           // --time-passes: the report lists every pass's time
    bool trace_passes = false;          // --trace-passes: print the program after every pass
    std::vector<std::string> disabled;  // --disable-pass NAME (for bisecting a pass)
};

std::vector<option_spec> compile_option_specs();
// Throws usage_error for conflicting flags and kiln::error for features not built yet (--int8,
// --fp8; --gpu/--cpu name the built targets).
compile_settings read_compile_settings(const parsed_args& args);
// A saved program is compiled already: compile options are an error, a target flag must name
// its target.
void check_saved_settings(const parsed_args& args, const model_file& f);

struct compile_report {
    std::string target;
    std::vector<std::pair<std::string, double>> passes;   // name, ms
    double total_ms = 0;                                  // lowering and building the executable
    double load_ms = 0;                                   // building the executable alone
    std::size_t kernels = 0, cache_hits = 0;             // compiled kernels (none on ref)
    // What compiling did to main: instructions (literals and parameters not counted) before and
    // after, the kernels a target launches for it, and its memory plan ("" when not plannable).
    std::size_t instructions_before = 0, instructions_after = 0, launches = 0;
    std::string memory;
    std::vector<std::string> placement;   // where the target runs the instructions (executable_stats)
    std::vector<std::string> notes;       // the target's other lines (executable_stats)
    // Where building the executable went (executable_stats): its phases, the kernels' build wall
    // time and parallelism, each kernel compiled (not a cache hit) with its time.
    std::vector<std::pair<std::string, double>> build_phases;
    double kernel_build_ms = 0;
    std::size_t compile_threads = 0, saved_kernels = 0;
    std::vector<std::pair<std::string, double>> compiled_kernels;
};

struct compiled_program {
    compile_report report;
    std::unique_ptr<executable> exe;
};

// Lowers and builds the executable, showing progress on a terminal (stderr) unless `quiet`;
// applies the settings' pass options (--disable-pass, --trace-passes to stderr).
compiled_program compile_with_report(program p, const target& t, const compile_settings& s, bool quiet);
// "Compiled for ref in 1.2 ms: propagate_constant 0.8 ms (67%), ..." and the kernel count.
std::string format_compile_report(const compile_report& r, const compile_settings& s);
// "1.234 ms".
std::string ms_text(double ms);
// "-O, fp16" or "no passes".
std::string describe_options(const compile_options& o);

}  // namespace kiln::driver
