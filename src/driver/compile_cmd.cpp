// kiln compile: compiles a program for a target and writes it, by default as a saved program
// that run and perf load without compiling again.
#include <iostream>

#include "driver/commands.hpp"
#include "driver/compile_opts.hpp"
#include "driver/program_output.hpp"

namespace kiln::driver {

namespace {

int run_compile(const parsed_args& args) {
    compile_settings cs = read_compile_settings(args);
    model_file f = open_model(args);
    if (f.saved) throw usage_error("'" + f.path + "' is a saved program, compiled already; 'kiln read' converts it");
    program p = load_model(f, read_dim_options(args), false);
    auto t = make_target(cs.target);
    bool quiet = args.has("--quiet");
    auto [r, exe] = compile_with_report(std::move(p), *t, cs, quiet);
    saved_program_info info;
    info.target = t->name();
    info.device_arch = t->device_arch();
    info.options = cs.options;
    bool to_stdout = args.get("--output").empty();
    std::string written = write_program(args, exe->get_program(), info, exe->saved());
    // With the program on stdout the report goes to stderr, so that stdout stays a program.
    std::ostream& report = to_stdout ? std::cerr : std::cout;
    if (!quiet) report << format_compile_report(r, cs);
    if (!quiet && !written.empty()) report << "Wrote " << written << "\n";
    return 0;
}

}  // namespace

command compile_command() {
    command_spec s;
    s.name = "compile";
    s.summary = "compile a program for a target and write it (a saved program with -o x.kiln)";
    s.positional = "FILE";
    s.description =
        "Loads FILE, compiles it for the target (ref by default; -O runs the generic passes) and writes\n"
        "the compiled program: with -o FILE.kiln (or --binary) a saved program, a versioned container\n"
        "with the target, its device architecture, a hash of the compile options, the program, its\n"
        "weights in 64-byte aligned sections that loading maps instead of copying, and the kernels'\n"
        "binaries (none on ref), each section checksummed. 'kiln run x.kiln' and 'kiln perf x.kiln'\n"
        "load it without compiling again. Other formats as for 'kiln read'. Then it reports the compile\n"
        "time by pass and the kernels compiled (on stderr when the program goes to stdout). Compiles\n"
        "that take more than a second show progress on a terminal.";
    s.options = output_option_specs();
    for (auto& o : compile_option_specs()) s.options.push_back(o);
    s.options.push_back({{"--quiet"}, option_spec::flag, "", "print no report and no progress"});
    for (auto& o : loader_options()) s.options.push_back(o);
    s.examples = {"kiln compile mlp.kir -O -o mlp.kiln", "kiln compile model.onnx --gpu --fp16 -o model.kiln",
                  "kiln compile mlp.kir -O --brief", "kiln compile mlp.kir -O -g -o mlp.svg"};
    return {s, run_compile};
}

}  // namespace kiln::driver
