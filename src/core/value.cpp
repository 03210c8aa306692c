#include "core/value.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>

#include "core/error.hpp"
#include "core/limits.hpp"

namespace kiln {

std::string value::kind_name() const {
    static const char* names[] = {"null", "bool", "int", "float", "string", "bytes", "array", "object"};
    return names[v_.index()];
}

namespace {
[[noreturn]] void wrong_kind(const value& v, const char* want) {
    fail("expected ", want, " value, got ", v.kind_name(), " ", to_string(v));
}
}  // namespace

bool value::as_bool() const {
    if (auto* b = std::get_if<bool>(&v_)) return *b;
    if (auto* i = std::get_if<std::int64_t>(&v_); i && (*i == 0 || *i == 1)) return *i == 1;
    wrong_kind(*this, "bool");
}

std::int64_t value::as_int() const {
    if (auto* i = std::get_if<std::int64_t>(&v_)) return *i;
    if (auto* d = std::get_if<double>(&v_); d && std::trunc(*d) == *d && std::abs(*d) < 9.2e18)
        return static_cast<std::int64_t>(*d);
    if (auto* b = std::get_if<bool>(&v_)) return *b ? 1 : 0;
    wrong_kind(*this, "int");
}

double value::as_float() const {
    if (auto* d = std::get_if<double>(&v_)) return *d;
    if (auto* i = std::get_if<std::int64_t>(&v_)) return static_cast<double>(*i);
    if (auto* s = std::get_if<std::string>(&v_)) {
        if (*s == "inf") return INFINITY;
        if (*s == "-inf") return -INFINITY;
        if (*s == "nan" || *s == "-nan") return *s == "nan" ? NAN : -NAN;
    }
    wrong_kind(*this, "float");
}

#define KILN_VALUE_GET(T, fn, what)                                   \
    const T& value::fn() const {                                      \
        if (auto* p = std::get_if<T>(&v_)) return *p;                 \
        wrong_kind(*this, what);                                      \
    }
KILN_VALUE_GET(std::string, as_string, "string")
KILN_VALUE_GET(value_bytes, as_bytes, "bytes")
KILN_VALUE_GET(value_array, as_array, "array")
KILN_VALUE_GET(value_object, as_object, "object")
#undef KILN_VALUE_GET

value_array& value::as_array() {
    if (is_null()) v_ = value_array{};
    if (auto* p = std::get_if<value_array>(&v_)) return *p;
    wrong_kind(*this, "array");
}

value_object& value::as_object() {
    if (is_null()) v_ = value_object{};
    if (auto* p = std::get_if<value_object>(&v_)) return *p;
    wrong_kind(*this, "object");
}

bool value::contains(std::string_view key) const {
    if (!is_object()) return false;
    for (const auto& [k, v] : as_object())
        if (k == key) return true;
    return false;
}

const value& value::at(std::string_view key) const {
    for (const auto& [k, v] : as_object())
        if (k == key) return v;
    fail("missing key '", key, "' in ", to_string(*this));
}

void value::set(std::string_view key, value v) {
    auto& o = as_object();
    for (auto& [k, old] : o)
        if (k == key) {
            old = std::move(v);
            return;
        }
    o.emplace_back(std::string(key), std::move(v));
}

std::size_t value::hash() const {
    std::size_t h = v_.index() * 0x9e3779b97f4a7c15ull;
    auto mix = [&](std::size_t x) { h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::monostate>) {
            } else if constexpr (std::is_same_v<T, value_bytes>) {
                for (auto b : x.data) mix(b);
            } else if constexpr (std::is_same_v<T, value_array>) {
                for (const auto& e : x) mix(e.hash());
            } else if constexpr (std::is_same_v<T, value_object>) {
                for (const auto& [k, e] : x) mix(std::hash<std::string>{}(k) ^ e.hash());
            } else {
                mix(std::hash<T>{}(x));
            }
        },
        v_);
    return h;
}

namespace {

std::string number_to_string(double d) {
    if (std::isnan(d)) return std::signbit(d) ? "-nan" : "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof(buf), d);
    std::string s(buf, r.ptr);
    // Keep a float recognisable as a float when printed back.
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
}

bool is_bare_word(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '.')) return false;
    return s != "inf" && s != "nan" && s != "true" && s != "false" && s != "null";
}

