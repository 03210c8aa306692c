// Reads the text IR that printer.cpp writes. A line is one of
//   module: "name"
//   x = @param:x -> <shape>
//   @0 = @literal{0.5, -1.25} -> <shape>
//   @1 = op[attr=<value>,...](x,@0), [module, ...] -> <shape>
//   @2 = @return(@1)
// Empty lines and lines starting with '#' are skipped; lines before the first `module:` header
// belong to "main". An op's `-> <shape>` may be left out when writing IR by hand; when given, it
// must be the shape the op computes. A cursor over one line lexes on demand (no token list): the
// grammar is small and every construct announces itself by its first character.
#include "core/text_parser.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/limits.hpp"

namespace kiln {
namespace {

bool is_one_of(char c, const char* set) { return c != '\0' && std::strchr(set, c) != nullptr; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Names (instructions, parameters, ops, modules, dim symbols, bare-word values) run until space or
// punctuation, so that "x:0", "input.1" and "gpu::gemm" need no quotes. A ':' belongs to a name
// unless a space follows it, which keeps `key: value` apart.
bool is_name_char(char c) {
    return c != '\0' && !std::isspace(static_cast<unsigned char>(c)) && !is_one_of(c, ",()[]{}=;:\"");
}

// One line and a position in it; syntax errors name the line and the column.
struct cursor {
    std::string_view text;
    std::size_t line;
    std::size_t pos = 0;
    int depth = 0;  // of the braced values being read

    [[noreturn]] void error_at(std::size_t at, const std::string& msg) const {
        fail("line ", line, ", column ", at + 1, ": ", msg);
    }
    [[noreturn]] void expected(std::string_view what) const {
        std::string found = pos < text.size() ? "'" + std::string(text.substr(pos, 16)) + "'" : "end of line";
        error_at(pos, cat("expected ", what, ", found ", found));
    }
    void skip() {
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    }
    char peek_at(std::size_t i) const { return i < text.size() ? text[i] : '\0'; }
    char peek() {
        skip();
        return peek_at(pos);
    }
    bool eat(std::string_view s) {
        skip();
        if (!text.substr(pos).starts_with(s)) return false;
        pos += s.size();
        return true;
    }
    void expect(std::string_view s) {
        if (!eat(s)) expected("'" + std::string(s) + "'");
    }
    void expect_end() {
        if (peek() != '\0') expected("end of line");
    }
    std::string name(std::string_view what) {
        skip();
        std::size_t start = pos;
        auto in_name = [&](std::size_t i) {
            return is_name_char(text[i]) || (text[i] == ':' && !std::isspace(static_cast<unsigned char>(peek_at(i + 1))));
        };
        while (pos < text.size() && in_name(pos)) ++pos;
        if (pos == start) expected(what);
        return std::string(text.substr(start, pos - start));
    }
    std::size_t integer(std::string_view what) {
        skip();
        std::size_t n = 0;
        auto r = std::from_chars(text.data() + pos, text.data() + text.size(), n);
        if (r.ec != std::errc()) expected(what);
        pos = static_cast<std::size_t>(r.ptr - text.data());
        return n;
    }
    // The text of a number as value.cpp prints it: -12, 0.5, 1e-07, inf, -nan.
    std::string_view number() {
        skip();
        std::size_t start = pos;
        if (pos < text.size() && text[pos] == '-') ++pos;
        if (text.substr(pos).starts_with("inf") || text.substr(pos).starts_with("nan")) {
            pos += 3;
        } else {
            while (pos < text.size() &&
                   (is_digit(text[pos]) || is_one_of(text[pos], ".eE") ||
                    (pos > start && is_one_of(text[pos], "+-") && is_one_of(text[pos - 1], "eE"))))
                ++pos;
        }
        return text.substr(start, pos - start);
    }
    std::string quoted() {
        expect("\"");
        std::string s;
        while (pos < text.size() && text[pos] != '"') {
            char c = text[pos++];
            if (c == '\\' && pos < text.size()) {
                c = text[pos++];
                if (c == 'n') c = '\n';
            }
            s += c;
        }
        if (pos >= text.size()) expected("a closing '\"'");
        ++pos;
        return s;
    }
};

// The whole of `t` as a T, or nothing.
template <class T>
std::optional<T> convert(std::string_view t) {
    T n{};
    auto r = std::from_chars(t.data(), t.data() + t.size(), n);
    if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size()) return std::nullopt;
    return n;
}

std::optional<double> to_double(std::string_view t) {
    std::string_view body = t.starts_with('-') ? t.substr(1) : t;
    if (body != "inf" && body != "nan") return convert<double>(t);
    return std::copysign(body == "inf" ? INFINITY : NAN, t.starts_with('-') ? -1.0 : 1.0);   // -nan keeps its sign
}

value parse_value(cursor& c);

value parse_number(cursor& c) {
    std::size_t at = c.pos;
    std::string_view t = c.number();
    if (t.find_first_of(".eEn") == std::string_view::npos)
        if (auto i = convert<std::int64_t>(t)) return value(*i);
    auto d = to_double(t);
    if (!d) c.error_at(at, cat("expected a number, found '", t, "'"));
    return value(*d);
}

// `{}` and `{a, b}` are arrays, `{key: v, ...}` an object.
value parse_braced(cursor& c) {
    if (c.depth >= max_value_depth) c.error_at(c.pos, cat("values nest deeper than ", max_value_depth, " levels"));
    c.expect("{");
    if (c.eat("}")) return value(value_array{});
    ++c.depth;
    struct leave {
        cursor& c;
        ~leave() { --c.depth; }
    } on_return{c};
    std::size_t start = c.pos;
    if (c.peek() == '"' || std::isalpha(static_cast<unsigned char>(c.peek())) || c.peek() == '_') {
        if (c.peek() == '"') c.quoted();
        else c.name("a key");
        bool is_object = c.peek() == ':';
        c.pos = start;
        if (is_object) {
            value_object o;
            do {
                std::string key = c.peek() == '"' ? c.quoted() : c.name("a key");
                c.expect(":");
                o.emplace_back(std::move(key), parse_value(c));
            } while (c.eat(","));
            c.expect("}");
            return value(std::move(o));
        }
    }
    value_array a;
    do a.push_back(parse_value(c));
    while (c.eat(","));
    c.expect("}");
    return value(std::move(a));
}

value parse_value(cursor& c) {
    char ch = c.peek();
    if (ch == '{') return parse_braced(c);
    if (ch == '"') return value(c.quoted());
    if (ch == '-' || is_digit(ch)) return parse_number(c);
    if (c.eat("bytes:")) {
        std::size_t start = c.pos;
        while (c.pos < c.text.size() && (std::isalnum(static_cast<unsigned char>(c.text[c.pos])) ||
                                         is_one_of(c.text[c.pos], "+/=")))
            ++c.pos;
        // value.cpp's JSON reader owns the base64 decoder.
        return parse_json(cat("{\"bytes\": \"", c.text.substr(start, c.pos - start), "\"}"));
    }
    std::string w = c.name("a value");
    if (w == "true" || w == "false") return value(w == "true");
    if (w == "null") return value();
    if (w == "inf" || w == "nan") return value(*to_double(w));
    return value(std::move(w));
}

dynamic_dim parse_dim(cursor& c) {
    if (is_digit(c.peek())) {
        std::size_t n = c.integer("a dimension");
        return {n, n, {}, {}};
    }
    dynamic_dim d;
    d.symbol = c.name("a dimension");
    if (d.symbol == "?") d.symbol.clear();
    c.expect("[");
    d.min = c.integer("a minimum size");
    c.expect("..");
    d.max = c.eat("inf") ? unbounded_dim : c.integer("a maximum size or 'inf'");
    if (c.eat(":")) {
        do d.optimals.push_back(c.integer("an optimal size"));
        while (c.eat(","));
    }
    c.expect("]");
    return d;
}

std::vector<std::size_t> parse_sizes(cursor& c) {
    std::vector<std::size_t> v;
    c.expect("{");
    if (c.eat("}")) return v;
    do v.push_back(c.integer("a size"));
    while (c.eat(","));
    c.expect("}");
    return v;
}

// "float_type, {2, 3}, {3, 1}" (strides may be left out: standard), "float_type, {batch[1..8], 3}",
// "tuple_type, {<shape>; <shape>}", "sequence_type, {<shape>}", "optional_type, {<shape>}", and an
// element type of unknown rank "float_type, {...}".
shape parse_shape(cursor& c) {
    c.skip();
    std::size_t at = c.pos;
    std::string type_name = c.name("a type name");
    dtype t{};
    try {
        t = parse_dtype(type_name);
    } catch (const error&) {
        c.pos = at;
        c.expected("a type name");
    }
    c.expect(",");
    if (t == dtype::tuple) {
        std::vector<shape> subs;
        c.expect("{");
        if (!c.eat("}")) {
            do subs.push_back(parse_shape(c));
            while (c.eat(";"));
            c.expect("}");
        }
        return shape(std::move(subs));
    }
    if (t == dtype::sequence || t == dtype::optional) {
        c.expect("{");
        shape element = parse_shape(c);
        c.expect("}");
        return t == dtype::sequence ? shape::sequence(std::move(element)) : shape::optional(std::move(element));
    }
    std::vector<dynamic_dim> dims;
    c.expect("{");
    if (c.eat("...")) {
        c.expect("}");
        return shape::any_rank(t);
    }
    if (!c.eat("}")) {
        do dims.push_back(parse_dim(c));
        while (c.eat(","));
        c.expect("}");
    }
    bool fixed = std::all_of(dims.begin(), dims.end(), [](const auto& d) { return d.is_fixed() && d.symbol.empty(); });
    if (!fixed) return shape(t, std::move(dims));
    std::vector<std::size_t> lens;
    for (const auto& d : dims) lens.push_back(d.min);
    if (!c.eat(",")) return shape(t, lens);
    c.skip();
    std::size_t strides_at = c.pos;
    auto strides = parse_sizes(c);
    if (strides.size() != lens.size())
        c.error_at(strides_at, cat("expected ", lens.size(), " strides, found ", strides.size()));
    return shape(t, lens, strides);
}

// Rejects literal integers the dtype cannot hold (nothing is silently wrapped).
bool fits(dtype t, std::int64_t v) {
    if (t == dtype::bool_) return v == 0 || v == 1;
    std::size_t bits = dtype_bits(t);
    if (bits >= 64) return is_signed(t) || v >= 0;
    std::int64_t lo = is_signed(t) ? -(std::int64_t{1} << (bits - 1)) : 0;
    std::int64_t hi = is_signed(t) ? (std::int64_t{1} << (bits - 1)) - 1 : (std::int64_t{1} << bits) - 1;
    return v >= lo && v <= hi;
}

class parser {
public:
    explicit parser(std::string_view text) { split(text); }

