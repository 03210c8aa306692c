// Loading the program a command works on (its FILE argument): kiln text IR, kiln JSON (kiln read
// --json), a saved compiled program (kiln compile -o x.kiln) or an ONNX model, told apart by
// --onnx/--kiln-text/--kiln-json/--kiln, else the saved-program magic, the extension (.onnx,
// .kir, .json, .kiln), else the content.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/module.hpp"
#include "tools/saved_program.hpp"
#include "driver/args.hpp"

namespace kiln::driver {

enum class model_format { kiln_text, onnx, kiln_json, saved };

// The lens of one input and where they come from ("--input-dim @x", "--input x=a.npy"), for
// error messages.
struct input_dims {
    std::vector<std::size_t> lens;
    std::string source;
};

// How the sizes of inputs are chosen: for an ONNX model they go to the frontend; for kiln text
// IR `kiln run` uses them to size dynamic inputs.
struct dim_options {
    std::map<std::string, input_dims> inputs;        // --input-dim, and the shapes of given inputs
    std::map<std::string, dynamic_dim> params;       // --dim-param NAME=N or NAME=MIN:MAX
    std::optional<std::size_t> default_dim;          // --default-dim N, or --batch N
    std::map<std::string, std::vector<dynamic_dim>> dyn_inputs;   // --dyn-input-dim (ONNX)
    std::optional<dynamic_dim> default_dyn_dim;      // --default-dyn-dim (ONNX)
    std::optional<std::size_t> batch;                // --batch N (perf reports rates per item)
    std::size_t trim = 0;                            // --trim N: instructions cut from the end
    bool skip_unknown_operators = false;             // ONNX only
    bool given() const { return !inputs.empty() || !params.empty() || default_dim || !dyn_inputs.empty() || default_dyn_dim; }
    // Adds lens for `name`; lens from two sources must agree (an error naming both otherwise).
    void add(const std::string& name, input_dims d);
};

// A model file looked at but not yet turned into a program.
struct model_file {
    std::string path;
    model_format format = model_format::kiln_text;
    std::vector<std::string> inputs;    // in order (a text program's parameters)
    std::vector<std::string> outputs;   // ONNX output names; empty for text IR
    std::set<std::string> symbols;      // symbolic dims of the inputs
    std::optional<program> text;        // a text or JSON program is parsed when opened
    std::optional<loaded_program> saved;   // a saved program is loaded when opened
};

// The options of every loading command: the format flags, and (with_dims) the dim options.
std::vector<option_spec> loader_options(bool with_dims = true);
dim_options read_dim_options(const parsed_args& args);

// Detects the format and reads what is known without sizes (names, symbols); throws naming the file.
model_file open_model(const parsed_args& args);
// The program, with the dims applied (ONNX). `sizes_inputs`: whether the command uses dims for a
// text program's inputs (kiln run); other commands reject dim options for text IR.
program load_model(model_file& f, const dim_options& dims, bool sizes_inputs);

// The saved program's loading time and where it was compiled for: "Loaded model.kiln in 1.2 ms
// (ref, kiln 0.1.0, options hash ...); not compiled again".
std::string saved_summary(const model_file& f);

// "y" for a named ONNX output, else "#output_I".
std::string output_label(const model_file& f, std::size_t i);

// "a, b, c", or "none".
std::string list_names(const std::vector<std::string>& names);

}  // namespace kiln::driver
