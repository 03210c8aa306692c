// Nodes whose mapping needs values known only at run time (a Reshape whose shape is a graph
// input, a TopK whose K is computed, ...) become one `onnx_node` instruction. Its compute runs
// the node's ordinary mapping on the actual input values, so every mapping works unchanged. A
// node with subgraphs (If, Loop) also takes the outer values they read. The output types come
// from the model's declared value info, else from the inputs where the op allows
// (deferred_types.cpp), else from the mapping that deferred it (an If typed by its branch that
// applies); what the node computes is checked against them when it runs; the ref target evaluates it, the gpu target runs the program its
// expander builds (core/expand.hpp) on the device, and other compiled targets reject it with the
// node's name.
#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "core/container.hpp"
#include "core/eval.hpp"
#include "core/expand.hpp"
#include "core/op.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

// A declared ValueInfo as a shape: fixed dims stay, unknown dims become unbounded ranges, and a
// tensor declared without a shape has any rank. One that gives no tensor type declares nothing.
std::optional<shape> declared_shape(const onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type() || vi.type().tensor_type().elem_type() == 0) return std::nullopt;
    const auto& tt = vi.type().tensor_type();
    dtype t = onnx_dtype(tt.elem_type());
    if (!tt.has_shape()) return shape::any_rank(t);
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
    std::vector<std::string> captures;   // outer values its subgraphs read, inputs after the node's own
    auto attributes() {
        return fields(field("op_type", op_type), field("node", node), field("opsets", opsets), field("outputs", outputs),
                      field("captures", captures));
    }
    op_traits traits() const { return {.data_dependent = true}; }

    shape compute_shape(std::span<const shape>) const {
        if (outputs.empty()) fail("has no outputs");
        return outputs.size() == 1 ? outputs[0] : shape(outputs);
    }

    // The node's mapping into `p`, input k given by `input(m, k)` (a literal or a parameter), its
    // named outputs returned. A mapping that needs the value of an input `input` made a parameter
    // throws runtime_value_needed; `needed` then says which instruction it asked for.
    void build(program& p, const std::function<instruction_ref(module&, std::size_t)>& input,
               const instruction** needed = nullptr) const {
        onnx::NodeProto n;
        if (!n.ParseFromArray(node.data.data(), static_cast<int>(node.data.size()))) fail("corrupt node bytes");
        onnx_options opts;
        context ctx(p, p.main(), opts, ".");
        for (const auto& [domain, v] : opsets.as_object()) ctx.opsets[domain] = v.as_int();
        std::vector<instruction_ref> inputs;
        std::size_t k = 0;
        for (const auto& in : n.input()) inputs.push_back(in.empty() ? ctx.none() : input(p.main(), k++));
        for (const auto& name : captures) ctx.values[name] = input(p.main(), k++);
        std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
        auto opset = ctx.opsets.count(domain) ? ctx.opsets[domain] : 1;
        const op_mapping* f = find_onnx_op(domain, n.op_type(), opset);
        if (!f) fail("no mapping for ", n.op_type());
        node_info info(n, n.name(), opset);
        ctx.current = &info;
        std::vector<instruction_ref> outs;
        try {
            outs = (*f)(info, ctx, inputs);
        } catch (const runtime_value_needed&) {
            if (needed) *needed = ctx.needed;
            throw;
        }
        std::vector<instruction_ref> named;
        for (int i = 0; i < n.output_size(); ++i)
            if (!n.output(i).empty()) named.push_back(outs.at(static_cast<std::size_t>(i)));
        p.main().add_return(named);
    }

    // What the node computed must be a value of its type, dims included: the type is all that
    // its consumers were compiled for.
    void check_types(std::span<const shape> results) const {
        for (std::size_t i = 0; i < results.size(); ++i) {
            if (results[i].type() != outputs.at(i).type())
                fail("output ", i, " is ", dtype_name(results[i].type()), " but the model declares ",
                     dtype_name(outputs[i].type()));
            if (!holds_type(outputs[i], results[i]))
                fail("output ", i, " is ", to_string(results[i]), " but its type is ", to_string(outputs[i]));
        }
    }

    argument compute(const shape&, std::span<const argument> args) const {
        program p;
        build(p, [&](module& m, std::size_t k) { return m.add_literal(literal(args[k])); });
        auto results = evaluate(p.main(), param_map{});
        std::vector<shape> shapes;
        for (const auto& r : results) shapes.push_back(r.get_shape());
        check_types(shapes);
        return results.size() == 1 ? results[0] : argument(results);
    }

    // For a target that runs the node on its device (core/expand.hpp): inputs start as parameters,
    // and each one the mapping asks the value of becomes a literal of its value, until it maps.
    void expand(std::span<const shape> in, const input_value& value_of, program& out) const {
        std::map<std::size_t, argument> known;
        for (;;) {
            program p;
            std::map<const instruction*, std::size_t> params;
            const instruction* needed = nullptr;
            auto input = [&](module& m, std::size_t k) {
                if (auto it = known.find(k); it != known.end()) return m.add_literal(literal(it->second));
                auto x = m.add_parameter(cat("x", k), in[k]);
                params[&*x] = k;
                return x;
            };
            try {
                build(p, input, &needed);
            } catch (const runtime_value_needed&) {
                auto it = params.find(needed);
                if (it == params.end()) throw;   // not one of the node's inputs: a real error
                known[it->second] = value_of(it->second);
                continue;
            }
            check_types(p.main().output_shapes());
            out = std::move(p);
            return;
        }
    }
};
KILN_REGISTER_OP(onnx_node)