    program run() {
        for (auto& [name, s] : sections_) ensure_parsed(name);
        return std::move(prog_);
    }

private:
    enum class state { pending, parsing, done };
    struct section {
        std::vector<std::size_t> lines;   // indices into lines_
        state st = state::pending;
    };
    struct named {
        instruction_ref ins;
        std::size_t line;
    };
    using scope = std::map<std::string, named, std::less<>>;

    program prog_;
    std::vector<std::string_view> lines_;
    std::map<std::string, section, std::less<>> sections_;

    // Splits the text into modules and creates them all first, so a module may call one defined
    // further down (the printer writes main first).
    void split(std::string_view text) {
        for (std::size_t start = 0; start <= text.size();) {
            std::size_t end = std::min(text.find('\n', start), text.size());
            std::string_view line = text.substr(start, end - start);
            if (line.ends_with('\r')) line.remove_suffix(1);
            lines_.push_back(line);
            start = end + 1;
        }
        std::string current = "main";
        sections_[current];
        bool main_declared = false;
        for (std::size_t i = 0; i < lines_.size(); ++i) {
            cursor c{lines_[i], i + 1};
            char first = c.peek();
            if (first == '\0' || first == '#') continue;
            if (!(c.eat("module:") && c.peek() == '"')) {
                sections_[current].lines.push_back(i);
                continue;
            }
            current = c.quoted();
            c.expect_end();
            bool is_main = current == "main" && !main_declared;
            if (!is_main && sections_.count(current)) fail("line ", i + 1, ": module '", current, "' is defined twice");
            if (current == "main") main_declared = true;
            else prog_.create_module(current);
            sections_[current];
        }
    }

