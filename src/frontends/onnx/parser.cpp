// Reads an ONNX ModelProto into a program: initializers become literals, graph inputs become
// parameters (symbolic dims resolved from the options), nodes are mapped by (domain, op type,
// opset) and constant subexpressions are folded as they are built.
#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <set>

#include "core/builtin.hpp"
#include "core/error.hpp"
#include "core/eval.hpp"
#include "core/files.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {

namespace {

// The ai.onnx opset of ONNX 1.23, whose IR version 14 is the newest kiln reads.
constexpr std::int64_t newest_onnx_opset = 28;

std::string normalize_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

using registry_t = std::map<std::pair<std::string, std::string>, std::map<std::int64_t, op_mapping>>;
registry_t& registry() {
    static registry_t r;
    return r;
}

void warn(const onnx_options& opts, const std::string& msg) {
    if (opts.warn) opts.warn(msg);
    else std::cerr << "kiln: warning: " << msg << "\n";
}

std::int64_t opset_of(const context& ctx, const std::string& domain) {
    auto it = ctx.opsets.find(normalize_domain(domain));
    return it == ctx.opsets.end() ? 1 : it->second;
}

// Every node (subgraphs included) whose op type has no mapping at its opset.
void collect_unsupported(const onnx::GraphProto& g, const context& ctx, std::vector<std::string>& out) {
    for (int i = 0; i < g.node_size(); ++i) {
        const auto& n = g.node(i);
        std::int64_t v = opset_of(ctx, n.domain());
        if (!find_onnx_op(normalize_domain(n.domain()), n.op_type(), v))
            out.push_back(cat("  ", n.op_type(), " (node '", node_name(n, static_cast<std::size_t>(i)), "', domain '",
                              n.domain().empty() ? "ai.onnx" : n.domain(), "', opset ", v, ")"));
        for (const auto& a : n.attribute()) {
            if (a.has_g()) collect_unsupported(a.g(), ctx, out);
            for (const auto& sg : a.graphs()) collect_unsupported(sg, ctx, out);
        }
    }
}

// The element type of a declared value; errors name it ("input 'x': ONNX type STRING ...").
dtype declared_dtype(const onnx::ValueInfoProto& vi, const char* what) {
    try {
        return onnx_dtype(vi.type().tensor_type().elem_type());
    } catch (const error& e) {
        fail(what, " '", vi.name(), "': ", e.what());
    }
}

// The dims of a graph input: the user's --input-dim, else the model's dims with symbolic
// dims taken from --dim-param or --default-dim. An unresolved dim is an error.
shape input_shape(const onnx::ValueInfoProto& vi, const onnx_options& opts) {
    if (!vi.type().has_tensor_type()) {
        try {
            return onnx_value_type(vi.type(), opts);
        } catch (const error& e) {
            fail("input '", vi.name(), "': ", e.what());
        }
    }
    const auto& tt = vi.type().tensor_type();
    dtype t = declared_dtype(vi, "input");
    if (auto it = opts.input_dims.find(vi.name()); it != opts.input_dims.end()) {
        if (tt.has_shape() && static_cast<std::size_t>(tt.shape().dim_size()) != it->second.size())
            fail("input '", vi.name(), "' has ", tt.shape().dim_size(), " dims in the model but ", it->second.size(),
                 " were given");
        for (int i = 0; tt.has_shape() && i < tt.shape().dim_size(); ++i) {
            const auto& d = tt.shape().dim(i);
            auto given = it->second[static_cast<std::size_t>(i)];
            if (d.has_dim_value() && static_cast<std::size_t>(d.dim_value()) != given)
                fail("input '", vi.name(), "' dim ", i, " is ", d.dim_value(), " in the model but ", given, " was given");
        }
        return {t, it->second};
    }
    if (auto it = opts.dyn_input_dims.find(vi.name()); it != opts.dyn_input_dims.end()) {
        if (tt.has_shape() && static_cast<std::size_t>(tt.shape().dim_size()) != it->second.size())
            fail("input '", vi.name(), "' has ", tt.shape().dim_size(), " dims in the model but ", it->second.size(),
                 " were given");
        for (int i = 0; tt.has_shape() && i < tt.shape().dim_size(); ++i) {
            const auto& d = tt.shape().dim(i);
            const auto& given = it->second[static_cast<std::size_t>(i)];
            if (d.has_dim_value() && !(given.is_fixed() && given.min == static_cast<std::size_t>(d.dim_value())))
                fail("input '", vi.name(), "' dim ", i, " is ", d.dim_value(), " in the model but ", given.min, "..",
                     given.max, " was given");
        }
        return shape(t, it->second);
    }
    if (!tt.has_shape()) fail("input '", vi.name(), "' has no shape in the model; give it with --input-dim");
    std::vector<dynamic_dim> dims;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
        const auto& d = tt.shape().dim(i);
        if (d.has_dim_value()) {
            if (d.dim_value() < 0)
                fail("input '", vi.name(), "' dim ", i, " is ", d.dim_value(), "; a dim is 0 or more");
            auto v = static_cast<std::size_t>(d.dim_value());
            dims.push_back({v, v, {}, {}});
            continue;
        }
        std::string sym = d.has_dim_param() ? d.dim_param() : "";
        if (auto it = opts.dim_params.find(sym); !sym.empty() && it != opts.dim_params.end()) {
            dynamic_dim dd = it->second;
            if (dd.symbol.empty() && !dd.is_fixed()) dd.symbol = sym;
            dims.push_back(dd);
        } else if (opts.default_dim) {
            dims.push_back({*opts.default_dim, *opts.default_dim, {}, {}});
        } else if (opts.default_dyn_dim) {
            dynamic_dim dd = *opts.default_dyn_dim;
            if (dd.symbol.empty() && !dd.is_fixed()) dd.symbol = sym;
            dims.push_back(dd);
        } else {
            fail("input '", vi.name(), "' dim ", i, sym.empty() ? " is unknown" : " is '" + sym + "'",
                 ": set it with ", sym.empty() ? "--input-dim @" + vi.name() + " ..." : "--dim-param " + sym + "=N",
                 " or --default-dim N");
        }
    }
    return shape(t, dims);
}

