// What an ONNX op mapping sees: the node (attributes, opset) and the graph being built.
// Mappings live in one file per op family and register with KILN_ONNX_OP.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/module.hpp"
#include "frontends/onnx/onnx.hpp"

namespace onnx {
class NodeProto;
class ValueInfoProto;
class GraphProto;
class TensorProto;
class AttributeProto;
class TypeProto;
}  // namespace onnx

namespace kiln::onnx_fe {

class context;

// Thrown when a mapping needs the value of an input that is only known at run time; the parser
// then defers the node (see deferred.cpp).
struct runtime_value_needed : error {
    using error::error;
};

class node_info {
public:
    node_info(const onnx::NodeProto& n, std::string name, std::int64_t opset);
    const onnx::NodeProto& proto() const { return node_; }
    const std::string& name() const { return name_; }       // the node's name, or "<OpType>_<index>"
    const std::string& op_type() const;
    std::int64_t opset() const { return opset_; }           // opset version of the node's domain
    std::size_t input_count() const;                        // including trailing absent inputs
    bool has_input(std::size_t i) const;                    // present and not the empty name
    std::size_t output_count() const;
    // Throws unless the node has min..max inputs (absent trailing ones counted), as its schema says.
    void expect_inputs(std::size_t min, std::size_t max) const;

    bool has_attr(const std::string& name) const;
    std::int64_t attr_int(const std::string& name, std::int64_t def) const;
    float attr_float(const std::string& name, float def) const;
    std::string attr_string(const std::string& name, const std::string& def) const;
    std::vector<std::int64_t> attr_ints(const std::string& name, std::vector<std::int64_t> def = {}) const;
    std::vector<float> attr_floats(const std::string& name, std::vector<float> def = {}) const;
    std::vector<std::string> attr_strings(const std::string& name) const;
    literal attr_tensor(const std::string& name) const;          // throws when absent
    const onnx::GraphProto& attr_graph(const std::string& name) const;  // throws when absent
    // Attribute with its declared type checked; throws naming the node when absent.
    const onnx::AttributeProto& attr(const std::string& name) const;

private:
    const onnx::NodeProto& node_;
    std::string name_;
    std::int64_t opset_;
};

// Maps one node to instructions; returns one instruction per node output (absent trailing
// outputs may be left out).
using op_mapping = std::function<std::vector<instruction_ref>(const node_info&, context&,
                                                              const std::vector<instruction_ref>& inputs)>;

class context {
public:
    context(program& p, module& m, const onnx_options& opts, std::string base_dir);

    program& prog() { return prog_; }
    module& mod() { return mod_; }
    const onnx_options& options() const { return opts_; }
    const std::string& base_dir() const { return base_dir_; }

    // Adds an instruction for the current node. When every input is a constant the result is
    // evaluated now and added as a literal (this folds shape computations at parse time).
    instruction_ref add(const std::string& op, const value& attrs, const std::vector<instruction_ref>& inputs);
    instruction_ref add(const std::string& op, const std::vector<instruction_ref>& inputs) {
        return add(op, value(), inputs);
    }
    instruction_ref add_literal(const literal& l);
    // The placeholder for an absent optional input (an empty name) or output. It is a real
    // instruction outside every module, so that a mapping that reads it does not crash; add()
    // and constant() refuse it, naming the node.
    static instruction_ref none();
    static bool is_none(instruction_ref i) { return i == none(); }
    // Throws when one of `inputs` is absent: the node gave an empty name for an input the op needs.
    static void check_present(const std::vector<instruction_ref>& inputs);

    bool is_constant(instruction_ref i) const { return i->is_literal(); }
    // The input's constant value; throws naming the node and `what` when it is not constant.
    const literal& constant(instruction_ref i, const std::string& what) const;
    std::vector<std::int64_t> constant_ints(instruction_ref i, const std::string& what) const;
    std::vector<double> constant_doubles(instruction_ref i, const std::string& what) const;

    // Parses a subgraph (If/Loop/Scan body) into a new module whose parameters are the graph's
    // inputs followed by the outer values it captures; `captures` receives those outer values.
    // `input_shapes` gives the inputs' shapes when the graph does not declare them (Loop bodies).
    module* parse_subgraph(const onnx::GraphProto& g, const std::string& name, const std::vector<shape>& input_shapes,
                           std::vector<instruction_ref>& captures);

    // Parses graph g's nodes into this module, its inputs bound to `inputs` (a graph-valued
    // attribute applied in place, as FlexAttention's score_mod); returns the graph's outputs.
    std::vector<instruction_ref> inline_graph(const onnx::GraphProto& g, const std::vector<instruction_ref>& inputs);

