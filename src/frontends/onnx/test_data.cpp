// Reads the serialized TensorProtos of an ONNX backend test folder.
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln {

namespace {
onnx::TensorProto read_proto(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) fail("cannot open '", path, "'");
    std::stringstream ss;
    ss << f.rdbuf();
    std::string bytes = ss.str();
    onnx::TensorProto t;
    if (!t.ParseFromString(bytes)) fail("'", path, "' is not a serialized ONNX TensorProto");
    return t;
}
}  // namespace

argument read_onnx_tensor_file(const std::string& path) {
    onnx::TensorProto t = read_proto(path);
    try {
        auto dir = std::filesystem::path(path).parent_path().string();
        return onnx_fe::tensor_to_literal(t, dir.empty() ? "." : dir).get_argument();
    } catch (const error& e) {
        fail(path, ": ", e.what());
    }
}

onnx_test_data read_onnx_test_data(const std::string& dir) {
    if (!std::filesystem::is_directory(dir)) fail("test data folder '", dir, "' does not exist");
    onnx_test_data d;
    for (const char* kind : {"input", "output"}) {
        auto& list = std::string(kind) == "input" ? d.inputs : d.outputs;
        for (int k = 0;; ++k) {
            std::string path = dir + "/" + kind + "_" + std::to_string(k) + ".pb";
            if (!std::filesystem::exists(path)) break;
            list.push_back(read_onnx_tensor_file(path));
            if (list.size() > d.input_names.size() && &list == &d.inputs) d.input_names.push_back(read_proto(path).name());
        }
    }
    if (d.inputs.empty() && d.outputs.empty()) fail("test data folder '", dir, "' has no input_*.pb or output_*.pb files");
    return d;
}

}  // namespace kiln
