// What the driver needs to know about an ONNX model before (and besides) parsing it: the names
// of its inputs and outputs, and the symbolic dims of its inputs. The frontend's program has no
// output names, and the driver needs input names first to size inputs from .npy files and test
// data. The scan reads the protobuf wire format and seeks past everything else (the weights).
#pragma once
#include <set>
#include <string>
#include <vector>

namespace kiln::driver {

struct onnx_model_info {
    std::vector<std::string> inputs;    // graph inputs that are not initializers, in order
    std::vector<std::string> outputs;   // graph outputs, in order
    std::set<std::string> symbols;      // dim_param names of the inputs' dims
};

// Throws naming the file when it cannot be read or is not an ONNX ModelProto.
onnx_model_info scan_onnx_model(const std::string& path);

}  // namespace kiln::driver
