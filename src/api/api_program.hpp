// What the C API and the Python module share: a parsed program with the names of its inputs and
// outputs, the target it was compiled for, and the calls both APIs offer on it (compile, run on
// named host inputs, verify against ref, time runs). Errors are kiln::error; each API maps them.
// verify and timing are the driver's (src/tools/verify.hpp, perf.hpp) with the API's names.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/target.hpp"
#include "frontends/onnx/onnx.hpp"
#include "tools/compare.hpp"
#include "tools/perf.hpp"

namespace kiln::api {

// Which step failed, so that each API can raise the matching error kind.
enum class stage { parse, target, compile, input, run, io };

struct stage_error : error {
    stage where;
    stage_error(stage s, const std::string& msg) : error(msg), where(s) {}
};

// Runs `f`, turning a kiln::error (or a standard exception) into a stage_error of stage `s`.
template <class F>
auto at_stage(stage s, F&& f) {
    try {
        return f();
    } catch (const stage_error&) {
        throw;
    } catch (const cancelled&) {   // each API reports a cancel as such, at any stage
        throw;
    } catch (const std::exception& e) {
        throw stage_error(s, e.what());
    }
}

struct api_program {
    program prog;                            // as parsed; compile moves it into the executable
    std::vector<std::string> input_names;    // the main module's parameters, in order
    std::vector<std::string> output_names;   // ONNX output names ("#output_I" when unknown)
    std::unique_ptr<executable> exe;         // null until compile (or load)
    std::string target, device_arch;         // what it was compiled for
    compile_options options;
    std::mutex running;                      // an executable runs one call at a time
    // Current while it compiles, runs, verifies or is timed; cancel() needs no lock, so another
    // thread stops a call in progress (mutable: verify reads the program but may be cancelled).
    mutable run_control control;

    bool compiled() const { return exe != nullptr; }
    std::string target_name() const { return target; }
    // The program as parsed, or as compiled once it is.
    const program& current() const { return exe ? exe->get_program() : prog; }
    std::vector<shape> input_shapes() const;
    std::vector<shape> output_shapes() const;
};

// The frontend's warnings are collected rather than printed (the APIs print nothing).
std::unique_ptr<api_program> parse_onnx_file(const std::string& path, onnx_options opts);
std::unique_ptr<api_program> parse_onnx_buffer(const void* data, std::size_t size, onnx_options opts);
// A program from kiln's text IR (tests, and copies of programs).
std::unique_ptr<api_program> from_program(program p, std::vector<std::string> output_names = {});

// Saves a compiled program (src/tools/saved_program.hpp) with its output names; loading gives
// it back compiled, without compiling again. File errors are stage::io.
void save(const api_program& p, const std::string& path);
std::unique_ptr<api_program> load(const std::string& path);

// Compiles for the named target; a program compiles once.
void compile(api_program& p, const std::string& target_name, const compile_options& opts);
// Runs a compiled program on host inputs; returns host outputs in order (copies the caller owns).
std::vector<argument> run(api_program& p, const param_map& inputs);

// Runs on the caller's buffers (host, or device memory of a gpu program), writing the outputs into
// `outputs` (one per output, in order, of the type and lens it computes). A target without a
// device refuses device buffers (stage::run, naming the buffer).
void run_into(api_program& p, const caller_inputs& inputs, std::span<const caller_buffer> outputs);

// Missing, unknown, mistyped and mis-shaped inputs are stage::input errors naming the input.
void check_inputs(const api_program& p, const param_map& inputs);

struct output_check {
    std::string name;
    comparison cmp;       // src/tools/compare.hpp: RMS and allclose, worst element, NaN/Inf counts
    std::string reason() const;   // why it failed, on one line ("" when it passed)
};

struct verify_report {
    bool passed = false;
    std::uint64_t seed = 0;   // the seed of the random inputs (when none were given)
    std::vector<output_check> outputs;
    std::string to_string() const;
};

// verify_program (src/tools/verify.hpp): compiles a copy of the (uncompiled) program for the
// target and compares its outputs with the program run on ref without passes; both the RMS and
// the allclose test must hold, with tolerances by dtype and precision unless `tol` overrides
// them. Missing inputs are drawn from `seed`. Compiling or running the copy fails as stage::compile.
verify_report verify(const api_program& p, param_map inputs, const std::string& target_name,
                     const compile_options& opts, const tolerance_overrides& tol, std::uint64_t seed = 0);

struct instruction_time {
    std::string line, op;   // the compiled instruction (or kernel) as printed, its op
    double ms = 0;          // interquartile mean over the observed runs
    double share = 0;       // of the instructions' total (0..1)
};

struct perf_result {
    std::string target;
    perf_report timings;                    // measure_program's report (src/tools/perf.hpp)
    std::vector<instruction_time> instructions;                  // main's, in order (empty when
                                                                 // the target cannot time them)
    std::vector<std::tuple<std::string, double, double>> by_op;  // (op, ms, share), largest first
    std::vector<std::pair<std::string, std::size_t>> op_counts;  // instructions of main by op, most first
    std::string to_string() const;
};

// measure_program on a compiled program: one warm-up run, `iterations` whole runs, then
// `iterations` runs timing each instruction. Missing inputs are random.
perf_result time_runs(api_program& p, param_map inputs, std::size_t iterations, std::uint64_t seed = 0);

// Random inputs for the parameters `inputs` lacks (static shapes only).
param_map complete_inputs(const api_program& p, param_map inputs, std::uint64_t seed);

}  // namespace kiln::api
