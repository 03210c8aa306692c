// The ONNX frontend: reads an .onnx model (and its external data) into a kiln program.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/module.hpp"

namespace kiln {

struct onnx_options {
    // Full dims of named inputs (`--input-dim @x 1 3 224 224`); override the model's dims.
    std::map<std::string, std::vector<std::size_t>> input_dims;
    // Values of named symbolic dims (`--dim-param batch=8` or a range `batch=1:64`).
    std::map<std::string, dynamic_dim> dim_params;
    // Size of any symbolic dim not set otherwise; without it an unset dim is an error.
    std::optional<std::size_t> default_dim;
    // Dynamic dims of named inputs (`--dyn-input-dim @x "[{min:1,max:64}, 3, 224, 224]"`).
    std::map<std::string, std::vector<dynamic_dim>> dyn_input_dims;
    // Range of any symbolic dim not set otherwise (`--default-dyn-dim "{min:1,max:64}"`).
    std::optional<dynamic_dim> default_dyn_dim;
    // Keep parsing past unsupported ops (their outputs fail at run time, naming the node).
    bool skip_unknown_operators = false;
    // Receives warnings (e.g. nodes not in topological order); prints to stderr when empty.
    std::function<void(const std::string&)> warn;
};

// With `output_names`, it receives the names of the graph's outputs, in order.
program parse_onnx_file(const std::string& path, const onnx_options& opts = {},
                        std::vector<std::string>* output_names = nullptr);
// `base_dir` is where external data files are looked up.
program parse_onnx_buffer(const void* data, std::size_t size, const onnx_options& opts = {},
                          const std::string& base_dir = ".", std::vector<std::string>* output_names = nullptr);

// A test_data_set_N folder of the ONNX backend tests: input_K.pb and output_K.pb TensorProtos, or
// SequenceProtos and OptionalProtos where the model at `model_path` declares that input or
// output a sequence or optional (the files do not say which they hold; without a model, tensors).
struct onnx_test_data {
    std::vector<argument> inputs;    // in the order of the model's (non-initializer) inputs
    std::vector<std::string> input_names;   // the names stored in the input files (may be empty)
    std::vector<argument> outputs;   // in the order of the model's outputs
};
onnx_test_data read_onnx_test_data(const std::string& dir, const std::string& model_path = "");
// One serialized TensorProto file as an argument.
argument read_onnx_tensor_file(const std::string& path);

// "domain:OpType" for each supported op ("" is ai.onnx), sorted.
std::vector<std::string> onnx_supported_ops();

}  // namespace kiln
