// The string ops: string_convert (ONNX Cast to and from STRING), string_concat, string_equal
// (ONNX Equal on strings) and string_split. Strings are byte strings (UTF-8 by convention);
// nothing here decodes them. Only the reference computes run them (docs/ir.md, "Strings").
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ops/common.hpp"

namespace kiln::ops {
namespace {

const std::string* strings_of(const argument& a) { return a.as<std::string>(); }

void check_strings(std::span<const shape> in, std::size_t i) {
    if (in[i].type() != dtype::string) fail("input ", i, " is ", dtype_name(in[i].type()), "; expected a string tensor");
}

// The shortest decimal digits that read back to v in type t, and the decimal exponent of the
// first: 0.1f gives ("1", -1), not the digits of the float's exact value.
std::pair<std::string, int> shortest_digits(double v, dtype t) {
    char buf[64];
    std::string sci;
    if (t == dtype::float64 || t == dtype::float32) {
        auto r = t == dtype::float64 ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific)
                                     : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v), std::chars_format::scientific);
        sci.assign(buf, r.ptr);
    } else {
        // Narrower floats: the fewest digits whose value rounds back to v in t.
        for (int p = 0; p < 17; ++p) {
            std::snprintf(buf, sizeof buf, "%.*e", p, v);
            if (to_doubles(from_doubles(shape(t), std::vector<double>{std::strtod(buf, nullptr)}))[0] == v) break;
        }
        sci = buf;
    }
    std::size_t e = sci.find('e');
    std::string digits;
    for (std::size_t k = 0; k < e; ++k)
        if (std::isdigit(static_cast<unsigned char>(sci[k]))) digits += sci[k];
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    return {digits, std::atoi(sci.c_str() + e + 1)};
}

// A number as Cast writes it: integers in decimal, bool as True and False, floats as numpy
// (ONNX's reference) and Python write them: the shortest digits that identify the value in its
// type, plain for exponents from -4 to 15 ("0.1", "1000.0"), scientific otherwise ("1e+16",
// "1.5e-07"); NaN and the infinities as the spec names them ("NaN", "INF", "-INF").
std::string format_number(double v, dtype t) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
    std::string sign = std::signbit(v) ? "-" : "";
    if (v == 0) return sign + "0.0";
    auto [digits, exp] = shortest_digits(std::abs(v), t);
    if (exp >= -4 && exp < 16) {
        if (exp < 0) return sign + "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
        auto whole = static_cast<std::size_t>(exp) + 1;
        if (digits.size() <= whole) return sign + digits + std::string(whole - digits.size(), '0') + ".0";
        return sign + digits.substr(0, whole) + "." + digits.substr(whole);
    }
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return sign + digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + e;
}

std::string_view trim(std::string_view s) {
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
    while (!s.empty() && space(s.front())) s.remove_prefix(1);
    while (!s.empty() && space(s.back())) s.remove_suffix(1);
    return s;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
    return true;
}

// A string as a float, by the spec's rules: plain and scientific notation, and "INF", "+INF",
// "-INF", "NaN" in any case. Anything else is an error naming the string (the spec leaves it
// undefined; kiln does not guess).
double parse_float(const std::string& text) {
    std::string_view s = trim(text);
    std::string_view body = s.starts_with('+') || s.starts_with('-') ? s.substr(1) : s;
    bool negative = s.starts_with('-');
    if (iequals(body, "inf") || iequals(body, "infinity")) return negative ? -INFINITY : INFINITY;
    if (iequals(body, "nan")) return NAN;
    double v = 0;
    auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
    if (body.empty() || end != body.data() + body.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
        fail("cannot read \"", text, "\" as a number");
    // Out of double's range: strtod gives infinity for huge values and 0 for tiny ones.
    if (ec == std::errc::result_out_of_range) v = std::strtod(std::string(body).c_str(), nullptr);
    return negative ? -v : v;
}

// A string as an integer: decimal digits with an optional sign; a float such as "100.5" is
// truncated toward zero (the spec's example). Values beyond int64 saturate.
std::int64_t parse_integer(const std::string& text, bool is_unsigned) {
    std::string_view s = trim(text);
    if (s.starts_with('+')) s.remove_prefix(1);
    if (is_unsigned) {
        std::uint64_t u = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), u);
        if (!s.empty() && ec == std::errc() && end == s.data() + s.size()) return static_cast<std::int64_t>(u);
    } else {
        std::int64_t i = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
        if (!s.empty() && ec == std::errc() && end == s.data() + s.size()) return i;
    }
    double v = parse_float(text);
    if (std::isnan(v)) fail("cannot read \"", text, "\" as an integer");
    return cast<std::int64_t>(v);
}

