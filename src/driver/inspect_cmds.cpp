// kiln read and kiln params: load a program and show it, or show its interface.
#include <iostream>

#include "core/target.hpp"
#include "driver/commands.hpp"
#include "driver/display.hpp"
#include "driver/loader.hpp"
#include "driver/program_output.hpp"

namespace kiln::driver {

namespace {

program load(const parsed_args& args, model_file& f) { return load_model(f, read_dim_options(args), false); }

int run_read(const parsed_args& args) {
    model_file f = open_model(args);
    program p = load(args, f);
    saved_program_info info;
    if (f.saved) info = f.saved->info;
    info.options.optimize = args.has("--optimize");
    if (info.options.optimize) lower(p, *make_target("ref"), info.options);
    write_program(args, p, info);
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
    s.summary = "load a program and print it (text IR, JSON, DOT) or convert it";
    s.positional = "FILE";
    s.description =
        "Loads FILE (kiln text IR, the form 'kiln read' prints, or an ONNX model) and prints the\n"
        "program: every literal in full, so the output reads back to the same program. Parse errors\n"
        "name the file, line and column (text IR) or the node (ONNX). An ONNX model's symbolic\n"
        "input dims need sizes (or ranges): --dim-param, --default-dim or --input-dim. With -O the\n"
        "generic passes run first (as on the ref target). Output formats: see the options; -o's\n"
        "extension picks one when no format flag is given (.json, .dot, .svg, .kiln, else text).";
    s.options = output_option_specs();
    s.options.push_back({{"--optimize", "-O"}, option_spec::flag, "", "run the generic passes before printing"});
    for (auto& o : loader_options()) s.options.push_back(o);
    s.examples = {"kiln read mlp.kir", "kiln read mlp.kir --json -o mlp.json", "kiln read mlp.kir -O --brief",
                  "kiln read mlp.kir -g -o mlp.dot", "kiln read model.onnx --dim-param batch=1:64"};
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
