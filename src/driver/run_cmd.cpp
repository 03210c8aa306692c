// kiln run: evaluates a program once on the ref interpreter with generated inputs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "core/target.hpp"
#include "driver/commands.hpp"
#include "driver/display.hpp"
#include "driver/inputs.hpp"
#include "driver/loader.hpp"

namespace kiln::driver {

namespace {

constexpr std::size_t values_shown = 10;

fill_spec read_fill(const parsed_args& args, const std::string& opt) {
    fill_spec f;
    for (const auto& use : args.uses(opt)) {
        if (use.empty()) f.all = true;
        f.names.insert(use.begin(), use.end());
    }
    return f;
}

input_options read_input_options(const parsed_args& args) {
    input_options o;
    o.seed = parse_count(args.get("--seed", "0"), "--seed");
    o.zeros = read_fill(args, "--fill0");
    o.ones = read_fill(args, "--fill1");
    if (o.zeros.all && o.ones.all) throw usage_error("--fill0 and --fill1 both given without names");
    for (const auto& n : o.zeros.names)
        if (o.ones.names.count(n)) throw usage_error("input '" + n + "' is named by both --fill0 and --fill1");
    for (const auto& use : args.uses("--input-dim")) {
        if (use.size() < 2 || use[0].size() < 2 || use[0][0] != '@')
            throw usage_error("--input-dim expects @NAME then its dims, e.g. '--input-dim @x 1 28 28'");
        auto& lens = o.dims[use[0].substr(1)];
        if (!lens.empty()) throw usage_error("--input-dim " + use[0] + " is given twice");
        for (std::size_t i = 1; i < use.size(); ++i) lens.push_back(parse_count(use[i], "--input-dim " + use[0]));
    }
    return o;
}

// Prints one output; a tuple prints each element as NAME[i].
void print_output(const std::string& name, const argument& a, bool all) {
    if (a.get_shape().is_tuple()) {
        for (std::size_t i = 0; i < a.sub_arguments().size(); ++i)
            print_output(name + "[" + std::to_string(i) + "]", a.sub_arguments()[i], all);
        return;
    }
    std::cout << name << ": " << to_string(a.get_shape()) << "\n" << format_values(a, all ? 0 : values_shown);
    std::size_t n = a.get_shape().elements();
    if (!all && n > values_shown) std::cout << " (" << values_shown << " of " << n << " values; --print-all shows all)";
    std::cout << "\n";
}

const char* const target_names[] = {"ref", "cpu", "gpu"};

std::string chosen_target(const parsed_args& args) {
    std::string name;
    for (const char* t : target_names) {
        if (!args.has(std::string("--") + t)) continue;
        if (!name.empty()) throw usage_error("give one target: --" + name + " and --" + t + " are both given");
        name = t;
    }
    return name.empty() ? "ref" : name;
}

int run_run(const parsed_args& args) {
    input_options opts = read_input_options(args);
    auto t = make_target(chosen_target(args));   // names the built targets when this one is not
    program p = load_program(args);
    compile(p, *t);
    auto inputs = make_inputs(p.main(), opts);   // before printing, so that its errors come first
    bool quiet = args.has("--quiet");
    if (!quiet) std::cout << brief_program(p) << "\n";
    param_map params;
    if (!quiet && !inputs.empty()) std::cout << "Inputs (seed " << opts.seed << "):\n";
    for (auto& in : inputs) {
        if (!quiet) std::cout << in.name << ": " << to_string(in.arg.get_shape()) << ": " << in.how << "\n";
        params.emplace(in.name, in.arg);
    }
    if (!quiet) std::cout << "\nRunning on " << t->name() << " ...\n";
    auto start = std::chrono::steady_clock::now();
    auto outs = t->run(p, params);
    std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    for (std::size_t i = 0; i < outs.size(); ++i)
        print_output("#output_" + std::to_string(i), outs[i], args.has("--print-all"));
    std::printf("Time: %.3f ms\n", took.count());
    return 0;
}

option_spec target_option(const std::string& name) {
    auto built = built_targets();
    bool is_built = std::find(built.begin(), built.end(), name) != built.end();
    std::string help = "run on the " + name + " target";
    if (name == "ref") help += " (the default)";
    if (!is_built) help += " (not built into this kiln)";
    return {{"--" + name}, option_spec::flag, "", help};
}

}  // namespace

command run_command() {
    command_spec s;
    s.name = "run";
    s.summary = "evaluate the program once (on the ref target) with generated inputs";
    s.positional = "FILE";
    s.description =
        "Loads FILE, prints it (literals of more than 16 values as '@literal{ ... }'), fills every\n"
        "input, compiles the program for the target and evaluates it once (on ref by default:\n"
        "every op's reference loop, no rewriting), and prints each output's shape and first " +
        std::to_string(values_shown) + "\nvalues, then the time the evaluation took.\n"
        "Inputs are random unless --fill0/--fill1 name them: floats uniform in [-1, 1], signed\n"
        "integers uniform in [-4, 4], unsigned in [0, 8], bools 0 or 1. Each input has its own\n"
        "generator seeded from --seed and its position, so the same seed gives the same values.";
    s.options = {
        {{"--seed"}, option_spec::one, "N", "seed of the random inputs (default 0)"},
        {{"--fill0"}, option_spec::many, "[NAME...]", "fill these inputs (all when no NAME) with 0s", true},
        {{"--fill1"}, option_spec::many, "[NAME...]", "fill these inputs (all when no NAME) with 1s", true},
        {{"--input-dim"}, option_spec::many, "@NAME D...",
         "the lens of input NAME; needed for each input with dynamic dims", true},
        {{"--print-all"}, option_spec::flag, "", "print every value of each output"},
        {{"--quiet", "--brief"}, option_spec::flag, "", "print only the outputs and the time"},
    };
    for (const char* t : target_names) s.options.push_back(target_option(t));
    for (auto& o : loader_options()) s.options.push_back(o);
    s.examples = {"kiln run mlp.kir", "kiln run mlp.kir --fill1 --print-all --quiet",
                  "kiln run model.kir --seed 7 --fill0 mask --input-dim @x 4 784"};
    return {s, run_run};
}

}  // namespace kiln::driver
