#include "tools/graphviz.hpp"

#include <unordered_map>

#include "tools/program_tools.hpp"

namespace kiln {

namespace {

std::string escape(const std::string& s) {
    std::string r;
    for (char c : s) {
        if (c == '\n') {
            r += "\\n";
            continue;
        }
        if (c == '"' || c == '\\') r += '\\';
        r += c;
    }
    return r;
}

std::string shape_label(const shape& s) {
    if (s.is_tuple()) return "tuple";
    std::string t = to_string(s);
    auto brace = t.find("}");   // "float_type, {2, 3}" without the strides
    return brace == std::string::npos ? t : t.substr(0, brace + 1);
}

struct dot_writer {
    std::string out;
    std::size_t clusters = 0;
    std::unordered_map<const instruction*, std::string> ids;

    std::string id(const instruction& ins, const std::string& prefix) {
        auto [it, added] = ids.emplace(&ins, prefix + std::to_string(ids.size()));
        return it->second;
    }

    void node(const std::string& nid, const std::string& label, const char* style, const std::string& indent) {
        out += indent + nid + " [label=\"" + escape(label) + "\"" + style + "];\n";
    }

    std::string label(const module& m, const instruction& ins, const std::string& name) {
        if (ins.is_param()) return m.parameter_name(ins) + "\n" + shape_label(ins.get_shape());
        if (ins.is_literal()) return name + " literal\n" + shape_label(ins.get_shape());
        return name + " " + std::string(ins.name()) + "\n" + shape_label(ins.get_shape());
    }

    const char* style(const instruction& ins) {
        if (ins.is_param()) return ", shape=ellipse, style=filled, fillcolor=lightblue";
        if (ins.is_literal()) return ", shape=box, style=filled, fillcolor=lightgrey";
        return ", shape=box";
    }

    // A fused region: its submodule's instructions inside a cluster; the outer inputs feed its
    // parameters and its returned value is the fused instruction's node.
    void fused(const module& m, const instruction& ins, const std::string& name) {
        const module& body = *ins.module_inputs().front();
        std::string indent = "    ";
        out += "  subgraph cluster_" + std::to_string(clusters++) + " {\n" + indent + "label=\"" +
               escape(name + " = " + std::string(ins.name()) + " [" + body.name() + "]") +
               "\";\n" + indent + "style=filled; fillcolor=\"#fff4e0\";\n";
        std::string out_id = id(ins, "n");
        node(out_id, label(m, ins, name), ", shape=box, style=bold", indent);
        auto names = instruction_names(body);
        auto params = body.parameters();
        for (const auto& sub : body) {
            if (sub.is_return()) {
                for (auto in : sub.inputs()) out += indent + ids.at(&*in) + " -> " + out_id + ";\n";
                continue;
            }
            std::string sid = id(sub, "f");
            node(sid, label(body, sub, names.at(&sub)), style(sub), indent);
            for (auto in : sub.inputs()) out += indent + ids.at(&*in) + " -> " + sid + ";\n";
        }
        out += "  }\n";
        for (std::size_t i = 0; i < params.size() && i < ins.inputs().size(); ++i)
            out += "  " + ids.at(&*ins.inputs()[i]) + " -> " + ids.at(&*params[i]) + " [style=dashed];\n";
    }

    void main_module(const module& m) {
        auto names = instruction_names(m);
        for (const auto& ins : m) {
            if (ins.get_operator().traits().fusion && !ins.module_inputs().empty()) {
                fused(m, ins, names.at(&ins));
                continue;
            }
            std::string nid = id(ins, "n");
            if (ins.is_return()) node(nid, "@return", ", shape=plaintext", "  ");
            else node(nid, label(m, ins, names.at(&ins)), style(ins), "  ");
            for (auto in : ins.inputs()) out += "  " + ids.at(&*in) + " -> " + nid + ";\n";
        }
    }
};

}  // namespace

std::string program_to_dot(const program& p) {
    dot_writer w;
    w.out = "digraph kiln {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n";
    w.main_module(p.main());
    return w.out + "}\n";
}

}  // namespace kiln
