// --skip-unknown-operators: a node whose op type has no mapping becomes one `unknown_onnx_op`
// instruction. It has the node's declared output types, so the rest of the graph still parses,
// and running it fails naming the node. Nothing computes a made-up value in its place.
#include <onnx/onnx_pb.h>

#include <optional>

#include "core/op.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

struct unknown_onnx_op {
    static constexpr std::string_view name = "unknown_onnx_op";
    std::string op_type;
    std::string domain;
    std::string node;
    std::vector<shape> outputs;  // one per named output of the node
    auto attributes() {
        return fields(field("op_type", op_type), field("domain", domain), field("node", node),
                      field("outputs", outputs));
    }

    shape compute_shape(std::span<const shape>) const {
        if (outputs.empty()) fail("node '", node, "' (", op_type, ") has no outputs");
        return outputs.size() == 1 ? outputs[0] : shape(outputs);
    }

    argument compute(const shape&, std::span<const argument>) const {
        fail("ONNX op ", op_type, " (node '", node,
             "') is not supported; it was skipped at parse time with --skip-unknown-operators");
    }
};
KILN_REGISTER_OP(unknown_onnx_op)

// A declared ValueInfo as a shape, or nothing when the model gives no element type or no dims.
// Unknown dims become unbounded ranges, as for deferred nodes (deferred.cpp).
std::optional<shape> declared_type(const context& ctx, const std::string& name) {
    const onnx::ValueInfoProto* vi = nullptr;
    for (const context* c = &ctx; c && !vi; c = c->parent)
        if (auto it = c->declared.find(name); it != c->declared.end()) vi = it->second;
    if (!vi || !vi->type().has_tensor_type()) return std::nullopt;
    const auto& tt = vi->type().tensor_type();
    if (tt.elem_type() == 0 || !tt.has_shape()) return std::nullopt;
    std::vector<dynamic_dim> dims;
    for (const auto& d : tt.shape().dim()) {
        auto v = static_cast<std::size_t>(d.dim_value());
        if (d.has_dim_value())
            dims.push_back({v, v, {}, {}});
        else
            dims.push_back({0, unbounded_dim, {}, d.has_dim_param() ? d.dim_param() : ""});
    }
    return shape(onnx_dtype(tt.elem_type()), dims);
}

std::vector<instruction_ref> map_unknown(const node_info& n, context& ctx, const std::vector<instruction_ref>& inputs) {
    std::vector<instruction_ref> present;
    for (auto i : inputs)
        if (!ctx.is_none(i)) present.push_back(i);
    std::vector<shape> outs;
    std::vector<std::size_t> positions;
    for (std::size_t k = 0; k < n.output_count(); ++k) {
        const std::string& out = n.proto().output(static_cast<int>(k));
        if (out.empty()) continue;
        std::optional<shape> s = declared_type(ctx, out);
        // An undeclared output takes the first input's type, as MIGraphX does for unknown ops:
        // right for the many ops that keep their input's shape, and running it fails anyway.
        if (!s && present.empty())
            fail("output '", out, "' has no declared type and the node has no input to take one from");
        outs.push_back(s ? *s : present[0]->get_shape());
        positions.push_back(k);
    }
    value attrs{
        {"op_type", n.op_type()}, {"domain", n.proto().domain()}, {"node", n.name()}, {"outputs", to_value(outs)}};
    // Added directly, not with ctx.add: constant inputs must not fold (its compute throws).
    auto ins = ctx.mod().add_instruction(make_op("unknown_onnx_op", attrs), present);
    ins->set_source_name(n.name());
    std::vector<instruction_ref> results(n.output_count(), ctx.none());
    for (std::size_t k = 0; k < positions.size(); ++k) {
        auto r = ins;
        if (positions.size() > 1) {
            r = ctx.mod().add_instruction(make_op("get_tuple_elem", value{{"index", k}}), {ins});
            r->set_source_name(n.name());
        }
        results[positions[k]] = r;
    }
    return results;
}
// The parser's fallback for op types with no mapping, reached only with skip_unknown_operators.
KILN_ONNX_OP("kiln", "unknown", 1, map_unknown)

}  // namespace
}  // namespace kiln::onnx_fe
