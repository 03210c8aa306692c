// What the C API and the Python module share: a parsed program with the names of its inputs and
// outputs, the target it was compiled for, and the calls both APIs offer on it (compile, run on
// named host inputs, verify against ref, time runs). Errors are kiln::error; each API maps them.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/target.hpp"
#include "frontends/onnx/onnx.hpp"

namespace kiln::api {

// Which step failed, so that each API can raise the matching error kind.
enum class stage { parse, target, compile, input, run, io };

struct stage_error : error {
    stage where;
    stage_error(stage s, const std::string& msg) : error(msg), where(s) {}
};

struct api_program {
    program prog;
    std::vector<std::string> input_names;    // the main module's parameters, in order
    std::vector<std::string> output_names;   // ONNX output names ("#output_I" when unknown)
    std::unique_ptr<target> compiled_for;    // null until compile
    compile_options options;

    bool compiled() const { return compiled_for != nullptr; }
    std::string target_name() const { return compiled_for ? compiled_for->name() : ""; }
    std::vector<shape> input_shapes() const;
    std::vector<shape> output_shapes() const;
};

// The frontend's warnings are collected rather than printed (the APIs print nothing).
std::unique_ptr<api_program> parse_onnx_file(const std::string& path, onnx_options opts);
std::unique_ptr<api_program> parse_onnx_buffer(const void* data, std::size_t size, onnx_options opts);
// A program from kiln's text IR (tests, and copies of programs).
std::unique_ptr<api_program> from_program(program p, std::vector<std::string> output_names = {});

// Saves a compiled program (src/runtime/saved_program.hpp) with its output names; loading gives
// it back compiled, without compiling again. File errors are stage::io.
void save(const api_program& p, const std::string& path);
std::unique_ptr<api_program> load(const std::string& path);

// Compiles for the named target; a program compiles once.
void compile(api_program& p, const std::string& target_name, const compile_options& opts);
// Runs a compiled program on host inputs; returns host outputs in order.
std::vector<argument> run(const api_program& p, const param_map& inputs);

struct tolerance {
    double rtol = 1e-3;
    double atol = 1e-5;
};

struct output_check {
    std::string name;
    double max_abs = 0, max_rel = 0, rms = 0;   // rms: root mean square of the differences
    bool passed = false;
    std::string reason;   // why it failed: "element 3: 1.5, expected 1.25" or a type/lens mismatch
};

struct verify_report {
    bool passed = false;
    std::uint64_t seed = 0;   // the seed of the random inputs (when none were given)
    std::vector<output_check> outputs;
    std::string to_string() const;
};

// Compiles a copy of the (uncompiled) program for the target and compares its outputs with the
// uncompiled program run on ref without optimisation. Missing inputs are drawn from `seed`.
verify_report verify(const api_program& p, param_map inputs, const std::string& target_name,
                     const compile_options& opts, tolerance tol, std::uint64_t seed = 0);

struct perf_report {
    std::string target;
    std::size_t iterations = 0;
    double mean_ms = 0, min_ms = 0, max_ms = 0, median_ms = 0;
    std::vector<std::pair<std::string, std::size_t>> op_counts;   // instructions of main by op, most first
    std::string to_string() const;
};

// Times `iterations` runs of a compiled program (after one warm-up run); missing inputs are random.
perf_report time_runs(const api_program& p, param_map inputs, std::size_t iterations, std::uint64_t seed = 0);

// Random inputs for the parameters `inputs` lacks (static shapes only).
param_map complete_inputs(const api_program& p, param_map inputs, std::uint64_t seed);

}  // namespace kiln::api