    // Whether `name` is a value here or in an outer graph; its value in this module (an outer
    // value a subgraph reads becomes a capture), throwing when there is none.
    bool visible(const std::string& name) const;
    instruction_ref resolve(const std::string& name);

    // The input whose constant value `constant` was last asked and could not give (it threw
    // runtime_value_needed): an expanded onnx_node reads that input's value (deferred.cpp).
    mutable const instruction* needed = nullptr;
    // The node being mapped (for error messages and instruction source names).
    const node_info* current = nullptr;
    // Name -> value of everything visible in this graph (outer graph values for subgraphs).
    std::map<std::string, instruction_ref> values;
    context* parent = nullptr;
    // For a subgraph: the outer values it captures, in parameter order (see parse_subgraph).
    std::vector<instruction_ref>* captures = nullptr;
    // Opset version per domain ("" is ai.onnx).
    std::map<std::string, std::int64_t> opsets;
    // The output types of a node that its mapping defers (throwing runtime_value_needed) when
    // the model declares none, as the mapping found them (an If typed by its branch that applies).
    std::vector<shape> deferred_types;
    // Declared types of the graph's values (value_info, outputs), for nodes deferred to run time.
    std::map<std::string, const onnx::ValueInfoProto*> declared;

private:
    program& prog_;
    module& mod_;
    const onnx_options& opts_;
    std::string base_dir_;
};

// Registers a mapping for (domain, op type) from an opset version on; "" is ai.onnx.
void register_onnx_op(const std::string& domain, const std::string& op_type, std::int64_t since, op_mapping f);
// The mapping for a node at an opset version, or null.
const op_mapping* find_onnx_op(const std::string& domain, const std::string& op_type, std::int64_t opset);

// A node whose mapping needs run-time values: one `onnx_node` instruction that runs the mapping
// when the values are known (the ref target evaluates it; compiled targets reject it).
std::vector<instruction_ref> defer_node(const node_info& n, context& ctx, const std::vector<instruction_ref>& inputs);
// Output k's type (dtype, rank, unknown dims) of a deferred node whose model declares none, for
// the ops where the inputs' types and static lengths give it; none otherwise (deferred_types.cpp).
std::optional<shape> inferred_output_type(const node_info& n, const std::vector<instruction_ref>& inputs,
                                          std::size_t k);

// A node's name, or "<OpType>_<index>" when it has none.
std::string node_name(const onnx::NodeProto& n, std::size_t index);
// Checks of a graph as read (graph_checks.cpp). Names: no empty graph input or initializer name,
// no tensor written by two nodes; both throw naming what is wrong.
void check_names(const onnx::GraphProto& g);
// A graph input that an initializer of the same name gives a default for must declare its shape.
void check_input_default(const onnx::ValueInfoProto& input, const onnx::TensorProto& init);
// A graph output's declared type (and with check_dims, its dims) must be what kiln computes.
void check_declared_output(const onnx::ValueInfoProto& vi, const shape& computed, bool check_dims);
// A declared sequence or optional as a kiln type (map_sequence.cpp); tensors inside take symbolic
// dims from opts.dim_params, else any length.
shape onnx_value_type(const onnx::TypeProto& t, const onnx_options& opts);
// An output declared a sequence or optional must compute one.
void check_declared_container(const onnx::ValueInfoProto& vi, const shape& computed);

// A TensorProto as a literal (one copy of its values); external data is read relative to base_dir.
literal tensor_to_literal(const onnx::TensorProto& t, const std::string& base_dir);
// Same, but a literal in raw_data takes the parsed bytes (no copy) and leaves t's raw_data empty:
// for initializers, which are read once.
literal take_tensor_literal(onnx::TensorProto& t, const std::string& base_dir);
// An ONNX TensorProto.DataType code as a kiln dtype; throws naming the code when unsupported.
dtype onnx_dtype(int code);

}  // namespace kiln::onnx_fe

#define KILN_ONNX_CAT2(a, b) a##b
#define KILN_ONNX_CAT(a, b) KILN_ONNX_CAT2(a, b)
// KILN_ONNX_OP("", "Relu", 6, fn): registers fn at static initialisation.
#define KILN_ONNX_OP(DOMAIN, OP, SINCE, FN)                                                         \
    static const bool KILN_ONNX_CAT(kiln_onnx_reg_, __LINE__) =                                     \
        (::kiln::onnx_fe::register_onnx_op(DOMAIN, OP, SINCE, FN), true);