bool parse_bool(const std::string& text) {
    std::string_view s = trim(text);
    if (iequals(s, "true")) return true;
    if (iequals(s, "false")) return false;
    return parse_float(text) != 0;
}

// ONNX Cast to and from STRING (other casts are `convert`). To string: see format_number. From
// string: see parse_float, parse_integer and parse_bool; the number is
// then converted to the target type as `convert` does (integers keep their low bits, floats
// round to nearest even, fp8 saturates).
struct string_convert {
    static constexpr std::string_view name = "string_convert";
    dtype target_type = dtype::string;
    auto attributes() { return fields(field("target_type", target_type)); }
    // A float's text depends on its type, so float inputs stay float32 under --fp16/--bf16.
    op_traits traits() const { return {.precision_sensitive = true, .strings = true}; }

    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1);
        check_static(in);
        if ((in[0].type() == dtype::string) == (target_type == dtype::string))
            fail("casts ", dtype_name(in[0].type()), " to ", dtype_name(target_type), "; one side must be a string");
        dtype number = target_type == dtype::string ? in[0].type() : target_type;
        if (!in[0].is_tensor() || dtype_bits(number) == 0) fail(dtype_name(number), " is not an element type");
        return {target_type, in[0].lens()};
    }

    argument compute(const shape& out, std::span<const argument> args) const {
        const shape& xs = args[0].get_shape();
        std::size_t n = xs.elements();
        if (target_type == dtype::string) {
            std::vector<std::string> r(n);
            if (is_float(xs.type())) {
                auto v = to_doubles(args[0]);
                for (std::size_t i = 0; i < n; ++i) r[i] = format_number(v[i], xs.type());
            } else {
                auto v = to_int64s(args[0]);
                bool u64 = xs.type() == dtype::uint64, b = xs.type() == dtype::bool_;
                for (std::size_t i = 0; i < n; ++i)
                    r[i] = b ? (v[i] ? "True" : "False")
                           : u64 ? std::to_string(static_cast<std::uint64_t>(v[i])) : std::to_string(v[i]);
            }
            return from_strings(out, r);
        }
        auto s = to_strings(args[0]);
        if (is_float(target_type)) {
            std::vector<double> v(n);
            for (std::size_t i = 0; i < n; ++i) v[i] = parse_float(s[i]);
            return from_doubles(out, v);
        }
        std::vector<std::int64_t> v(n);
        for (std::size_t i = 0; i < n; ++i)
            v[i] = target_type == dtype::bool_ ? parse_bool(s[i]) : parse_integer(s[i], !is_signed(target_type));
        return from_int64s(out, v);
    }
};
KILN_REGISTER_OP(string_convert)

// Two string tensors broadcast together, element by element through f(a, b) into an output of
// type t (string_concat, string_equal).
template <class T, class F>
argument broadcast_strings(const shape& out, std::span<const argument> args, F f) {
    shape a = broadcast_to(args[0].get_shape(), out.lens()), b = broadcast_to(args[1].get_shape(), out.lens());
    argument r(out);
    T* y = r.as<T>();
    std::size_t k = 0;
    for_each_index(out.lens(), [&](std::span<const std::size_t> idx) {
        y[k++] = f(strings_of(args[0])[a.index(idx)], strings_of(args[1])[b.index(idx)]);
    });
    return r;
}

shape broadcast_strings_shape(std::span<const shape> in, dtype out) {
    check_input_count(in, 2);
    check_static(in);
    check_strings(in, 0);
    check_strings(in, 1);
    return {out, broadcast_lens(in)};
}

