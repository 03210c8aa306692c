// ONNX sequences and optionals onto kiln's sequence ops (src/ops/sequence.cpp), and their types:
// a model's seq(...) and optional(...) values, as declared for graph inputs and outputs and in
// Optional's `type` attribute, become shape::sequence / shape::optional. An element's dims the
// model leaves symbolic take --dim-param where given, else any length (elements of one sequence
// may differ); an element declared without a shape has unknown rank.
#include <onnx/onnx_pb.h>

#include "core/container.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

shape element_tensor_type(const onnx::TypeProto_Tensor& tt, const onnx_options& opts) {
    dtype t = onnx_dtype(tt.elem_type());
    if (!tt.has_shape()) return shape::any_rank(t);
    std::vector<dynamic_dim> dims;
    for (const auto& d : tt.shape().dim()) {
        if (d.has_dim_value() && d.dim_value() >= 0) {
            auto v = static_cast<std::size_t>(d.dim_value());
            dims.push_back({v, v, {}, {}});
        } else if (auto it = opts.dim_params.find(d.dim_param()); d.has_dim_param() && it != opts.dim_params.end()) {
            dims.push_back(it->second);
        } else {
            dims.push_back({0, unbounded_dim, {}, d.has_dim_param() ? d.dim_param() : ""});
        }
    }
    return shape(t, dims).normalized();
}

shape value_type(const onnx::TypeProto& t, const onnx_options& opts) {
    if (t.has_tensor_type()) return element_tensor_type(t.tensor_type(), opts);
    if (t.has_sequence_type()) {
        const auto& e = t.sequence_type().elem_type();
        if (!e.has_tensor_type()) fail("a sequence of non-tensors is not supported (kiln's sequences hold tensors)");
        return shape::sequence(element_tensor_type(e.tensor_type(), opts));
    }
    if (t.has_optional_type()) {
        const auto& e = t.optional_type().elem_type();
        if (!e.has_tensor_type() && !e.has_sequence_type())
            fail("an optional of something other than a tensor or a sequence is not supported");
        return shape::optional(value_type(e, opts));
    }
    fail("maps and sparse tensors are not supported");
}

// The attribute of type TYPE_PROTO named `name`; throws when absent.
const onnx::TypeProto& type_attr(const node_info& n, const std::string& name) {
    for (const auto& a : n.proto().attribute())
        if (a.name() == name && a.has_tp()) return a.tp();
    fail("attribute '", name, "' (a type) is required when the node has no input");
}

instruction_ref add(const node_info& n, context& ctx, const std::string& op, const value& attrs, const inputs_t& in) {
    context::check_present(in);
    auto ins = ctx.mod().add_instruction(make_op(op, attrs), in);
    ins->set_source_name(n.name());
    return ins;
}

// Present inputs in order; absent trailing optional inputs dropped, an absent one before a
// present one refused.
inputs_t present(context& ctx, const inputs_t& in) {
    inputs_t r;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (!ctx.is_none(in[i])) {
            if (r.size() != i) fail("input ", r.size(), " is absent but input ", i, " is given");
            r.push_back(in[i]);
        }
    }
    return r;
}

inputs_t map_sequence_construct(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, in.size());
    return {add(n, ctx, "sequence_construct", value(), in)};
}

inputs_t map_sequence_empty(const node_info& n, context& ctx, const inputs_t&) {
    dtype t = onnx_dtype(static_cast<int>(n.attr_int("dtype", 1)));
    return {add(n, ctx, "sequence_empty", value{{"type", to_value(t)}}, {})};
}

inputs_t map_sequence_at(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(2, 2);
    return {add(n, ctx, "sequence_at", value(), in)};
}

// A tensor inserted into a sequence that SequenceEmpty just made is a sequence of that one tensor
// (the only valid position is 0): its element type comes from the tensor, not from SequenceEmpty,
// which gives a type but no shape, so SequenceAt and ConcatFromSequence can read it later.
inputs_t map_sequence_insert(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(2, 3);
    inputs_t args = present(ctx, in);
    bool at_start = args.size() == 2 || (ctx.is_constant(args[2]) && ctx.constant_ints(args[2], "input 2 (position)") ==
                                                                         std::vector<std::int64_t>{0});
    if (args[0]->name() == "sequence_empty" && at_start && args[1]->get_shape().is_tensor()) {
        dtype want = args[0]->get_shape().element().type();
        if (args[1]->get_shape().type() != want)
            fail("input 1 is ", dtype_name(args[1]->get_shape().type()), " but the sequence holds ", dtype_name(want));
        return {add(n, ctx, "sequence_construct", value(), {args[1]})};
    }
    return {add(n, ctx, "sequence_insert", value(), args)};
}