// Node indices in an order where each node comes after the producers of its inputs.
std::vector<int> topological_order(const onnx::GraphProto& g, const onnx_options& opts) {
    std::map<std::string, int> producer;
    for (int i = 0; i < g.node_size(); ++i)
        for (const auto& o : g.node(i).output())
            if (!o.empty()) producer[o] = i;
    // A depth-first search with an explicit stack: a chain of 100,000 nodes stored in reverse
    // order would overflow the call stack of a recursive one. Each frame is (node, next input).
    std::vector<int> order, state(static_cast<std::size_t>(g.node_size()), 0);   // 0 new, 1 active, 2 done
    std::vector<std::pair<int, int>> stack;
    for (int root = 0; root < g.node_size(); ++root) {
        if (state[static_cast<std::size_t>(root)] != 0) continue;
        state[static_cast<std::size_t>(root)] = 1;
        stack.push_back({root, 0});
        while (!stack.empty()) {
            auto& [i, next] = stack.back();
            const auto& n = g.node(i);
            if (next == n.input_size()) {
                state[static_cast<std::size_t>(i)] = 2;
                order.push_back(i);
                stack.pop_back();
                continue;
            }
            auto it = producer.find(n.input(next++));
            if (it == producer.end() || state[static_cast<std::size_t>(it->second)] == 2) continue;
            if (state[static_cast<std::size_t>(it->second)] == 1)
                fail("the graph has a cycle through node '",
                     node_name(g.node(it->second), static_cast<std::size_t>(it->second)), "'");
            state[static_cast<std::size_t>(it->second)] = 1;
            stack.push_back({it->second, 0});
        }
    }
    for (std::size_t k = 0; k < order.size(); ++k)
        if (order[k] != static_cast<int>(k)) {
            warn(opts, cat("graph '", g.name(), "': nodes are not in topological order; sorted them"));
            break;
        }
    return order;
}