std::string quote(const std::string& s) {
    std::string r = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') r += '\\';
        if (c == '\n') {
            r += "\\n";
            continue;
        }
        r += c;
    }
    return r + "\"";
}

const char* b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const std::vector<std::uint8_t>& d) {
    std::string r;
    for (std::size_t i = 0; i < d.size(); i += 3) {
        std::uint32_t n = d[i] << 16;
        if (i + 1 < d.size()) n |= d[i + 1] << 8;
        if (i + 2 < d.size()) n |= d[i + 2];
        r += b64[(n >> 18) & 63];
        r += b64[(n >> 12) & 63];
        r += i + 1 < d.size() ? b64[(n >> 6) & 63] : '=';
        r += i + 2 < d.size() ? b64[n & 63] : '=';
    }
    return r;
}

std::vector<std::uint8_t> unbase64(std::string_view s) {
    std::vector<std::uint8_t> r;
    std::uint32_t acc = 0;
    int bits = 0;
    for (char c : s) {
        if (c == '=') break;
        const char* p = std::strchr(b64, c);
        if (!p || !c) fail("invalid base64 character '", c, "'");
        acc = (acc << 6) | static_cast<std::uint32_t>(p - b64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            r.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xff));
        }
    }
    return r;
}

}  // namespace

std::string to_string(const value& v) {
    return std::visit(
        [&](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::monostate>) return "null";
            else if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
            else if constexpr (std::is_same_v<T, std::int64_t>) return std::to_string(x);
            else if constexpr (std::is_same_v<T, double>) return number_to_string(x);
            else if constexpr (std::is_same_v<T, std::string>) return is_bare_word(x) ? x : quote(x);
            else if constexpr (std::is_same_v<T, value_bytes>) return "bytes:" + base64(x.data);
            else if constexpr (std::is_same_v<T, value_array>) {
                std::string r = "{";
                for (std::size_t i = 0; i < x.size(); ++i) r += (i ? ", " : "") + to_string(x[i]);
                return r + "}";
            } else {
                std::string r = "{";
                for (std::size_t i = 0; i < x.size(); ++i)
                    r += (i ? ", " : "") + (is_bare_word(x[i].first) ? x[i].first : quote(x[i].first)) + ": " +
                         to_string(x[i].second);
                return r + "}";
            }
        },
        v.data());
}

namespace {

void json_write(const value& v, std::string& out, int indent, int depth) {
    auto newline = [&](int d) {
        if (indent < 0) return;
        out += '\n';
        out.append(static_cast<std::size_t>(indent * d), ' ');
    };
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::monostate>) out += "null";
            else if constexpr (std::is_same_v<T, bool>) out += x ? "true" : "false";
            else if constexpr (std::is_same_v<T, std::int64_t>) out += std::to_string(x);
            else if constexpr (std::is_same_v<T, double>) {
                std::string s = number_to_string(x);
                out += std::isfinite(x) ? s : "\"" + s + "\"";
            } else if constexpr (std::is_same_v<T, std::string>) out += quote(x);
            else if constexpr (std::is_same_v<T, value_bytes>) out += "{\"bytes\": \"" + base64(x.data) + "\"}";
            else if constexpr (std::is_same_v<T, value_array>) {
                out += '[';
                for (std::size_t i = 0; i < x.size(); ++i) {
                    if (i) out += indent < 0 ? ", " : ",";
                    newline(depth + 1);
                    json_write(x[i], out, indent, depth + 1);
                }
                if (!x.empty()) newline(depth);
                out += ']';
            } else {
                out += '{';
                for (std::size_t i = 0; i < x.size(); ++i) {
                    if (i) out += indent < 0 ? ", " : ",";
                    newline(depth + 1);
                    out += quote(x[i].first) + ": ";
                    json_write(x[i].second, out, indent, depth + 1);
                }
                if (!x.empty()) newline(depth);
                out += '}';
            }
        },
        v.data());
}

struct json_parser {
    std::string_view s;
    std::size_t pos = 0;
    int depth = 0;  // of the arrays and objects being read

