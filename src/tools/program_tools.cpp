#include "tools/program_tools.hpp"

#include <algorithm>
#include <iterator>

#include "core/error.hpp"

namespace kiln {

namespace {

instruction_ref at_position(module& m, std::size_t position) {
    if (position >= m.size()) fail("main has ", m.size(), " instructions; there is no position ", position);
    return std::next(m.begin(), static_cast<std::ptrdiff_t>(position));
}

void remove_unused_parameters(module& m) {
    for (auto param : m.parameters())
        if (param->outputs().empty()) m.remove_instruction(param);
}

}  // namespace

bool is_computing(const instruction& ins) { return !ins.is_param() && !ins.is_literal() && !ins.is_return(); }

// Makes `target` main's only output and removes what it does not need.
void cut_after(module& m, instruction_ref target) {
    if (target->is_return()) return;
    if (auto ret = m.get_return(); ret != m.end()) m.remove_instruction(ret);
    m.add_return({target});
    m.remove_dead_code();
    remove_unused_parameters(m);
}

program program_prefix(const program& p, std::size_t position) {
    program c = p.clone();
    cut_after(c.main(), at_position(c.main(), position));
    return c;
}

isolated_instruction isolate_instruction(const program& p, std::size_t position) {
    isolated_instruction r{p.clone(), {}};
    module& m = r.prog.main();
    instruction_ref ins = at_position(m, position);
    // Positions are taken before parameters are added (which shifts them).
    std::vector<std::pair<instruction_ref, std::size_t>> sources;
    for (auto in : ins->inputs()) {
        bool seen = std::any_of(sources.begin(), sources.end(), [&](const auto& s) { return s.first == in; });
        if (!in->is_literal() && !seen) sources.emplace_back(in, std::distance(m.begin(), in));
    }
    std::size_t n = 0;
    for (auto [in, source] : sources) {
        std::string name;
        do name = "in" + std::to_string(n++);
        while (m.get_parameter(name) != m.end());
        m.replace_uses(in, m.add_parameter(name, in->get_shape()));
        r.inputs.emplace_back(name, source);
    }
    cut_after(m, ins);
    return r;
}

std::unordered_map<const instruction*, std::string> instruction_names(const module& m) {
    std::unordered_map<const instruction*, std::string> names;
    std::size_t n = 0;
    for (const auto& ins : m) names[&ins] = ins.is_param() ? m.parameter_name(ins) : "@" + std::to_string(n++);
    return names;
}

std::string instruction_line(const module& m, const instruction& ins,
                             const std::unordered_map<const instruction*, std::string>& names) {
    std::string s = names.at(&ins) + " = ";
    if (ins.is_param()) s += "@param:" + m.parameter_name(ins);
    else if (ins.is_literal()) s += "@literal{ ... }";
    else {
        s += to_string(ins.get_operator()) + "(";
        for (std::size_t i = 0; i < ins.inputs().size(); ++i) s += (i ? "," : "") + names.at(&*ins.inputs()[i]);
        s += ")";
        if (!ins.module_inputs().empty()) {
            s += ", [";
            for (std::size_t i = 0; i < ins.module_inputs().size(); ++i)
                s += (i ? ", " : "") + ins.module_inputs()[i]->name();
            s += "]";
        }
    }
    if (!ins.is_return()) s += " -> " + to_string(ins.get_shape());
    return s;
}

}  // namespace kiln