instruction_ref resolve_input(context& ctx, const std::string& name);

bool has_unknown_rank(const std::vector<instruction_ref>& inputs) {
    return std::any_of(inputs.begin(), inputs.end(), [](instruction_ref i) {
        return !context::is_none(i) && i->get_shape().is_tensor() && !i->get_shape().rank_known();
    });
}

bool has_graph_attribute(const onnx::NodeProto& n) {
    return std::any_of(n.attribute().begin(), n.attribute().end(),
                       [](const onnx::AttributeProto& a) { return a.type() == onnx::AttributeProto::GRAPH; });
}

void parse_nodes(context& ctx, const onnx::GraphProto& g) {
    for (int i : topological_order(g, ctx.options())) {
        const auto& n = g.node(i);
        node_info info(n, node_name(n, static_cast<std::size_t>(i)), opset_of(ctx, n.domain()));
        try {
            std::vector<instruction_ref> inputs;
            for (int k = 0; k < n.input_size(); ++k)
                inputs.push_back(n.input(k).empty() ? ctx.none() : resolve_input(ctx, n.input(k)));
            const op_mapping* f = find_onnx_op(normalize_domain(n.domain()), n.op_type(), info.opset());
            if (!f) f = find_onnx_op("kiln", "unknown", 1);   // only reached with skip_unknown_operators
            ctx.current = &info;
            std::vector<instruction_ref> outs;
            try {
                // An input of unknown rank (deferred_types.cpp) is known only when it has run, and
                // so is what the node makes of it; control flow maps its bodies on such values.
                if (has_unknown_rank(inputs) && !has_graph_attribute(n)) throw runtime_value_needed("rank unknown");
                outs = (*f)(info, ctx, inputs);
            } catch (const runtime_value_needed&) {
                outs = defer_node(info, ctx, inputs);
            } catch (const std::out_of_range&) {
                // Mappings read required inputs with in.at(k): the node has fewer than the op needs.
                fail("has ", n.input_size(), " input", n.input_size() == 1 ? "" : "s", ", fewer than the op needs");
            } catch (const error&) {
                // Shapes that depend on run-time values reach ops that need static shapes.
                bool dynamic_input = false;
                for (auto in : inputs) dynamic_input = dynamic_input || (!ctx.is_none(in) && in->get_shape().dynamic());
                if (!dynamic_input) throw;
                outs = defer_node(info, ctx, inputs);
            }
            ctx.current = nullptr;
            if (outs.size() < static_cast<std::size_t>(n.output_size())) {
                for (int k = static_cast<int>(outs.size()); k < n.output_size(); ++k)
                    if (!n.output(k).empty()) fail("output ", k, " ('", n.output(k), "') is not produced by kiln's mapping");
            }
            for (int k = 0; k < n.output_size(); ++k) {
                if (n.output(k).empty()) continue;  // an optional output the model does not use
                if (ctx.is_none(outs[static_cast<std::size_t>(k)]))
                    fail("output ", k, " ('", n.output(k), "') is not produced by kiln's mapping");
                ctx.values[n.output(k)] = outs[static_cast<std::size_t>(k)];
            }
        } catch (const error& e) {
            ctx.current = nullptr;
            fail("node '", info.name(), "' (", n.op_type(), ", opset ", info.opset(), "): ", e.what());
        }
    }
}

void add_outputs(context& ctx, const onnx::GraphProto& g) {
    std::vector<instruction_ref> outs;
    for (const auto& o : g.output()) {
        auto it = ctx.values.find(o.name());
        if (it == ctx.values.end()) fail("graph output '", o.name(), "' is not produced by any node");
        // Subgraph outputs (loop bodies) often declare stale dims; the main graph's must hold.
        check_declared_output(o, it->second->get_shape(), ctx.parent == nullptr);
        outs.push_back(it->second);
    }
    ctx.mod().add_return(outs);
}

