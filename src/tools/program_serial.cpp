#include "tools/program_serial.hpp"

#include <unordered_map>

#include "core/error.hpp"
#include "core/reflect.hpp"

namespace kiln {

namespace {

// core's shape conversion knows no tuples (attributes never hold one); results can be tuples.
value shape_to_value(const shape& s) {
    if (!s.is_tuple()) return to_value(s);
    value_array subs;
    for (const auto& sub : s.sub_shapes()) subs.push_back(shape_to_value(sub));
    return value{{"tuple", value(std::move(subs))}};
}

shape shape_from_value(const value& v) {
    shape s;
    if (!v.contains("tuple")) {
        from_value(v, s);
        return s;
    }
    std::vector<shape> subs;
    for (const auto& sub : v.at("tuple").as_array()) subs.push_back(shape_from_value(sub));
    return shape(std::move(subs));
}

value instruction_to_value(const module& m, const instruction& ins,
                           const std::unordered_map<const instruction*, std::size_t>& index,
                           std::vector<const literal*>& payloads) {
    value v = value_object{};
    v.set("op", std::string(ins.name()));
    if (ins.is_param()) v.set("name", m.parameter_name(ins));
    if (ins.is_literal()) {
        v.set("payload", payloads.size());
        payloads.push_back(&ins.get_literal());
    }
    if (!ins.is_param() && !ins.is_literal() && !ins.is_return()) {
        value attrs = ins.get_operator().attributes();
        if (attrs.is_object() && !attrs.as_object().empty()) v.set("attributes", attrs);
    }
    value_array inputs;
    for (auto in : ins.inputs()) inputs.emplace_back(index.at(&*in));
    if (!inputs.empty()) v.set("inputs", value(std::move(inputs)));
    value_array mods;
    for (const module* sub : ins.module_inputs()) mods.emplace_back(sub->name());
    if (!mods.empty()) v.set("modules", value(std::move(mods)));
    if (!ins.is_return()) v.set("shape", shape_to_value(ins.get_shape()));
    if (!ins.source_name().empty()) v.set("source", ins.source_name());
    return v;
}

value module_to_value(const module& m, std::vector<const literal*>& payloads) {
    std::unordered_map<const instruction*, std::size_t> index;
    value_array instructions;
    for (const auto& ins : m) {
        index[&ins] = instructions.size();
        instructions.push_back(instruction_to_value(m, ins, index, payloads));
    }
    return value{{"name", m.name()}, {"instructions", value(std::move(instructions))}};
}

struct module_reader {
    program& prog;
    const std::function<literal(std::size_t, const shape&)>& payload;

    instruction_ref read_instruction(module& m, const value& v, const std::vector<instruction_ref>& defined) {
        const std::string& op = v.at("op").as_string();
        std::vector<instruction_ref> inputs;
        if (v.contains("inputs"))
            for (const auto& i : v.at("inputs").as_array()) {
                auto k = static_cast<std::size_t>(i.as_int());
                if (k >= defined.size()) fail("input ", k, " is not defined before it is used");
                inputs.push_back(defined[k]);
            }
        std::vector<module*> mods;
        if (v.contains("modules"))
            for (const auto& n : v.at("modules").as_array()) {
                module* sub = prog.find_module(n.as_string());
                if (!sub) fail("no module '", n.as_string(), "'");
                mods.push_back(sub);
            }
        shape s = op == "@return" ? shape() : shape_from_value(v.at("shape"));
        instruction_ref ins;
        if (op == "@param") ins = m.add_parameter(v.at("name").as_string(), s);
        else if (op == "@literal") ins = m.add_literal(payload(static_cast<std::size_t>(v.at("payload").as_int()), s));
        else if (op == "@return") ins = m.add_return(inputs);
        else {
            ins = m.add_instruction(make_op(op, v.contains("attributes") ? v.at("attributes") : value()), inputs, mods);
            if (ins->get_shape() != s)
                fail(op, " computes ", to_string(ins->get_shape()), " but the saved shape is ", to_string(s));
        }
        if (v.contains("source")) ins->set_source_name(v.at("source").as_string());
        return ins;
    }

    void read_module(module& m, const value& v) {
        std::vector<instruction_ref> defined;
        const auto& instructions = v.at("instructions").as_array();
        for (std::size_t i = 0; i < instructions.size(); ++i) {
            try {
                defined.push_back(read_instruction(m, instructions[i], defined));
            } catch (const error& e) {
                fail("module ", m.name(), ", instruction ", i, ": ", e.what());
            }
        }
    }
};

// Submodules come first so that an instruction calling one can compute its shape.
std::vector<std::size_t> callee_first_order(const value_array& mods) {
    std::unordered_map<std::string, std::size_t> by_name;
    for (std::size_t i = 0; i < mods.size(); ++i) by_name[mods[i].at("name").as_string()] = i;
    std::vector<int> state(mods.size(), 0);   // 0 new, 1 visiting, 2 done
    std::vector<std::size_t> order;
    std::function<void(std::size_t)> visit = [&](std::size_t i) {
        if (state[i] == 2) return;
        if (state[i] == 1) fail("module '", mods[i].at("name").as_string(), "' calls itself");
        state[i] = 1;
        for (const auto& ins : mods[i].at("instructions").as_array())
            if (ins.contains("modules"))
                for (const auto& n : ins.at("modules").as_array()) {
                    auto it = by_name.find(n.as_string());
                    if (it == by_name.end()) fail("no module '", n.as_string(), "'");
                    visit(it->second);
                }
        state[i] = 2;
        order.push_back(i);
    };
    for (std::size_t i = 0; i < mods.size(); ++i) visit(i);
    return order;
}

}  // namespace

value program_to_value(const program& p, std::vector<const literal*>& payloads) {
    value_array mods;
    for (const module* m : p.modules()) mods.push_back(module_to_value(*m, payloads));
    return value{{"modules", value(std::move(mods))}};
}

program program_from_value(const value& v, const std::function<literal(std::size_t, const shape&)>& payload) {
    const auto& mods = v.at("modules").as_array();
    if (mods.empty() || mods[0].at("name").as_string() != "main") fail("the first module is not 'main'");
    program p;
    for (std::size_t i = 1; i < mods.size(); ++i) p.create_module(mods[i].at("name").as_string());
    module_reader reader{p, payload};
    for (std::size_t i : callee_first_order(mods)) {
        const std::string& name = mods[i].at("name").as_string();
        reader.read_module(*p.find_module(name), mods[i]);
    }
    p.validate();
    return p;
}

}  // namespace kiln
