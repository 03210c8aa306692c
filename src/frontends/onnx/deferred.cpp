// Nodes whose mapping needs values known only at run time (a Reshape whose shape is a graph
// input, a TopK whose K is computed, ...) become one `onnx_node` instruction. Its compute runs
// the node's ordinary mapping on the actual input values, so every mapping works unchanged. The
// output types come from the model's declared value info, else from the inputs where the op
// allows (deferred_types.cpp); the ref target evaluates it, and compiled targets reject it with
// the node's name.
#include <onnx/onnx_pb.h>

#include "core/eval.hpp"
#include "core/op.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

// A declared ValueInfo as a shape: fixed dims stay, unknown dims become unbounded ranges.
shape declared_shape(const onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type()) fail("'", vi.name(), "' is not declared as a tensor");
    const auto& tt = vi.type().tensor_type();
    dtype t = onnx_dtype(tt.elem_type());
    if (!tt.has_shape()) fail("'", vi.name(), "' is declared without a shape");
    std::vector<dynamic_dim> dims;
    for (const auto& d : tt.shape().dim()) {
        if (d.has_dim_value()) dims.push_back({static_cast<std::size_t>(d.dim_value()), static_cast<std::size_t>(d.dim_value()), {}, {}});
        else dims.push_back({0, unbounded_dim, {}, d.has_dim_param() ? d.dim_param() : ""});
    }
    return shape(t, dims);
}

const onnx::ValueInfoProto* find_declared(const context* ctx, const std::string& name) {
    for (; ctx; ctx = ctx->parent)
        if (auto it = ctx->declared.find(name); it != ctx->declared.end()) return it->second;
    return nullptr;
}

struct onnx_node {
    static constexpr std::string_view name = "onnx_node";
    std::string op_type;
    value_bytes node;                // the serialized NodeProto
    value opsets = value_object{};   // {domain: version}
    std::vector<shape> outputs;      // declared types of the node's named outputs
    auto attributes() {
        return fields(field("op_type", op_type), field("node", node), field("opsets", opsets), field("outputs", outputs));
    }
    op_traits traits() const { return {.data_dependent = true}; }

    shape compute_shape(std::span<const shape>) const {
        if (outputs.empty()) fail("has no outputs");
        return outputs.size() == 1 ? outputs[0] : shape(outputs);
    }

    argument compute(const shape&, std::span<const argument> args) const {
        onnx::NodeProto n;
        if (!n.ParseFromArray(node.data.data(), static_cast<int>(node.data.size()))) fail("corrupt node bytes");
        program p;
        onnx_options opts;
        context ctx(p, p.main(), opts, ".");
        for (const auto& [domain, v] : opsets.as_object()) ctx.opsets[domain] = v.as_int();
        std::vector<instruction_ref> inputs;
        std::size_t k = 0;
        for (const auto& in : n.input())
            inputs.push_back(in.empty() ? ctx.none() : p.main().add_literal(literal(args[k++])));
        std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
        auto opset = ctx.opsets.count(domain) ? ctx.opsets[domain] : 1;
        const op_mapping* f = find_onnx_op(domain, n.op_type(), opset);
        if (!f) fail("no mapping for ", n.op_type());
        node_info info(n, n.name(), opset);
        ctx.current = &info;
        auto outs = (*f)(info, ctx, inputs);
        std::vector<instruction_ref> named;
        for (int i = 0; i < n.output_size(); ++i)
            if (!n.output(i).empty()) named.push_back(outs.at(static_cast<std::size_t>(i)));
        p.main().add_return(named);
        auto results = evaluate(p.main(), param_map{});
        for (std::size_t i = 0; i < results.size(); ++i)
            if (results[i].get_shape().type() != outputs[i].type())
                fail("output ", i, " is ", dtype_name(results[i].get_shape().type()), " but the model declares ",
                     dtype_name(outputs[i].type()));
        return results.size() == 1 ? results[0] : argument(results);
    }
};
KILN_REGISTER_OP(onnx_node)

}  // namespace

std::vector<instruction_ref> defer_node(const node_info& n, context& ctx, const std::vector<instruction_ref>& inputs) {
    value attrs = value_object{};
    attrs.set("op_type", n.op_type());
    std::string bytes = n.proto().SerializeAsString();
    attrs.set("node", value_bytes{{bytes.begin(), bytes.end()}});
    value opsets = value_object{};
    for (const auto& [domain, v] : ctx.opsets) opsets.set(domain, v);
    attrs.set("opsets", opsets);
    value_array outs;
    std::vector<int> positions;
    for (int i = 0; i < static_cast<int>(n.output_count()); ++i) {
        const std::string& name = n.proto().output(i);
        if (name.empty()) continue;
        const auto* vi = find_declared(&ctx, name);
        auto inferred = vi ? std::nullopt : inferred_output_type(n, inputs, static_cast<std::size_t>(i));
        if (!vi && !inferred)
            fail("output '", name, "' depends on values known only at run time, and the model does not declare ",
                 "its type (add value_info, or make the inputs that decide its shape constant)");
        outs.push_back(to_value(vi ? declared_shape(*vi) : *inferred));
        positions.push_back(i);
    }
    attrs.set("outputs", value(outs));
    std::vector<instruction_ref> present;
    for (auto i : inputs)
        if (!ctx.is_none(i)) present.push_back(i);
    auto ins = ctx.mod().add_instruction(make_op("onnx_node", attrs), present);
    ins->set_source_name(n.name());
    std::vector<instruction_ref> results(n.output_count(), ctx.none());
    if (positions.size() == 1) {
        results[static_cast<std::size_t>(positions[0])] = ins;
        return results;
    }
    for (std::size_t k = 0; k < positions.size(); ++k) {
        auto e = ctx.mod().add_instruction(make_op("get_tuple_elem", value{{"index", k}}), {ins});
        e->set_source_name(n.name());
        results[static_cast<std::size_t>(positions[k])] = e;
    }
    return results;
}

}  // namespace kiln::onnx_fe
