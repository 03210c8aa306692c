// kiln read and kiln params: load a program and show it, or show its interface.
#include <iostream>

#include "driver/commands.hpp"
#include "driver/display.hpp"
#include "driver/loader.hpp"
#include "driver/program_json.hpp"

namespace kiln::driver {

namespace {

program load(const parsed_args& args, model_file& f) { return load_model(f, read_dim_options(args), false); }

int run_read(const parsed_args& args) {
    model_file f = open_model(args);
    program p = load(args, f);
    write_text(args.has("--json") ? program_to_json(p) : to_string(p), args.get("--output"));
    return 0;
}

int run_params(const parsed_args& args) {
    model_file f = open_model(args);
    program p = load(args, f);
    const module& m = p.main();
    for (auto param : m.parameters()) std::cout << param_name(*param) << ": " << to_string(param->get_shape()) << "\n";
    auto outs = m.output_shapes();
    for (std::size_t i = 0; i < outs.size(); ++i) std::cout << output_label(f, i) << ": " << to_string(outs[i]) << "\n";
    return 0;
}

}  // namespace

command read_command() {
    command_spec s;
    s.name = "read";
    s.summary = "load a program and print it (text IR or JSON)";
    s.positional = "FILE";
    s.description =
        "Loads FILE (kiln text IR, the form 'kiln read' prints, or an ONNX model) and prints the\n"
        "program: every literal in full, so the output reads back to the same program. Parse errors\n"
        "name the file, line and column (text IR) or the node (ONNX). An ONNX model's symbolic\n"
        "input dims need sizes (or ranges): --dim-param, --default-dim or --input-dim.";
    s.options = {
        {{"--json"}, option_spec::flag, "", "print the program as JSON: modules, then one instruction per line\n"
                                            "with its op, attributes, inputs, shape (and a literal's values)"},
        {{"--output", "-o"}, option_spec::one, "FILE", "write to FILE instead of stdout"},
    };
    for (auto& o : loader_options()) s.options.push_back(o);
    s.examples = {"kiln read mlp.kir", "kiln read mlp.kir --json -o mlp.json", "kiln read model.onnx --dim-param batch=1:64"};
    return {s, run_read};
}

command params_command() {
    command_spec s;
    s.name = "params";
    s.summary = "print the program's input and output shapes";
    s.positional = "FILE";
    s.description =
        "Loads FILE (kiln text IR or an ONNX model) and prints each input of its main module as\n"
        "'NAME: SHAPE' in declaration order, then each output (the values of @return) as\n"
        "'#output_I: SHAPE' ('#output_I (NAME): SHAPE' for a named ONNX output). Dynamic dims print\n"
        "as 'symbol[min..max]'.";
    s.options = loader_options();
    s.examples = {"kiln params mlp.kir", "kiln params model.onnx --dim-param batch=8"};
    return {s, run_params};
}

}  // namespace kiln::driver