const bool expander_registered = [] {
    register_op_expander("onnx_node", [](const operation& op, std::span<const shape> in, const input_value& value_of,
                                         program& p) { op.get<onnx_node>().expand(in, value_of, p); });
    return true;
}();

// The names that graph g and the graphs nested in it read: their nodes' inputs and g's outputs.
void names_read(const onnx::GraphProto& g, std::set<std::string>& out) {
    for (const auto& n : g.node()) {
        for (const auto& i : n.input())
            if (!i.empty()) out.insert(i);
        for (const auto& a : n.attribute()) {
            if (a.has_g()) names_read(a.g(), out);
            for (const auto& sub : a.graphs()) names_read(sub, out);
        }
    }
    for (const auto& o : g.output()) out.insert(o.name());
}

// The outer values that node n's subgraphs read (ONNX names are unique across a graph and its
// subgraphs, so a name visible here is one of them), in name order.
std::vector<std::string> captured_names(const node_info& n, const context& ctx) {
    std::set<std::string> read;
    for (const auto& a : n.proto().attribute()) {
        if (a.has_g()) names_read(a.g(), read);
        for (const auto& sub : a.graphs()) names_read(sub, read);
    }
    std::vector<std::string> names;
    for (const auto& name : read)
        if (ctx.visible(name)) names.push_back(name);
    return names;
}

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
    const std::vector<shape> found = std::exchange(ctx.deferred_types, {});
    for (int i = 0; i < static_cast<int>(n.output_count()); ++i) {
        const std::string& name = n.proto().output(i);
        if (name.empty()) continue;
        const auto* vi = find_declared(&ctx, name);
        auto k = static_cast<std::size_t>(i);
        std::optional<shape> type = vi ? declared_shape(*vi) : std::nullopt;
        if (!type) type = k < found.size() ? std::optional<shape>(found[k]) : inferred_output_type(n, inputs, k);
        if (!type)
            fail("output '", name, "' depends on values known only at run time, and the model does not declare ",
                 "its type (add value_info, or make the inputs that decide its shape constant)");
        outs.push_back(to_value(*type));
        positions.push_back(i);
    }
    attrs.set("outputs", value(outs));
    std::vector<instruction_ref> present;
    for (auto i : inputs)
        if (!ctx.is_none(i)) present.push_back(i);
    // A node with subgraphs (If, Loop, Scan) takes the outer values they read as inputs too, to
    // bind them by name when it maps.
    std::vector<std::string> captures = captured_names(n, ctx);
    value_array capture_names;
    for (const auto& name : captures) {
        present.push_back(ctx.resolve(name));
        capture_names.push_back(value(name));
    }
    attrs.set("captures", value(capture_names));
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
