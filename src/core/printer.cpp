// The text IR printer. Format (parsed back by text_parser.cpp):
//   module: "main"
//   x = @param:x -> float_type, {1, 784}, {784, 1}
//   @0 = @literal{0.5, -1.25} -> float_type, {2}, {1}
//   @1 = add(x,@0) -> ...
//   @2 = if(@1,x), [then_0, else_0] -> ...
//   @3 = @return(@2)
#include <charconv>
#include <cmath>
#include <ostream>
#include <sstream>
#include <unordered_map>

#include "core/module.hpp"
#include "core/printer.hpp"
#include "core/visit.hpp"

namespace kiln {

namespace {
std::string shortest_float(double v) {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v));
    std::string s(buf, r.ptr);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
}

std::string literal_values(const literal& lit) {
    const argument& a = lit.get_argument();
    std::string s = "{";
    dtype t = a.get_shape().type();
    if (t == dtype::string) {
        // Quoted; the text parser reads back \" \\ and \n.
        auto vals = to_strings(a);
        for (std::size_t i = 0; i < vals.size(); ++i) {
            s += i ? ", \"" : "\"";
            for (char c : vals[i]) s += c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
            s += '"';
        }
    } else if (is_float(t)) {
        // Narrow floats print in float's shortest form: it still identifies the value exactly.
        auto vals = to_doubles(a);
        for (std::size_t i = 0; i < vals.size(); ++i) {
            double v = vals[i];
            s += (i ? ", " : "") + (t == dtype::float64 || !std::isfinite(v) ? to_string(value(v)) : shortest_float(v));
        }
    } else {
        auto vals = to_int64s(a);
        // uint64 above int64's range prints through its bit pattern reinterpreted; keep it exact.
        bool u64 = a.get_shape().type() == dtype::uint64;
        for (std::size_t i = 0; i < vals.size(); ++i)
            s += (i ? ", " : "") + (u64 ? std::to_string(static_cast<std::uint64_t>(vals[i])) : std::to_string(vals[i]));
    }
    return s + "}";
}
// max_values 0: every value.
void print_module(std::ostream& os, const module& m, std::size_t max_values) {
    std::unordered_map<const instruction*, std::string> names;
    std::size_t count = 0;
    for (const auto& ins : m) {
        std::string name = ins.is_param() ? m.parameter_name(ins) : "@" + std::to_string(count++);
        names[&ins] = name;
        os << name << " = ";
        if (ins.is_param()) {
            os << "@param:" << name;
        } else if (ins.is_literal()) {
            const literal& lit = ins.get_literal();
            bool brief = max_values && lit.get_argument().get_shape().elements() > max_values;
            os << "@literal" << (brief ? std::string("{ ... }") : literal_values(lit));
        } else {
            os << to_string(ins.get_operator()) << "(";
            for (std::size_t i = 0; i < ins.inputs().size(); ++i) os << (i ? "," : "") << names[&*ins.inputs()[i]];
            os << ")";
            if (!ins.module_inputs().empty()) {
                os << ", [";
                for (std::size_t i = 0; i < ins.module_inputs().size(); ++i)
                    os << (i ? ", " : "") << ins.module_inputs()[i]->name();
                os << "]";
            }
        }
        if (!ins.is_return()) os << " -> " << to_string(ins.get_shape());
        os << "\n";
    }
}

}  // namespace

void print(std::ostream& os, const module& m) { print_module(os, m, 0); }

void print(std::ostream& os, const program& p, std::size_t max_literal_values) {
    bool first = true;
    for (const auto* m : p.modules()) {
        os << (first ? "" : "\n") << "module: \"" << m->name() << "\"\n";
        print_module(os, *m, max_literal_values);
        first = false;
    }
}

void print(std::ostream& os, const program& p) { print(os, p, 0); }

std::string to_string(const program& p) {
    std::ostringstream os;
    print(os, p);
    return os.str();
}

std::string to_string(const module& m) {
    std::ostringstream os;
    print(os, m);
    return os.str();
}

}  // namespace kiln
