// What run, verify and perf share: the model, how it is compiled, the target, and the options
// that make its inputs.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/target.hpp"
#include "driver/compile_opts.hpp"
#include "driver/inputs.hpp"
#include "driver/loader.hpp"

namespace kiln::driver {

// --seed, --fill0, --fill1, --input.
std::vector<option_spec> input_option_specs();
input_options read_input_options(const parsed_args& args);

// --timeout SECONDS (run, verify, perf); main.cpp applies it to the whole command.
option_spec timeout_option_spec();

struct session {
    model_file file;
    compile_settings settings;          // a saved program's own, when FILE is one
    std::unique_ptr<target> tgt;
    input_options inputs;
    program prog;                       // as loaded (compiled already when FILE is saved)
    std::unique_ptr<executable> exe;    // after build_executable; it owns the program then
    bool saved() const { return file.saved.has_value(); }
    const program& current() const { return exe ? exe->get_program() : prog; }
};

// Reads the options, opens FILE, checks the compile options against it and loads the program.
// `before_load` adds inputs that size the program (run's --test-data).
session open_session(const parsed_args& args, const std::function<void(session&)>& before_load = {});

// Compiles the program into s.exe (a saved program loads without compiling) and returns the
// report to print: the compile report, or the saved program's summary and its load time. With
// `report`, also the compile report's numbers (a saved program: its load time as load_ms).
std::string build_executable(session& s, bool quiet, compile_report* report = nullptr);

// The inputs as a param_map (after make_inputs).
param_map to_param_map(const std::vector<generated_input>& inputs);

// "x: float_type, {1, 28, 28}: uniform in [-1, 1]" per input, after "Inputs (seed N):".
std::string describe_inputs(const std::vector<generated_input>& inputs, std::uint64_t seed);

}  // namespace kiln::driver
