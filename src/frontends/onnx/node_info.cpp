// Node attribute access for op mappings. Errors name the attribute; the caller adds the node.
#include <onnx/onnx_pb.h>

#include "core/error.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {

node_info::node_info(const onnx::NodeProto& n, std::string name, std::int64_t opset)
    : node_(n), name_(std::move(name)), opset_(opset) {}

const std::string& node_info::op_type() const { return node_.op_type(); }
std::size_t node_info::input_count() const { return static_cast<std::size_t>(node_.input_size()); }
std::size_t node_info::output_count() const { return static_cast<std::size_t>(node_.output_size()); }

bool node_info::has_input(std::size_t i) const {
    return i < input_count() && !node_.input(static_cast<int>(i)).empty();
}

void node_info::expect_inputs(std::size_t min, std::size_t max) const {
    std::size_t n = input_count();
    if (n >= min && n <= max) return;
    std::string want = min == max ? std::to_string(min) : cat(min, max == min + 1 ? " or " : " to ", max);
    fail("expects ", want, " inputs, got ", n);
}

bool node_info::has_attr(const std::string& name) const {
    for (const auto& a : node_.attribute())
        if (a.name() == name) return true;
    return false;
}

const onnx::AttributeProto& node_info::attr(const std::string& name) const {
    for (const auto& a : node_.attribute())
        if (a.name() == name) return a;
    fail("required attribute '", name, "' is missing");
}

namespace {
void expect_type(const onnx::AttributeProto& a, onnx::AttributeProto::AttributeType t, const char* what) {
    // Old models sometimes omit the type; then the field that is set decides.
    if (a.type() != onnx::AttributeProto::UNDEFINED && a.type() != t)
        fail("attribute '", a.name(), "' should be ", what, " but has type ", onnx::AttributeProto::AttributeType_Name(a.type()));
}
}  // namespace

std::int64_t node_info::attr_int(const std::string& name, std::int64_t def) const {
    if (!has_attr(name)) return def;
    const auto& a = attr(name);
    expect_type(a, onnx::AttributeProto::INT, "an int");
    return a.i();
}

float node_info::attr_float(const std::string& name, float def) const {
    if (!has_attr(name)) return def;
    const auto& a = attr(name);
    expect_type(a, onnx::AttributeProto::FLOAT, "a float");
    return a.f();
}

std::string node_info::attr_string(const std::string& name, const std::string& def) const {
    if (!has_attr(name)) return def;
    const auto& a = attr(name);
    expect_type(a, onnx::AttributeProto::STRING, "a string");
    return a.s();
}

std::vector<std::int64_t> node_info::attr_ints(const std::string& name, std::vector<std::int64_t> def) const {
    if (!has_attr(name)) return def;
    const auto& a = attr(name);
    expect_type(a, onnx::AttributeProto::INTS, "a list of ints");
    return {a.ints().begin(), a.ints().end()};
}

std::vector<float> node_info::attr_floats(const std::string& name, std::vector<float> def) const {
    if (!has_attr(name)) return def;
    const auto& a = attr(name);
    expect_type(a, onnx::AttributeProto::FLOATS, "a list of floats");
    return {a.floats().begin(), a.floats().end()};
}

std::vector<std::string> node_info::attr_strings(const std::string& name) const {
    if (!has_attr(name)) return {};
    const auto& a = attr(name);
    expect_type(a, onnx::AttributeProto::STRINGS, "a list of strings");
    return {a.strings().begin(), a.strings().end()};
}

literal node_info::attr_tensor(const std::string& name) const {
    const auto& a = attr(name);
    expect_type(a, onnx::AttributeProto::TENSOR, "a tensor");
    return tensor_to_literal(a.t(), ".");
}

const onnx::GraphProto& node_info::attr_graph(const std::string& name) const {
    const auto& a = attr(name);
    expect_type(a, onnx::AttributeProto::GRAPH, "a graph");
    return a.g();
}

}  // namespace kiln::onnx_fe
