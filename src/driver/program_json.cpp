#include "driver/program_json.hpp"

#include <unordered_map>

#include "core/reflect.hpp"
#include "driver/display.hpp"

namespace kiln::driver {

namespace {

value literal_values(const literal& lit) {
    const argument& a = lit.get_argument();
    dtype t = a.get_shape().type();
    value_array vals;
    if (is_float(t)) {
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

}  // namespace kiln::driver
