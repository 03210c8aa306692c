// Reads the serialized TensorProtos (SequenceProtos, OptionalProtos) of an ONNX backend test folder.
#include <onnx/onnx_pb.h>
#include <onnx/onnx-data_pb.h>

#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>

#include "core/container.hpp"
#include "core/error.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln {

namespace {

std::string read_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) fail("cannot open '", path, "'");
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

template <class Proto>
Proto read_proto(const std::string& path, const char* what) {
    Proto p;
    if (!p.ParseFromString(read_bytes(path))) fail("'", path, "' is not a serialized ONNX ", what);
    return p;
}

std::string dir_of(const std::string& path) {
    auto dir = std::filesystem::path(path).parent_path().string();
    return dir.empty() ? "." : dir;
}

argument tensor_value(const onnx::TensorProto& t, const std::string& dir) {
    return onnx_fe::tensor_to_literal(t, dir).get_argument();
}

// A sequence's value typed by its elements (their join), or by the declared element type when empty.
argument sequence_value(const onnx::SequenceProto& p, const onnx::TypeProto& declared, const std::string& dir) {
    if (p.elem_type() != onnx::SequenceProto::TENSOR && p.elem_type() != onnx::SequenceProto::UNDEFINED)
        fail("a sequence of non-tensors is not supported");
    std::vector<argument> elements;
    for (const auto& t : p.tensor_values()) elements.push_back(tensor_value(t, dir));
    shape type = onnx_fe::onnx_value_type(declared, {});
    shape element = shape::any_rank(type.element().type());
    for (std::size_t i = 0; i < elements.size(); ++i)
        element = i == 0 ? elements[0].get_shape().as_standard() : join_types(element, elements[i].get_shape());
    return argument(shape::sequence(element), std::move(elements));
}

argument optional_value(const onnx::OptionalProto& p, const onnx::TypeProto& declared, const std::string& dir) {
    shape type = onnx_fe::onnx_value_type(declared, {});
    const auto& inner = declared.optional_type().elem_type();
    if (p.has_tensor_value()) {
        argument v = tensor_value(p.tensor_value(), dir);
        return argument(shape::optional(v.get_shape().as_standard()), {v});
    }
    if (p.has_sequence_value()) {
        argument v = sequence_value(p.sequence_value(), inner, dir);
        return argument(shape::optional(v.get_shape()), {v});
    }
    return argument(type, {});
}

// One input_K.pb / output_K.pb as the value `declared` (null: a tensor) says it holds.
argument read_value(const std::string& path, const onnx::TypeProto* declared) {
    try {
        if (declared && declared->has_sequence_type())
            return sequence_value(read_proto<onnx::SequenceProto>(path, "SequenceProto"), *declared, dir_of(path));
        if (declared && declared->has_optional_type())
            return optional_value(read_proto<onnx::OptionalProto>(path, "OptionalProto"), *declared, dir_of(path));
        return tensor_value(read_proto<onnx::TensorProto>(path, "TensorProto"), dir_of(path));
    } catch (const error& e) {
        std::string msg = e.what();
        if (msg.starts_with("'" + path + "'") || msg.starts_with("cannot open")) throw;
        fail(path, ": ", msg);
    }
}

std::string value_name(const std::string& path, const onnx::TypeProto* declared) {
    if (declared && declared->has_sequence_type()) return read_proto<onnx::SequenceProto>(path, "SequenceProto").name();
    if (declared && declared->has_optional_type()) return read_proto<onnx::OptionalProto>(path, "OptionalProto").name();
    return read_proto<onnx::TensorProto>(path, "TensorProto").name();
}

// The declared types of the model's inputs (those without an initializer) and outputs.
struct declared_types {
    onnx::ModelProto model;
    std::vector<const onnx::TypeProto*> inputs, outputs;
};

void read_declared(const std::string& model_path, declared_types& d) {
    if (model_path.empty()) return;
    d.model = read_proto<onnx::ModelProto>(model_path, "model");
    const auto& g = d.model.graph();
    std::set<std::string> initialized;
    for (const auto& init : g.initializer()) initialized.insert(init.name());
    for (const auto& vi : g.input())
        if (!initialized.count(vi.name())) d.inputs.push_back(&vi.type());
    for (const auto& vi : g.output()) d.outputs.push_back(&vi.type());
}

}  // namespace

argument read_onnx_tensor_file(const std::string& path) { return read_value(path, nullptr); }

onnx_test_data read_onnx_test_data(const std::string& dir, const std::string& model_path) {
    if (!std::filesystem::is_directory(dir)) fail("test data folder '", dir, "' does not exist");
    declared_types types;
    read_declared(model_path, types);
    onnx_test_data d;
    for (const char* kind : {"input", "output"}) {
        bool inputs = std::string(kind) == "input";
        auto& list = inputs ? d.inputs : d.outputs;
        const auto& declared = inputs ? types.inputs : types.outputs;
        for (std::size_t k = 0;; ++k) {
            std::string path = dir + "/" + kind + "_" + std::to_string(k) + ".pb";
            if (!std::filesystem::exists(path)) break;
            list.push_back(read_value(path, k < declared.size() ? declared[k] : nullptr));
            if (inputs) d.input_names.push_back(value_name(path, k < declared.size() ? declared[k] : nullptr));
        }
    }
    if (d.inputs.empty() && d.outputs.empty()) fail("test data folder '", dir, "' has no input_*.pb or output_*.pb files");
    return d;
}

}  // namespace kiln
