// Builds small ONNX models with the protobuf API for frontend tests, and checks error messages.
#pragma once
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "frontends/onnx/onnx.hpp"

namespace kiln::onnx_test {

// One dim of a declared type: a number, a symbol ("batch"), or unknown ("?").
struct dim {
    std::int64_t value = -1;
    std::string param;
    dim(std::int64_t v) : value(v) {}
    dim(const char* p) : param(p == std::string("?") ? "" : p) {}
};

inline constexpr int onnx_float = onnx::TensorProto::FLOAT;

inline void set_type(onnx::ValueInfoProto* vi, int elem_type, std::initializer_list<dim> dims) {
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    auto* sh = tt->mutable_shape();
    for (const auto& d : dims) {
        auto* sd = sh->add_dim();
        if (d.value >= 0)
            sd->set_dim_value(d.value);
        else if (!d.param.empty())
            sd->set_dim_param(d.param);
    }
}

// An empty model of IR version 8 importing ai.onnx at `opset`.
inline onnx::ModelProto make_model(std::int64_t opset = 17) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    auto* os = m.add_opset_import();
    os->set_domain("");
    os->set_version(opset);
    m.mutable_graph()->set_name("test");
    return m;
}

inline void add_input(onnx::ModelProto& m, const std::string& name, std::initializer_list<dim> dims,
                      int elem_type = onnx_float) {
    auto* vi = m.mutable_graph()->add_input();
    vi->set_name(name);
    set_type(vi, elem_type, dims);
}

inline void add_output(onnx::ModelProto& m, const std::string& name, std::initializer_list<dim> dims,
                       int elem_type = onnx_float) {
    auto* vi = m.mutable_graph()->add_output();
    vi->set_name(name);
    set_type(vi, elem_type, dims);
}

inline onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op_type, const std::string& name,
                                 std::initializer_list<std::string> inputs, std::initializer_list<std::string> outputs,
                                 const std::string& domain = "") {
    auto* n = g.add_node();
    n->set_op_type(op_type);
    n->set_name(name);
    n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
}

inline onnx::NodeProto* add_node(onnx::ModelProto& m, const std::string& op_type, const std::string& name,
                                 std::initializer_list<std::string> inputs, std::initializer_list<std::string> outputs,
                                 const std::string& domain = "") {
    return add_node(*m.mutable_graph(), op_type, name, inputs, outputs, domain);
}

inline void set_string(onnx::NodeProto* n, const std::string& name, const std::string& s) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(s);
}

inline void set_ints(onnx::NodeProto* n, const std::string& name, const std::vector<std::int64_t>& ints) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto i : ints) a->add_ints(i);
}

// A float32 initializer stored in raw_data.
inline onnx::TensorProto* add_initializer(onnx::ModelProto& m, const std::string& name,
                                          const std::vector<std::int64_t>& dims, const std::vector<float>& values) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx_float);
    for (auto d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    return t;
}

inline program parse(const onnx::ModelProto& m, const onnx_options& opts = {}, const std::string& base_dir = ".") {
    std::string bytes = m.SerializeAsString();
    return parse_onnx_buffer(bytes.data(), bytes.size(), opts, base_dir);
}

// The message of the kiln::error that f throws; a test failure when it throws none.
template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const error& e) {
        return e.what();
    }
    ADD_FAILURE() << "no error was thrown";
    return {};
}

// Checks that `msg` contains every one of `parts`.
inline void expect_has(const std::string& msg, std::initializer_list<std::string> parts) {
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "missing '" << p << "' in:\n" << msg;
}

// An options struct whose warnings are appended to `sink` instead of printed.
inline onnx_options capture_warnings(std::vector<std::string>& sink) {
    onnx_options o;
    o.warn = [&sink](const std::string& w) { sink.push_back(w); };
    return o;
}

}  // namespace kiln::onnx_test