// ONNX StringConcat: a + b, with numpy broadcasting.
struct string_concat {
    static constexpr std::string_view name = "string_concat";
    op_traits traits() const { return {.strings = true}; }
    shape compute_shape(std::span<const shape> in) const { return broadcast_strings_shape(in, dtype::string); }
    argument compute(const shape& out, std::span<const argument> args) const {
        return broadcast_strings<std::string>(out, args, [](const std::string& a, const std::string& b) { return a + b; });
    }
};
KILN_REGISTER_OP(string_concat)

// ONNX Equal on string tensors: byte-wise equality, with numpy broadcasting.
struct string_equal {
    static constexpr std::string_view name = "string_equal";
    op_traits traits() const { return {.strings = true}; }
    shape compute_shape(std::span<const shape> in) const { return broadcast_strings_shape(in, dtype::bool_); }
    argument compute(const shape& out, std::span<const argument> args) const {
        return broadcast_strings<bool>(out, args, [](const std::string& a, const std::string& b) { return a == b; });
    }
};
KILN_REGISTER_OP(string_equal)

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Python's str.split(delimiter, maxsplit), which the spec follows: with a delimiter, every
// occurrence splits (so "a--b" on "-" gives "a", "", "b"); without one, runs of whitespace split
// and leading or trailing whitespace gives no empty pieces. After maxsplit splits (< 0: no
// limit) the rest stays one piece, leading whitespace dropped.
std::vector<std::string> split(const std::string& s, const std::string& delimiter, std::int64_t maxsplit) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    auto more = [&] { return maxsplit < 0 || static_cast<std::int64_t>(out.size()) < maxsplit; };
    if (!delimiter.empty()) {
        for (std::size_t at; more() && (at = s.find(delimiter, pos)) != std::string::npos; pos = at + delimiter.size())
            out.push_back(s.substr(pos, at - pos));
        out.push_back(s.substr(pos));
        return out;
    }
    while (true) {
        while (pos < s.size() && is_space(s[pos])) ++pos;
        if (pos == s.size()) return out;
        if (!more()) {
            out.push_back(s.substr(pos));   // Python keeps the rest's trailing whitespace
            return out;
        }
        std::size_t end = pos;
        while (end < s.size() && !is_space(s[end])) ++end;
        out.push_back(s.substr(pos, end - pos));
        pos = end;
    }
}

// ONNX StringSplit: a tuple of Y (string, X's dims + [the most pieces any element has], each
// element's pieces padded with "") and Z (int64, X's dims: each element's number of pieces).
struct string_split {
    static constexpr std::string_view name = "string_split";
    std::string delimiter;
    std::int64_t maxsplit = -1;   // < 0: no limit
    auto attributes() { return fields(field("delimiter", delimiter), field("maxsplit", maxsplit)); }
    op_traits traits() const { return {.data_dependent = true, .strings = true}; }

    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1);
        check_static(in);
        check_strings(in, 0);
        std::vector<dynamic_dim> dims;
        for (auto l : in[0].lens()) dims.push_back({.min = l, .max = l});
        dims.push_back({.min = 0, .max = unbounded_dim});
        return shape(std::vector<shape>{shape(dtype::string, dims), shape(dtype::int64, in[0].lens())});
    }

    argument compute(const shape&, std::span<const argument> args) const {
        const shape& xs = args[0].get_shape();
        std::vector<std::vector<std::string>> pieces;
        std::size_t most = 0;
        for (const auto& s : to_strings(args[0])) {
            pieces.push_back(split(s, delimiter, maxsplit));
            most = std::max(most, pieces.back().size());
        }
        std::vector<std::size_t> lens = xs.lens();
        lens.push_back(most);
        argument y(shape(dtype::string, lens)), z(shape(dtype::int64, xs.lens()));
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            z.as<std::int64_t>()[i] = static_cast<std::int64_t>(pieces[i].size());
            std::move(pieces[i].begin(), pieces[i].end(), y.as<std::string>() + i * most);
        }
        return argument(std::vector<argument>{y, z});
    }
};
KILN_REGISTER_OP(string_split)

}  // namespace
}  // namespace kiln::ops