    module& ensure_parsed(const std::string& name) {
        section& s = sections_.at(name);
        module& m = *prog_.find_module(name);
        if (s.st != state::pending) return m;
        s.st = state::parsing;
        scope names;
        for (std::size_t i : s.lines) {
            cursor c{lines_[i], i + 1};
            try {
                parse_line(c, m, names);
            } catch (const error& e) {
                std::string msg = e.what();
                if (msg.starts_with("line ")) throw;
                fail("line ", c.line, ": ", msg);
            }
        }
        s.st = state::done;
        return m;
    }

    void parse_line(cursor& c, module& m, scope& names) {
        c.skip();
        std::size_t name_at = c.pos;
        std::string lhs = c.name("an instruction name");
        if (auto it = names.find(lhs); it != names.end())
            c.error_at(name_at, cat("'", lhs, "' is defined twice (first on line ", it->second.line, ")"));
        c.expect("=");
        c.skip();
        std::size_t op_at = c.pos;
        std::string op = c.name("an op name");
        if (m.get_return() != m.end()) fail("instruction after @return");
        instruction_ref ins;
        if (op.starts_with("@param:")) {
            ins = parse_param(c, m, op.substr(7));
        } else if (op == "@literal") {
            ins = parse_literal(c, m);
        } else {
            if (op == "@param") c.error_at(op_at, "expected '@param:<name>'");
            ins = parse_op(c, m, names, op);
        }
        names[lhs] = {ins, c.line};
    }

    instruction_ref parse_param(cursor& c, module& m, const std::string& name) {
        if (name.empty()) c.expected("a parameter name after '@param:'");
        c.expect("->");
        shape s = parse_shape(c);
        c.expect_end();
        return m.add_parameter(name, s);
    }

