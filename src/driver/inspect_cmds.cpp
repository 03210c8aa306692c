// kiln read and kiln params: load a program and show it, or show its interface.
#include <iostream>

#include "driver/commands.hpp"
#include "driver/display.hpp"
#include "driver/loader.hpp"
#include "driver/program_json.hpp"

namespace kiln::driver {

namespace {

int run_read(const parsed_args& args) {
    program p = load_program(args);
    write_text(args.has("--json") ? program_to_json(p) : to_string(p), args.get("--output"));
    return 0;
}

int run_params(const parsed_args& args) {
    program p = load_program(args);
    const module& m = p.main();
    for (auto param : m.parameters()) std::cout << param_name(*param) << ": " << to_string(param->get_shape()) << "\n";
    auto outs = m.output_shapes();
    for (std::size_t i = 0; i < outs.size(); ++i) std::cout << "#output_" << i << ": " << to_string(outs[i]) << "\n";
    return 0;
}

}  // namespace

command read_command() {
    command_spec s;
    s.name = "read";
    s.summary = "load a program and print it (text IR or JSON)";
    s.positional = "FILE";
    s.description =
        "Loads FILE (kiln text IR, the form 'kiln read' prints) and prints the program: every\n"
        "literal in full, so the output reads back to the same program. Parse errors name the\n"
        "file, line and column.";
    s.options = {
        {{"--json"}, option_spec::flag, "", "print the program as JSON: modules, then one instruction per line\n"
                                            "with its op, attributes, inputs, shape (and a literal's values)"},
        {{"--output", "-o"}, option_spec::one, "FILE", "write to FILE instead of stdout"},
    };
    for (auto& o : loader_options()) s.options.push_back(o);
    s.examples = {"kiln read mlp.kir", "kiln read mlp.kir --json -o mlp.json"};
    return {s, run_read};
}

command params_command() {
    command_spec s;
    s.name = "params";
    s.summary = "print the program's input and output shapes";
    s.positional = "FILE";
    s.description =
        "Prints each input of FILE's main module as 'NAME: SHAPE' in declaration order, then each\n"
        "output (the values of @return) as '#output_I: SHAPE'. Dynamic dims print as\n"
        "'symbol[min..max]'.";
    s.options = loader_options();
    s.examples = {"kiln params mlp.kir"};
    return {s, run_params};
}

}  // namespace kiln::driver