inputs_t map_sequence_erase(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, 2);
    return {add(n, ctx, "sequence_erase", value(), present(ctx, in))};
}

inputs_t map_sequence_length(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, 1);
    return {add(n, ctx, "sequence_length", value(), in)};
}

inputs_t map_split_to_sequence(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, 2);
    value attrs{{"axis", n.attr_int("axis", 0)}, {"keepdims", n.attr_int("keepdims", 1)}};
    return {add(n, ctx, "split_to_sequence", attrs, present(ctx, in))};
}

inputs_t map_concat_from_sequence(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, 1);
    n.attr("axis");   // required
    value attrs{{"axis", n.attr_int("axis", 0)}, {"new_axis", n.attr_int("new_axis", 0)}};
    return {add(n, ctx, "concat_from_sequence", attrs, in)};
}

// SequenceMap: the body takes one element of each sequence input (tensor inputs whole); values
// it captures from outer graphs follow the node's inputs and reach every run whole.
inputs_t map_sequence_map(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, in.size());
    context::check_present(in);
    std::vector<shape> body_shapes;
    for (auto x : in) {
        const shape& s = x->get_shape();
        if (s.is_sequence() && !s.element().rank_known())
            fail("input '", n.proto().input(static_cast<int>(body_shapes.size())),
                 "' is a sequence whose elements have unknown rank; declare their shape");
        body_shapes.push_back(s.is_sequence() ? s.element() : s);
    }
    inputs_t caps;
    module* body = ctx.parse_subgraph(n.attr_graph("body"), n.name() + "_body", body_shapes, caps);
    inputs_t args = in;
    args.insert(args.end(), caps.begin(), caps.end());
    auto t = ctx.mod().add_instruction(
        make_op("sequence_map", value{{"captures", static_cast<std::int64_t>(caps.size())}}), args, {body});
    t->set_source_name(n.name());
    inputs_t outs;
    for (std::size_t k = 0; k < n.output_count(); ++k)
        outs.push_back(ctx.add("get_tuple_elem", value{{"index", static_cast<std::int64_t>(k)}}, {t}));
    return outs;
}

inputs_t map_optional(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(0, 1);
    if (!in.empty() && !ctx.is_none(in[0])) return {add(n, ctx, "optional", value(), {in[0]})};
    shape element = value_type(type_attr(n, "type"), ctx.options());
    return {add(n, ctx, "optional", value{{"type", to_value(element)}}, {})};
}

// From opset 18 the input may be a tensor or a sequence (always a value) or absent (none).
inputs_t map_optional_has_element(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(0, 1);
    if (in.empty() || ctx.is_none(in[0]) || !in[0]->get_shape().is_optional()) {
        std::int64_t has = !in.empty() && !ctx.is_none(in[0]);
        return {ctx.add_literal(literal(shape(dtype::bool_), std::vector<std::int64_t>{has}))};
    }
    return {add(n, ctx, "optional_has_element", value(), in)};
}

inputs_t map_optional_get_element(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, 1);
    context::check_present(in);
    if (!in[0]->get_shape().is_optional()) return {in[0]};   // opset 18: a tensor or sequence is its own value
    return {add(n, ctx, "optional_get_element", value(), in)};
}

KILN_ONNX_OP("", "SequenceConstruct", 11, map_sequence_construct)
KILN_ONNX_OP("", "SequenceEmpty", 11, map_sequence_empty)
KILN_ONNX_OP("", "SequenceAt", 11, map_sequence_at)
KILN_ONNX_OP("", "SequenceInsert", 11, map_sequence_insert)
KILN_ONNX_OP("", "SequenceErase", 11, map_sequence_erase)
KILN_ONNX_OP("", "SequenceLength", 11, map_sequence_length)
KILN_ONNX_OP("", "SplitToSequence", 11, map_split_to_sequence)
KILN_ONNX_OP("", "ConcatFromSequence", 11, map_concat_from_sequence)
KILN_ONNX_OP("", "SequenceMap", 17, map_sequence_map)
KILN_ONNX_OP("", "Optional", 15, map_optional)
KILN_ONNX_OP("", "OptionalHasElement", 15, map_optional_has_element)
KILN_ONNX_OP("", "OptionalGetElement", 15, map_optional_get_element)

}  // namespace

shape onnx_value_type(const onnx::TypeProto& t, const onnx_options& opts) { return value_type(t, opts); }

void check_declared_container(const onnx::ValueInfoProto& vi, const shape& computed) {
    const auto& t = vi.type();
    bool seq = t.has_sequence_type(), opt = t.has_optional_type();
    if ((seq && !computed.is_sequence()) || (opt && !computed.is_optional()))
        fail("output '", vi.name(), "' is declared a ", seq ? "sequence" : "optional", " but computes ", to_string(computed));
}

}  // namespace kiln::onnx_fe
