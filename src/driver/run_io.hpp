// What `kiln run` reads from and writes to files: inputs from .npy files (--input) and ONNX test
// data (--test-data), outputs to .npy files (--save-outputs).
#pragma once
#include <string>
#include <vector>

#include "driver/compare.hpp"
#include "driver/inputs.hpp"
#include "frontends/onnx/onnx.hpp"

namespace kiln::driver {

// --input NAME=FILE.npy (each use): the arrays, and their shapes as the inputs' dims.
void add_npy_inputs(const parsed_args& args, input_options& o);
// The test data's inputs, bound in order to the model's inputs, with their shapes as dims.
void add_test_data_inputs(const std::string& dir, const onnx_test_data& td, const model_file& f, input_options& o);

// The outputs with tuples flattened, labelled as printed: "#output_0 (y)", "#output_1[0]".
std::vector<named_value> labelled_outputs(const model_file& f, const std::vector<argument>& outs);
// The values of `values` one by one, tuples, sequences and optionals split as labelled_outputs does.
std::vector<argument> flat_values(const std::vector<argument>& values);
// Creates DIR and checks that numpy has a dtype for each output, so that a run does not fail
// only after it is done.
void prepare_saving(const std::string& dir, const model_file& f, const std::vector<shape>& outputs);
// Writes each (flattened) output to DIR/STEM.npy; STEM is the ONNX output name
// (characters other than letters, digits, '.', '_' and '-' as '_') or "#output_I" ("#output_I[J]"
// for a tuple's elements). Returns the files' names.
std::vector<std::string> save_outputs(const std::string& dir, const model_file& f, const std::vector<argument>& outs);

}  // namespace kiln::driver
