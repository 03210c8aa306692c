// Checks of an ONNX graph as read: what the ONNX IR spec forbids (empty names for graph inputs and
// initializers, a tensor written twice) and declarations that contradict the model's data or what
// kiln computes. Taking the last writer or one of two shapes would run a different model silently.
#include <onnx/onnx_pb.h>

#include <map>

#include "core/error.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {

std::string node_name(const onnx::NodeProto& n, std::size_t index) {
    return n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
}

namespace {

std::string describe_node(const onnx::GraphProto& g, int i) {
    return cat("node '", node_name(g.node(i), static_cast<std::size_t>(i)), "' (", g.node(i).op_type(), ")");
}

// The declared dims of a value: a dim_value is a number, anything else (a symbol, unknown) -1.
std::vector<std::int64_t> declared_dims(const onnx::TypeProto_Tensor& tt) {
    std::vector<std::int64_t> dims;
    for (const auto& d : tt.shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    return dims;
}

std::string type_name(int code) {
    const auto& name = onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(code));
    return name.empty() ? cat("type ", code) : name;
}

std::string dims_to_string(const std::vector<std::int64_t>& dims) {
    std::string s = "{";
    for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + (dims[i] < 0 ? "?" : std::to_string(dims[i]));
    return s + "}";
}

}  // namespace

void check_names(const onnx::GraphProto& g) {
    for (int i = 0; i < g.input_size(); ++i)
        if (g.input(i).name().empty()) fail("graph '", g.name(), "': input ", i, " has an empty name");
    for (int i = 0; i < g.initializer_size(); ++i)
        if (g.initializer(i).name().empty()) fail("graph '", g.name(), "': initializer ", i, " has an empty name");
    std::map<std::string, int> writer;
    for (int i = 0; i < g.node_size(); ++i)
        for (const auto& o : g.node(i).output()) {
            if (o.empty()) continue;  // an optional output the model does not use
            auto [it, added] = writer.emplace(o, i);
            if (!added)
                fail("tensor '", o, "' is written by both ", describe_node(g, it->second), " and ",
                     describe_node(g, i));
        }
}

void check_input_default(const onnx::ValueInfoProto& input, const onnx::TensorProto& init) {
    const auto& tt = input.type().tensor_type();
    if (tt.elem_type() != 0 && tt.elem_type() != init.data_type())
        fail("input '", input.name(), "' is declared ", type_name(tt.elem_type()), " but its initializer is ",
             type_name(init.data_type()));
    if (!tt.has_shape()) return;
    auto dims = declared_dims(tt);
    std::vector<std::int64_t> have(init.dims().begin(), init.dims().end());
    bool same = dims.size() == have.size();
    for (std::size_t i = 0; same && i < dims.size(); ++i) same = dims[i] < 0 || dims[i] == have[i];
    if (!same)
        fail("input '", input.name(), "' is declared ", dims_to_string(dims), " but its initializer (its default) is ",
             dims_to_string(have));
}

void check_declared_output(const onnx::ValueInfoProto& vi, const shape& computed, bool check_dims) {
    if (!vi.type().has_tensor_type()) return check_declared_container(vi, computed);
    const auto& tt = vi.type().tensor_type();
    if (tt.elem_type() != 0) {
        dtype want{};
        try {
            want = onnx_dtype(tt.elem_type());
        } catch (const error& e) {
            fail("output '", vi.name(), "': ", e.what());
        }
        if (want != computed.type())
            fail("output '", vi.name(), "' is declared ", dtype_name(want), " but computes ",
                 dtype_name(computed.type()));
    }
    if (!check_dims || !tt.has_shape() || computed.is_tuple() || !computed.rank_known()) return;
    auto dims = declared_dims(tt);
    auto have = computed.dims();
    bool same = dims.size() == have.size();
    for (std::size_t i = 0; same && i < dims.size(); ++i)
        same = dims[i] < 0 ||
               (static_cast<std::size_t>(dims[i]) >= have[i].min && static_cast<std::size_t>(dims[i]) <= have[i].max);
    if (!same)
        fail("output '", vi.name(), "' is declared ", dims_to_string(dims), " but computes ", to_string(computed));
}

}  // namespace kiln::onnx_fe
