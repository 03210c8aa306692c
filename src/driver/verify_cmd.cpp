// kiln verify: the target's results against ref's on the same inputs; -i per instruction,
// --bisect for the first diverging instruction, --reduce for a smaller failing program.
#include <iostream>

#include "core/error.hpp"
#include "driver/commands.hpp"
#include "driver/display.hpp"
#include "driver/session.hpp"
#include "tools/verify.hpp"

namespace kiln::driver {

namespace {

tolerance_overrides read_overrides(const parsed_args& args) {
    tolerance_overrides t;
    if (args.has("--rms-tol")) t.rms_tol = parse_nonnegative(args.get("--rms-tol"), "--rms-tol");
    if (args.has("--atol")) t.atol = parse_nonnegative(args.get("--atol"), "--atol");
    if (args.has("--rtol")) t.rtol = parse_nonnegative(args.get("--rtol"), "--rtol");
    return t;
}

int check_outputs(const session& s, const param_map& in, const verify_options& o) {
    verify_result r = verify_program(s.prog, *s.tgt, in, o);
    std::size_t failed = 0;
    for (std::size_t i = 0; i < r.outputs.size(); ++i) {
        const auto& c = r.outputs[i];
        std::cout << output_label(s.file, i) << ": " << (c.cmp.pass ? "PASS" : "FAIL") << "\n" << describe(c.cmp);
        failed += !c.cmp.pass;
    }
    if (failed)
        fail("verify: ", failed, " of ", r.outputs.size(), " outputs differ from ref (--bisect finds where they start)");
    std::cout << "PASS: " << r.outputs.size() << (r.outputs.size() == 1 ? " output matches" : " outputs match") << " ref\n";
    return 0;
}

int check_instructions(const session& s, const param_map& in, const verify_options& o) {
    verify_result r = verify_instructions(s.prog, *s.tgt, in, o);
    std::size_t failed = 0;
    for (const auto& c : r.outputs) {
        std::cout << c.label << ": " << (c.cmp.pass ? "PASS" : "FAIL") << "\n";
        if (!c.cmp.pass) std::cout << describe(c.cmp, "    ");
        failed += !c.cmp.pass;
    }
    if (failed) fail("verify -i: ", failed, " of ", r.outputs.size(), " instructions differ from ref");
    std::cout << "PASS: " << r.outputs.size() << " instructions match ref, each alone\n";
    return 0;
}

int bisect(const parsed_args& args, const session& s, const param_map& in, const verify_options& o) {
    bisect_result b = bisect_program(s.prog, *s.tgt, in, o);
    if (!b.found) {
        std::cout << "PASS: every output matches ref, nothing to bisect (" << b.checks << " checks)\n";
        return 0;
    }
    std::cout << "First diverging instruction (" << b.checks << " prefix programs checked):\n  " << b.instruction
              << "\n";
    if (!b.node.empty()) std::cout << "  node: " << b.node << "\n";
    std::cout << "  inputs:\n";
    for (const auto& i : b.inputs) std::cout << "    " << i << "\n";
    if (!b.kernel.empty()) std::cout << "  compiled as:\n    " << b.kernel << "\n";
    std::cout << describe(b.cmp);
    if (args.has("--reduce")) {
        program reduced = reduce_program(s.prog, b);
        std::string path = args.get("--output");
        std::cout << "Reduced program (" << reduced.main().size() << " of " << s.prog.main().size()
                  << " instructions, still failing)" << (path.empty() ? ":\n" : ": " + path + "\n");
        write_text(path.empty() ? brief_program(reduced) : to_string(reduced), path);
    }
    fail("verify: ", b.instruction.substr(0, b.instruction.find(" = ")), " is the first instruction whose value differs from ref");
}

int run_verify(const parsed_args& args) {
    verify_options o;
    o.tolerances = read_overrides(args);
    if (args.has("--output") && !args.has("--reduce")) throw usage_error("-o writes the --reduce program; give --reduce");
    int modes = args.has("--per-instruction") + (args.has("--bisect") || args.has("--reduce"));
    if (modes > 1) throw usage_error("give one of -i and --bisect/--reduce");
    session s = open_session(args);
    if (s.saved())
        throw usage_error("'" + s.file.path + "' is a saved program; verify compiles the source model itself (give "
                          "the .onnx or .kir file and the compile options)");
    o.options = s.settings.options;
    auto inputs = make_inputs(s.prog.main(), s.inputs);
    bool quiet = args.has("--quiet");
    if (!quiet)
        std::cout << "Verifying " << s.file.path << ": " << s.tgt->name() << " (" << describe_options(o.options)
                  << ") against ref (no passes)\n" << describe_inputs(inputs, s.inputs.seed) << "\n";
    param_map in = to_param_map(inputs);
    if (args.has("--per-instruction")) return check_instructions(s, in, o);
    if (args.has("--bisect") || args.has("--reduce")) return bisect(args, s, in, o);
    return check_outputs(s, in, o);
}

}  // namespace

command verify_command() {
    command_spec s;
    s.name = "verify";
    s.summary = "check the target's results against ref's on the same inputs";
    s.positional = "FILE";
    s.description =
        "Compiles FILE for the target (with the compile options given) and runs it and ref (the\n"
        "interpreter, no passes) on the same inputs. An output passes only when both hold: the RMS\n"
        "error sqrt(sum (got - ref)^2 / sum ref^2) <= rms_tol, and |got - ref| <= atol + rtol * |ref|\n"
        "for every element (NaN matches only NaN). Each output prints its RMS error, how many\n"
        "elements are not close, the worst element (index, both values), NaN/Inf counts and the\n"
        "tolerances used: by default 1e-3 each for float32, 8e-2/4e-2/4e-2 for fp16/bf16 or with\n"
        "--fp16/--bf16, 0.8/0.4/0.4 for fp8, exact for integers. -i checks each instruction alone on\n"
        "ref's values of its inputs. --bisect finds the first instruction whose value diverges while\n"
        "its inputs' values match (and the compiled kernel that produced it); --reduce also prints\n"
        "the program cut down to it, a smaller program that still fails. Exit status 1 on a failure.";
    s.options = input_option_specs();
    std::vector<option_spec> own = {
        {{"--rms-tol"}, option_spec::one, "T", "the RMS error tolerance (default by dtype)"},
        {{"--atol"}, option_spec::one, "A", "the absolute tolerance (default by dtype)"},
        {{"--rtol"}, option_spec::one, "R", "the relative tolerance (default by dtype)"},
        {{"--per-instruction", "-i"}, option_spec::flag, "", "check each instruction alone"},
        {{"--bisect"}, option_spec::flag, "", "find the first instruction whose value differs from ref"},
        {{"--reduce", "-r"}, option_spec::flag, "", "bisect, then print the program cut down to that instruction"},
        {{"--output", "-o"}, option_spec::one, "FILE", "write the --reduce program to FILE (text IR)"},
        {{"--quiet"}, option_spec::flag, "", "print only the results"},
    };
    s.options.insert(s.options.end(), own.begin(), own.end());
    for (auto& o : compile_option_specs()) s.options.push_back(o);
    for (auto& o : loader_options()) s.options.push_back(o);
    s.options.push_back(timeout_option_spec());
    s.examples = {"kiln verify mlp.kir -O", "kiln verify model.onnx -O --fp16 --rms-tol 0.01",
                  "kiln verify model.onnx -O -i", "kiln verify model.onnx -O --bisect",
                  "kiln verify model.onnx -O --reduce -o small.kir"};
    return {s, run_verify};
}

}  // namespace kiln::driver