    instruction_ref parse_literal(cursor& c, module& m) {
        std::vector<std::pair<std::string_view, std::size_t>> items;   // text and column
        std::vector<std::string> strings;
        c.expect("{");
        c.skip();
        if (c.peek() == '"') {
            do {
                c.skip();
                strings.push_back(c.quoted());
            } while (c.eat(","));
            c.expect("}");
        } else if (!c.eat("}")) {
            do {
                c.skip();
                std::size_t at = c.pos;
                items.emplace_back(c.number(), at);
                if (items.back().first.empty()) c.expected("a number");
            } while (c.eat(","));
            c.expect("}");
        }
        c.expect("->");
        shape s = parse_shape(c);
        c.expect_end();
        if (s.dynamic() || s.is_tuple() || s != s.as_standard())
            fail("a literal needs a static standard shape, not ", to_string(s));
        if (s.type() == dtype::string) items.resize(strings.size());   // counted below like numbers
        if (items.size() != s.elements())
            fail(items.size(), " values given for the ", s.elements(), " elements of ", to_string(s));
        if (s.type() == dtype::string) return m.add_literal(literal(from_strings(s, strings)));
        if (!strings.empty()) fail("strings given for a literal of ", to_string(s));
        if (is_float(s.type())) {
            std::vector<double> vals;
            for (auto [t, at] : items) {
                auto d = to_double(t);
                if (!d) c.error_at(at, cat("expected a number, found '", t, "'"));
                vals.push_back(*d);
            }
            return m.add_literal(literal(s, vals));
        }
        std::vector<std::int64_t> vals;
        for (auto [t, at] : items) {
            // uint64 values above int64's range travel as their bit pattern.
            auto u = s.type() == dtype::uint64 ? convert<std::uint64_t>(t) : std::nullopt;
            auto i = u ? std::optional<std::int64_t>(static_cast<std::int64_t>(*u)) : convert<std::int64_t>(t);
            if (!i || (!u && !fits(s.type(), *i)))
                c.error_at(at, cat("expected an integer that fits ", dtype_name(s.type()), ", found '", t, "'"));
            vals.push_back(*i);
        }
        return m.add_literal(literal(s, vals));
    }

    instruction_ref parse_op(cursor& c, module& m, const scope& names, const std::string& op) {
        value attrs = value_object{};
        if (c.eat("[") && !c.eat("]")) {
            do {
                std::string key = c.name("an attribute name");
                c.expect("=");
                attrs.set(key, parse_value(c));
            } while (c.eat(","));
            c.expect("]");
        }
        std::vector<instruction_ref> inputs;
        c.expect("(");
        if (!c.eat(")")) {
            do inputs.push_back(parse_ref(c, names));
            while (c.eat(","));
            c.expect(")");
        }
        std::vector<module*> mods;
        if (c.eat(",")) {
            c.expect("[");
            do mods.push_back(parse_module_ref(c));
            while (c.eat(","));
            c.expect("]");
        }
        std::optional<shape> recorded;
        if (op != "@return" && c.eat("->")) recorded = parse_shape(c);
        c.expect_end();
        if (op == "@return") return m.add_return(inputs);
        instruction_ref ins = m.add_instruction(make_op(op, attrs), inputs, mods);
        if (recorded && ins->get_shape() != *recorded)
            fail("recorded shape ", to_string(*recorded), " but ", to_string(ins->get_operator()), " computes ",
                 to_string(ins->get_shape()));
        return ins;
    }

    instruction_ref parse_ref(cursor& c, const scope& names) {
        c.skip();
        std::size_t at = c.pos;
        std::string n = c.name("an instruction name");
        auto it = names.find(n);
        if (it == names.end()) c.error_at(at, cat("undefined instruction '", n, "'"));
        return it->second.ins;
    }

    module* parse_module_ref(cursor& c) {
        c.skip();
        std::size_t at = c.pos;
        std::string n = c.name("a module name");
        auto it = sections_.find(n);
        if (it == sections_.end()) c.error_at(at, cat("undefined module '", n, "'"));
        if (it->second.st == state::parsing) c.error_at(at, cat("module '", n, "' calls itself"));
        return &ensure_parsed(n);
    }
};

}  // namespace

program parse_text(std::string_view text) { return parser(text).run(); }

program parse_text_file(const std::string& path) {
    check_input_file(path);
    std::ifstream f(path);
    if (!f) fail("cannot read '", path, "': ", std::strerror(errno));
    std::stringstream ss;
    ss << f.rdbuf();
    if (ss.str().empty()) fail(path, ": empty file");
    try {
        return parse_text(ss.str());
    } catch (const error& e) {
        fail(path, ": ", e.what());
    }
}

}  // namespace kiln