instruction_ref resolve_input(context& ctx, const std::string& name) {
    if (auto it = ctx.values.find(name); it != ctx.values.end()) return it->second;
    if (!ctx.parent) fail("input '", name, "' is not produced by any node, initializer or graph input");
    // An inlined graph (context::inline_graph) builds into its parent's module: no capture.
    if (&ctx.parent->mod() == &ctx.mod()) return resolve_input(*ctx.parent, name);
    // The parent resolves (and, if it is a subgraph too, captures) the value first.
    instruction_ref outer = resolve_input(*ctx.parent, name);
    instruction_ref inner;
    if (outer->is_literal()) {
        inner = ctx.mod().add_literal(outer->get_literal());
    } else {
        // Submodules are closed: an outer value becomes an extra parameter.
        inner = ctx.mod().add_parameter("capture:" + name, outer->get_shape());
        ctx.captures->push_back(outer);
    }
    ctx.values[name] = inner;
    return inner;
}

}  // namespace

bool context::visible(const std::string& name) const {
    for (const context* c = this; c; c = c->parent)
        if (c->values.count(name)) return true;
    return false;
}

instruction_ref context::resolve(const std::string& name) { return resolve_input(*this, name); }

void register_onnx_op(const std::string& domain, const std::string& op_type, std::int64_t since, op_mapping f) {
    registry()[{domain, op_type}][since] = std::move(f);
}

const op_mapping* find_onnx_op(const std::string& domain, const std::string& op_type, std::int64_t opset) {
    auto it = registry().find({domain, op_type});
    if (it == registry().end()) return nullptr;
    auto v = it->second.upper_bound(opset);   // the newest mapping with since <= opset
    if (v == it->second.begin()) return nullptr;
    return &std::prev(v)->second;
}

context::context(program& p, module& m, const onnx_options& opts, std::string base_dir)
    : prog_(p), mod_(m), opts_(opts), base_dir_(std::move(base_dir)) {}

instruction_ref context::add_literal(const literal& l) { return mod_.add_literal(l); }

instruction_ref context::none() {
    static std::list<instruction> absent{instruction(make_param_op("absent", shape()), shape(), {}, {})};
    return absent.begin();
}

void context::check_present(const std::vector<instruction_ref>& inputs) {
    for (auto i : inputs)
        if (is_none(i)) fail("a required input is absent (its name is empty)");
}

instruction_ref context::add(const std::string& op_name, const value& attrs, const std::vector<instruction_ref>& inputs) {
    check_present(inputs);
    operation op = make_op(op_name, attrs);
    bool constant = !op.traits().side_effects && !op.traits().builtin;
    for (auto i : inputs) constant = constant && i->is_literal();
    if (constant) {
        std::vector<argument> args;
        for (auto i : inputs) args.push_back(i->get_literal().get_argument());
        argument r = compute_op(op, args);
        if (r.get_shape().is_tensor()) return add_literal(literal(r));
    }
    auto ins = mod_.add_instruction(op, inputs);
    if (current) ins->set_source_name(current->name());
    return ins;
}

const literal& context::constant(instruction_ref i, const std::string& what) const {
    if (is_none(i)) fail(what, " is absent (its name is empty) but the op needs it");
    if (!i->is_literal()) {
        needed = &*i;
        throw runtime_value_needed(cat(what, " must be a constant (an initializer or computable from them) for kiln to compile it"));
    }
    return i->get_literal();
}

std::vector<std::int64_t> context::constant_ints(instruction_ref i, const std::string& what) const {
    return to_int64s(constant(i, what).get_argument());
}

std::vector<double> context::constant_doubles(instruction_ref i, const std::string& what) const {
    return to_doubles(constant(i, what).get_argument());
}

