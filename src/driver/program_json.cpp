#include "driver/program_json.hpp"

#include <unordered_map>

#include "core/reflect.hpp"
#include "core/error.hpp"
#include "driver/display.hpp"
#include "tools/program_serial.hpp"

namespace kiln::driver {

namespace {

value literal_values(const literal& lit) {
    const argument& a = lit.get_argument();
    dtype t = a.get_shape().type();
    value_array vals;
    if (t == dtype::string) {
        for (auto& str : to_strings(a)) vals.emplace_back(std::move(str));
    } else if (is_float(t)) {
        for (double d : to_doubles(a)) vals.emplace_back(d);
    } else {
        // uint64 values above int64's range would print negative; no model needs them yet.
        for (std::int64_t i : to_int64s(a)) {
            if (t == dtype::bool_) vals.emplace_back(i != 0);
            else vals.emplace_back(i);
        }
    }
    return value(std::move(vals));
}

value instruction_value(const instruction& ins, const std::unordered_map<const instruction*, std::string>& names) {
    value v = value_object{};
    v.set("name", names.at(&ins));
    v.set("op", std::string(ins.name()));
    value attrs = ins.get_operator().attributes();
    if (!attrs.as_object().empty()) v.set("attributes", attrs);
    value_array inputs;
    for (auto in : ins.inputs()) inputs.emplace_back(names.at(&*in));
    v.set("inputs", value(std::move(inputs)));
    if (!ins.module_inputs().empty()) {
        value_array mods;
        for (const module* sub : ins.module_inputs()) mods.emplace_back(sub->name());
        v.set("modules", value(std::move(mods)));
    }
    if (!ins.is_return()) v.set("shape", to_value(ins.get_shape()));
    if (ins.is_literal()) v.set("values", literal_values(ins.get_literal()));
    return v;
}

std::string module_json(const module& m) {
    std::unordered_map<const instruction*, std::string> names;
    std::size_t count = 0;
    std::string s = "    {\n      \"name\": " + to_json(value(m.name())) + ",\n      \"instructions\": [";
    bool first = true;
    for (const auto& ins : m) {
        names[&ins] = ins.is_param() ? param_name(ins) : "@" + std::to_string(count++);
        s += (first ? "\n        " : ",\n        ") + to_json(instruction_value(ins, names));
        first = false;
    }
    return s + (first ? "]\n    }" : "\n      ]\n    }");
}

}  // namespace

std::string program_to_json(const program& p) {
    std::string s = "{\n  \"modules\": [\n";
    bool first = true;
    for (const module* m : p.modules()) {
        s += (first ? "" : ",\n") + module_json(*m);
        first = false;
    }
    return s + "\n  ]\n}\n";
}

namespace {

// One instruction of the printed JSON in runtime/program_serial's form: inputs by index, a
// literal's values as a payload.
value serial_instruction(const value& ins, std::unordered_map<std::string, std::size_t>& index,
                         std::vector<value>& payloads) {
    value v = value_object{};
    const std::string& op = ins.at("op").as_string();
    const std::string& name = ins.at("name").as_string();
    v.set("op", op);
    if (op == "@param") v.set("name", name);
    if (op == "@literal") {
        v.set("payload", payloads.size());
        payloads.push_back(ins.at("values"));
    }
    if (ins.contains("attributes") && op[0] != '@') v.set("attributes", ins.at("attributes"));
    value_array inputs;
    if (ins.contains("inputs"))
        for (const auto& in : ins.at("inputs").as_array()) {
            auto it = index.find(in.as_string());
            if (it == index.end()) fail("instruction '", name, "': input '", in.as_string(), "' is not defined before it");
            inputs.emplace_back(it->second);
        }
    if (!inputs.empty()) v.set("inputs", value(std::move(inputs)));
    if (ins.contains("modules")) v.set("modules", ins.at("modules"));
    if (ins.contains("shape")) v.set("shape", ins.at("shape"));
    index[name] = index.size();
    return v;
}

literal literal_from_values(const value& vals, const shape& s) {
    if (s.type() == dtype::string) {
        std::vector<std::string> strs;
        for (const auto& x : vals.as_array()) strs.push_back(x.as_string());
        return literal(from_strings(s, strs));
    }
    if (is_float(s.type())) {
        std::vector<double> d;
        for (const auto& x : vals.as_array()) d.push_back(x.is_bool() ? x.as_bool() : x.as_float());
        return literal(s, d);
    }
    std::vector<std::int64_t> i;
    for (const auto& x : vals.as_array()) i.push_back(x.is_bool() ? x.as_bool() : x.as_int());
    return literal(s, i);
}

}  // namespace

program program_from_json(const std::string& text, const std::string& path) {
    try {
        value doc = parse_json(text);
        std::vector<value> payloads;
        value_array mods;
        for (const auto& m : doc.at("modules").as_array()) {
            std::unordered_map<std::string, std::size_t> index;
            value_array instructions;
            for (const auto& ins : m.at("instructions").as_array())
                instructions.push_back(serial_instruction(ins, index, payloads));
            mods.push_back(value{{"name", m.at("name")}, {"instructions", value(std::move(instructions))}});
        }
        return program_from_value(value{{"modules", value(std::move(mods))}},
                                  [&](std::size_t i, const shape& s) { return literal_from_values(payloads.at(i), s); });
    } catch (const error& e) {
        fail("'", path, "': ", e.what());
    }
}

}  // namespace kiln::driver
