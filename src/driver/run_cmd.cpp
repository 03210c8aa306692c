// kiln run: evaluates a program once on the ref interpreter with given or generated inputs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include "core/error.hpp"
#include "core/target.hpp"
#include "driver/commands.hpp"
#include "driver/display.hpp"
#include "driver/inputs.hpp"
#include "driver/loader.hpp"
#include "driver/run_io.hpp"
#include "driver/session.hpp"

namespace kiln::driver {

namespace {

constexpr std::size_t values_shown = 10;

tolerance read_tolerance(const parsed_args& args) {
    tolerance t;
    for (const char* opt : {"--rtol", "--atol"})
        if (args.has(opt) && !args.has("--test-data"))
            throw usage_error(std::string(opt) + " is a tolerance of --test-data, which is not given");
    if (args.has("--rtol")) t.rtol = parse_nonnegative(args.get("--rtol"), "--rtol");
    if (args.has("--atol")) t.atol = parse_nonnegative(args.get("--atol"), "--atol");
    return t;
}

// Prints one output; a tuple, a sequence or an optional prints each element as NAME[i] (the
// last two after a line with their type and element count).
void print_output(const std::string& name, const argument& a, bool all) {
    if (a.get_shape().is_sequence() || a.get_shape().is_optional()) {
        std::size_t n = a.sub_arguments().size();
        std::cout << name << ": " << to_string(a.get_shape()) << " holding " << n
                  << (a.get_shape().is_sequence() ? (n == 1 ? " tensor\n" : " tensors\n") : n ? " value\n" : " values (none)\n");
    }
    if (!a.get_shape().is_tensor()) {
        for (std::size_t i = 0; i < a.sub_arguments().size(); ++i)
            print_output(name + "[" + std::to_string(i) + "]", a.sub_arguments()[i], all);
        return;
    }
    std::string values;
    try {
        values = format_values(a, all ? 0 : values_shown);
    } catch (const error& e) {
        fail(name, ": ", e.what());
    }
    std::cout << name << ": " << to_string(a.get_shape()) << "\n" << values;
    std::size_t n = a.get_shape().elements();
    if (!all && n > values_shown) std::cout << " (" << values_shown << " of " << n << " values; --print-all shows all)";
    std::cout << "\n";
}

struct timed_outputs {
    std::vector<argument> outs;
    double first_ms = 0;                // the first run: first touch of the arena, caches
    std::vector<double> steady_ms;      // the runs after it
};

// Runs `runs` times (at least once) on the same inputs; the outputs are the last run's.
timed_outputs evaluate(executable& e, const std::vector<generated_input>& inputs, std::size_t runs) {
    param_map params;
    for (const auto& in : inputs) params.emplace(in.name, in.arg);
    timed_outputs r;
    for (std::size_t i = 0; i < std::max<std::size_t>(runs, 1); ++i) {
        auto start = std::chrono::steady_clock::now();
        r.outs = e.run(params);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (i == 0) r.first_ms = ms;
        else r.steady_ms.push_back(ms);
    }
    return r;
}

void print_times(const timed_outputs& r) {
    std::printf("Time: first run %.3f ms", r.first_ms);
    if (!r.steady_ms.empty()) {
        auto sorted = r.steady_ms;
        std::sort(sorted.begin(), sorted.end());
        std::printf(", steady runs (%zu) median %.3f ms, min %.3f ms", sorted.size(), sorted[sorted.size() / 2],
                    sorted.front());
    }
    std::printf("\n");
}

// Compares the outputs with the test data's; fails (exit 1) when one differs.
void check_test_data(const std::string& dir, const onnx_test_data& td, const model_file& f,
                     const std::vector<argument>& outs, tolerance tol) {
    if (outs.size() != td.outputs.size())
        fail("--test-data ", dir, ": ", td.outputs.size(), " output files (output_*.pb) but the program has ", outs.size(),
             " outputs");
    auto got = labelled_outputs(f, outs);
    auto want = flat_values(td.outputs);   // a sequence's or optional's values one by one
    if (got.size() != want.size())
        fail("--test-data ", dir, ": the outputs hold ", got.size(), " values but the test data ", want.size(),
             " (a sequence or optional of another length)");
    std::cout << "\nTest data " << dir << " (rtol " << tol.rtol << ", atol " << tol.atol << "):\n";
    std::size_t failed = compare_outputs(got, want, tol, std::cout);
    if (failed)
        fail(failed, " of ", got.size(), " outputs differ from the test data in ", dir, " (rtol ", tol.rtol, ", atol ",
             tol.atol, ")");
}

int run_run(const parsed_args& args) {
    tolerance tol = read_tolerance(args);
    std::string test_dir = args.get("--test-data");
    std::optional<onnx_test_data> td;
    session s = open_session(args, [&](session& s) {
        if (test_dir.empty()) return;
        // An ONNX model says which test files hold sequences and optionals.
        std::string model = s.file.format == model_format::onnx ? s.file.path : "";
        add_test_data_inputs(test_dir, td.emplace(read_onnx_test_data(test_dir, model)), s.file, s.inputs);
    });
    bool quiet = args.has("--quiet");
    std::size_t runs = parse_count(args.get("--runs", "3"), "--runs");
    if (runs == 0) throw usage_error("--runs expects a positive integer, got 0");
    std::string report = build_executable(s, quiet);
    const program& p = s.current();
    auto inputs = make_inputs(p.main(), s.inputs);   // before printing, so that its errors come first
    if (args.has("--save-outputs")) prepare_saving(args.get("--save-outputs"), s.file, p.main().output_shapes());
    if (!quiet) std::cout << brief_program(p) << "\n" << describe_inputs(inputs, s.inputs.seed) << "\n" << report;
    if (!quiet) std::cout << "Running on " << s.tgt->name() << " ...\n";
    timed_outputs r = evaluate(*s.exe, inputs, runs);
    const auto& outs = r.outs;
    for (std::size_t i = 0; i < outs.size(); ++i) print_output(output_label(s.file, i), outs[i], args.has("--print-all"));
    print_times(r);
    if (args.has("--save-outputs")) {
        auto files = save_outputs(args.get("--save-outputs"), s.file, outs);
        if (!quiet) std::cout << "Saved to " << args.get("--save-outputs") << ": " << list_names(files) << "\n";
    }
    if (td) check_test_data(test_dir, *td, s.file, outs, tol);
    return 0;
}

}  // namespace

command run_command() {
    command_spec s;
    s.name = "run";
    s.summary = "compile the program and run it with given or generated inputs";
    s.positional = "FILE";
    s.description =
        "Loads FILE (kiln text IR or JSON, a saved program or an ONNX model), compiles it for the\n"
        "target (ref by default: no passes without -O; a saved program is compiled already and\n"
        "loads without compiling again, its load time reported) into an executable, prints the compiled\n"
        "program (literals of more than 16 values as '@literal{ ... }'), its inputs and the compile\n"
        "report, runs the executable --runs times (default 3) on the same inputs and prints each output's\n"
        "shape and first " + std::to_string(values_shown) + " values, then the first run's time (which touches the\n"
        "arena and caches first) and the steady runs' median and minimum.\n"
        "Inputs come from --input (.npy files) or --test-data, else are random unless --fill0/--fill1\n"
        "name them: floats uniform in [-1, 1], signed integers uniform in [-4, 4], unsigned in [0, 8],\n"
        "bools 0 or 1. Each input has its own generator seeded from --seed and its position, so the\n"
        "same seed gives the same values. A given input's shape sizes the input (ONNX: before parsing).\n"
        "With --test-data, each output is compared with the expected one (|got - expected| <=\n"
        "atol + rtol * |expected| for every element); any output that differs makes the exit status 1.";
    s.options = input_option_specs();
    std::vector<option_spec> own = {
        {{"--test-data"}, option_spec::one, "DIR",
         "an ONNX test_data_set folder: inputs from input_K.pb (in the model's\ninput order), outputs compared with output_K.pb (sequences and\noptionals value by value, as NAME[i])"},
        {{"--rtol"}, option_spec::one, "R", "relative tolerance of --test-data (default 1e-3)"},
        {{"--atol"}, option_spec::one, "A", "absolute tolerance of --test-data (default 1e-5)"},
        {{"--save-outputs"}, option_spec::one, "DIR", "write each output to DIR/NAME.npy (NAME: the ONNX output name,\nelse #output_I)"},
        {{"--print-all"}, option_spec::flag, "", "print every value of each output"},
        {{"--runs"}, option_spec::one, "N", "run N times (default 3): the first run is timed apart from the steady ones"},
        {{"--quiet", "--brief"}, option_spec::flag, "", "print only the outputs and the time (no progress either)"},
    };
    s.options.insert(s.options.end(), own.begin(), own.end());
    for (auto& o : compile_option_specs()) s.options.push_back(o);
    for (auto& o : loader_options()) s.options.push_back(o);
    s.options.push_back(timeout_option_spec());
    s.examples = {"kiln run mlp.kir", "kiln run mlp.kir --fill1 --print-all --quiet", "kiln run mlp.kir -O --fp16",
                  "kiln run mlp.kiln",
                  "kiln run model.kir --seed 7 --fill0 mask --input-dim @x 4 784",
                  "kiln run model.onnx --input x=img.npy --save-outputs out",
                  "kiln run model.onnx --dim-param batch=8",
                  "kiln run model.onnx --test-data test_data_set_0 --rtol 1e-4"};
    return {s, run_run};
}

}  // namespace kiln::driver