module* context::parse_subgraph(const onnx::GraphProto& g, const std::string& name,
                                const std::vector<shape>& input_shapes, std::vector<instruction_ref>& captures) {
    std::string unique = name;
    for (int k = 1; prog_.find_module(unique); ++k) unique = name + "_" + std::to_string(k);
    module& sub = prog_.create_module(unique);
    context sc(prog_, sub, opts_, base_dir_);
    sc.parent = this;
    sc.captures = &captures;
    sc.opsets = opsets;
    sc.declared = declared;
    check_names(g);
    for (const auto& vi : g.value_info()) sc.declared[vi.name()] = &vi;
    for (const auto& vi : g.output()) sc.declared[vi.name()] = &vi;
    for (const auto& init : g.initializer()) sc.values[init.name()] = sub.add_literal(tensor_to_literal(init, base_dir_));
    for (int i = 0; i < g.input_size(); ++i) {
        const auto& vi = g.input(i);
        shape s = static_cast<std::size_t>(i) < input_shapes.size() ? input_shapes[static_cast<std::size_t>(i)]
                                                                     : input_shape(vi, opts_);
        sc.values[vi.name()] = sub.add_parameter(vi.name(), s);
    }
    parse_nodes(sc, g);
    add_outputs(sc, g);
    return &sub;
}

std::vector<instruction_ref> context::inline_graph(const onnx::GraphProto& g, const std::vector<instruction_ref>& inputs) {
    if (static_cast<std::size_t>(g.input_size()) != inputs.size())
        fail("graph '", g.name(), "' has ", g.input_size(), " inputs; expected ", inputs.size());
    context sc(prog_, mod_, opts_, base_dir_);
    sc.parent = this;
    sc.opsets = opsets;
    sc.declared = declared;
    check_names(g);
    for (const auto& vi : g.value_info()) sc.declared[vi.name()] = &vi;
    for (const auto& init : g.initializer()) sc.values[init.name()] = mod_.add_literal(tensor_to_literal(init, base_dir_));
    for (int i = 0; i < g.input_size(); ++i) sc.values[g.input(i).name()] = inputs[static_cast<std::size_t>(i)];
    parse_nodes(sc, g);
    std::vector<instruction_ref> outs;
    for (const auto& o : g.output()) outs.push_back(resolve_input(sc, o.name()));
    return outs;
}

namespace {

// Dims given for an input the model does not have are a typo or the wrong model: say so.
void check_option_names(const onnx::GraphProto& g, const onnx_options& opts) {
    std::set<std::string> inputs;
    for (const auto& vi : g.input()) inputs.insert(vi.name());
    auto check = [&](const std::string& name, const char* option) {
        if (inputs.count(name)) return;
        std::string list;
        for (const auto& i : inputs) list += (list.empty() ? "" : ", ") + i;
        fail(option, " names '", name, "', which is not an input of the model (inputs: ", list.empty() ? "none" : list,
             ")");
    };
    for (const auto& [name, lens] : opts.input_dims) check(name, "input_dims");
    for (const auto& [name, dims] : opts.dyn_input_dims) check(name, "dyn_input_dims");
}

// Takes the main graph's initializer bytes out of `model` (see take_tensor_literal).
program parse_model(onnx::ModelProto& model, const onnx_options& opts, const std::string& base_dir) {
    if (model.ir_version() < 3 || model.ir_version() > 14)
        fail("ONNX IR version ", model.ir_version(), " is not supported (kiln reads IR versions 3 to 14)");
    if (model.graph().output_size() == 0) fail("model has no outputs (its graph declares none)");
    program p;
    context ctx(p, p.main(), opts, base_dir);
    for (const auto& os : model.opset_import()) {
        // A newer opset may change what an op means; kiln cannot know how, so it refuses.
        if (normalize_domain(os.domain()).empty() && (os.version() < 1 || os.version() > newest_onnx_opset))
            fail("opset ", os.version(), " of domain 'ai.onnx' is not supported: kiln knows opsets 1 to ",
                 newest_onnx_opset, " (ONNX 1.23)");
        ctx.opsets[normalize_domain(os.domain())] = os.version();
    }
    if (!ctx.opsets.count("")) ctx.opsets[""] = 1;
    const auto& g = model.graph();

    std::vector<std::string> unsupported;
    collect_unsupported(g, ctx, unsupported);
    if (!unsupported.empty()) {
        std::string list;
        for (const auto& u : unsupported) list += "\n" + u;
        const char* plural = unsupported.size() > 1 ? "s" : "";
        if (!opts.skip_unknown_operators)
            fail(unsupported.size(), " unsupported operator", plural, " (use --skip-unknown-operators to parse past them):",
                 list);
        warn(opts, cat("skipped ", unsupported.size(), " unsupported operator", plural,
                       " (running one fails, naming its node):", list));
    }

    for (const auto& vi : g.value_info()) ctx.declared[vi.name()] = &vi;
    for (const auto& vi : g.output()) ctx.declared[vi.name()] = &vi;
    check_names(g);
    check_option_names(g, opts);
    std::map<std::string, const onnx::TensorProto*> initializers;
    for (auto& init : *model.mutable_graph()->mutable_initializer()) {
        initializers[init.name()] = &init;
        ctx.values[init.name()] = p.main().add_literal(take_tensor_literal(init, base_dir));
    }
    // An input with an initializer of its name (IR >= 4) takes the initializer as a fixed default:
    // kiln compiles the model with it as a constant.
    for (const auto& vi : g.input()) {
        if (auto it = initializers.find(vi.name()); it != initializers.end())
            check_input_default(vi, *it->second);
        else
            ctx.values[vi.name()] = p.main().add_parameter(vi.name(), input_shape(vi, opts));
    }
    parse_nodes(ctx, g);
    add_outputs(ctx, g);
    return p;
}

}  // namespace

}  // namespace kiln::onnx_fe