    [[noreturn]] void error(const std::string& what) const { fail("JSON: ", what, " at offset ", pos); }
    void skip() {
        while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
    }
    bool eat(char c) {
        skip();
        if (pos < s.size() && s[pos] == c) {
            ++pos;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!eat(c)) error(std::string("expected '") + c + "'");
    }
    std::string parse_string() {
        expect('"');
        std::string r;
        while (pos < s.size() && s[pos] != '"') {
            char c = s[pos++];
            if (c == '\\') {
                if (pos >= s.size()) error("unterminated escape");
                char e = s[pos++];
                switch (e) {
                case 'n': r += '\n'; break;
                case 't': r += '\t'; break;
                case 'r': r += '\r'; break;
                case 'b': r += '\b'; break;
                case 'f': r += '\f'; break;
                case 'u': {
                    if (pos + 4 > s.size()) error("short \\u escape");
                    unsigned cp = 0;
                    auto [end, ec] = std::from_chars(s.data() + pos, s.data() + pos + 4, cp, 16);
                    if (ec != std::errc() || end != s.data() + pos + 4) error("bad \\u escape");
                    pos += 4;
                    if (cp < 0x80) r += static_cast<char>(cp);
                    else if (cp < 0x800) {
                        r += static_cast<char>(0xC0 | (cp >> 6));
                        r += static_cast<char>(0x80 | (cp & 63));
                    } else {
                        r += static_cast<char>(0xE0 | (cp >> 12));
                        r += static_cast<char>(0x80 | ((cp >> 6) & 63));
                        r += static_cast<char>(0x80 | (cp & 63));
                    }
                    break;
                }
                default: r += e;
                }
            } else {
                r += c;
            }
        }
        expect('"');
        return r;
    }
    value parse() {
        skip();
        if (pos >= s.size()) error("unexpected end");
        char c = s[pos];
        if ((c == '{' || c == '[') && depth >= max_value_depth)
            error(cat("nesting deeper than ", max_value_depth, " levels"));
        if (c == '{') {
            ++pos;
            ++depth;
            value_object o;
            if (!eat('}')) {
                do {
                    skip();
                    std::string k = parse_string();
                    expect(':');
                    o.emplace_back(std::move(k), parse());
                } while (eat(','));
                expect('}');
            }
            --depth;
            if (o.size() == 1 && o[0].first == "bytes" && o[0].second.is_string())
                return value(value_bytes{unbase64(o[0].second.as_string())});
            return value(std::move(o));
        }
        if (c == '[') {
            ++pos;
            ++depth;
            value_array a;
            if (!eat(']')) {
                do a.push_back(parse());
                while (eat(','));
                expect(']');
            }
            --depth;
            return value(std::move(a));
        }
        if (c == '"') return value(parse_string());
        for (auto [word, v] : {std::pair<const char*, value>{"true", value(true)}, {"false", value(false)},
                               {"null", value()}}) {
            std::string_view w(word);
            if (s.substr(pos, w.size()) == w) {
                pos += w.size();
                return v;
            }
        }
        std::size_t start = pos;
        while (pos < s.size() && (std::isdigit(static_cast<unsigned char>(s[pos])) || std::strchr("+-.eE", s[pos]))) ++pos;
        std::string_view num = s.substr(start, pos - start);
        if (num.empty()) error("unexpected character");
        std::int64_t i = 0;
        auto r = std::from_chars(num.data(), num.data() + num.size(), i);
        if (r.ec == std::errc() && r.ptr == num.data() + num.size()) return value(i);
        double d = 0;
        auto rd = std::from_chars(num.data(), num.data() + num.size(), d);
        if (rd.ec != std::errc() || rd.ptr != num.data() + num.size()) error("bad number");
        return value(d);
    }
};

}  // namespace

std::string to_json(const value& v, int indent) {
    std::string out;
    json_write(v, out, indent, 0);
    return out;
}

value parse_json(std::string_view text) {
    json_parser p{text};
    value v = p.parse();
    p.skip();
    if (p.pos != text.size()) p.error("trailing characters");
    return v;
}

}  // namespace kiln