namespace kiln {

namespace {

program parse_model_and_names(onnx::ModelProto& model, const onnx_options& opts, const std::string& base_dir,
                              std::vector<std::string>* output_names) {
    program p = onnx_fe::parse_model(model, opts, base_dir);
    if (output_names) {
        output_names->clear();
        for (const auto& o : model.graph().output()) output_names->push_back(o.name());
    }
    return p;
}

// Parses the file as protobuf reads it, in blocks: the file's bytes are never held whole, and the
// initializers' parsed bytes become the literals (so a model's weights are in memory once).
void parse_model_file(const std::string& path, onnx::ModelProto& model) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail("cannot open '", path, "' (", std::strerror(errno), ")");
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int err = errno;
        ::close(fd);
        fail("cannot read '", path, "' (", std::strerror(err), ")");
    }
    auto size = static_cast<std::size_t>(st.st_size);
    bool parsed = false;
    if (size > 0 && size <= static_cast<std::size_t>(INT32_MAX)) {
        google::protobuf::io::FileInputStream in(fd, 1 << 20);
        parsed = model.ParseFromZeroCopyStream(&in);
    }
    ::close(fd);
    if (size == 0) fail(path, ": empty file");
    if (!parsed) fail(path, ": not a valid ONNX model: the protobuf could not be parsed (", size, " bytes)");
}

}  // namespace

program parse_onnx_buffer(const void* data, std::size_t size, const onnx_options& opts, const std::string& base_dir,
                          std::vector<std::string>* output_names) {
    onnx::ModelProto model;
    if (size == 0) fail("the model is empty (0 bytes)");
    if (size > static_cast<std::size_t>(INT32_MAX) || !model.ParseFromArray(data, static_cast<int>(size)))
        fail("not a valid ONNX model: the protobuf could not be parsed (", size, " bytes)");
    return parse_model_and_names(model, opts, base_dir, output_names);
}

program parse_onnx_file(const std::string& path, const onnx_options& opts, std::vector<std::string>* output_names) {
    check_input_file(path);
    onnx::ModelProto model;
    parse_model_file(path, model);
    auto slash = path.find_last_of('/');
    std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
    try {
        return parse_model_and_names(model, opts, dir, output_names);
    } catch (const error& e) {
        fail(path, ": ", e.what());
    }
}

std::vector<std::string> onnx_supported_ops() {
    std::vector<std::string> names;
    for (const auto& [key, versions] : onnx_fe::registry()) {
        if (key.first == "kiln") continue;
        names.push_back(key.first.empty() ? key.second : key.first + ":" + key.second);
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace kiln
