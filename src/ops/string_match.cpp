// String ops that read the text: string_normalizer (ONNX StringNormalizer) and regex_full_match
// (ONNX RegexFullMatch). Case mapping decodes UTF-8; regexes run std::regex (ECMAScript), whose
// differences from the RE2 syntax the spec names are refused at compile time (see below).
#include <pthread.h>

#include <clocale>
#include <exception>
#include <cwctype>
#include <locale.h>
#include <regex>
#include <unordered_set>

#include "ops/common.hpp"

namespace kiln::ops {
namespace {

// Unicode's simple case mapping, from the C.UTF-8 locale (glibc's is locale-independent, as
// ONNX Runtime's default locale is for everything but Turkish, Azeri and Lithuanian i's).
std::wint_t map_case(std::wint_t c, bool upper) {
    static locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", nullptr);
    if (c < 0x80) return upper ? std::towupper(c) : std::towlower(c);
    if (!utf8) fail("changing the case of non-ASCII text needs the C.UTF-8 locale, which this system lacks");
    return upper ? towupper_l(c, utf8) : towlower_l(c, utf8);
}

// The UTF-8 sequence at s[i] as a code point and its length; an invalid byte stands for itself.
std::pair<std::uint32_t, std::size_t> decode(const std::string& s, std::size_t i) {
    auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = b(i);
    std::size_t n = c >= 0xF0 && c < 0xF8 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 1;
    if (c >= 0xF8) n = 1;
    if (n == 1 || i + n > s.size()) return {c, 1};
    std::uint32_t cp = c & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(i + k) & 0xC0) != 0x80) return {c, 1};
        cp = cp << 6 | (b(i + k) & 0x3F);
    }
    return {cp, n};
}

void encode(std::uint32_t cp, std::string& out) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | cp >> 6);
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | cp >> 12);
        out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | cp >> 18);
        out += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
        out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

std::string change_case(const std::string& s, bool upper) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        auto [cp, n] = decode(s, i);
        if (n == 1 && cp >= 0x80) out += s[i];   // an invalid byte stays as it is
        else encode(static_cast<std::uint32_t>(map_case(static_cast<std::wint_t>(cp), upper)), out);
        i += n;
    }
    return out;
}

// ONNX StringNormalizer on [C] or [1, C]: elements equal to a stopword are removed (compared
// case-insensitively unless is_case_sensitive), then the rest are lowercased, uppercased or kept
// (case_change_action LOWER, UPPER, NONE). When nothing is left the output is one empty string
// ([1] or [1, 1]), as the spec says.
struct string_normalizer {
    static constexpr std::string_view name = "string_normalizer";
    std::string case_change_action = "NONE";
    bool is_case_sensitive = false;
    std::string locale;
    std::vector<std::string> stopwords;
    auto attributes() {
        return fields(field("case_change_action", case_change_action), field("is_case_sensitive", is_case_sensitive),
                      field("locale", locale), field("stopwords", stopwords));
    }
    op_traits traits() const { return {.data_dependent = true, .strings = true}; }

    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1);
        check_static(in);
        if (in[0].type() != dtype::string) fail("input 0 is ", dtype_name(in[0].type()), "; expected strings");
        const auto& l = in[0].lens();
        if (l.empty() || l.size() > 2 || (l.size() == 2 && l[0] != 1))
            fail("input 0 is ", lens_to_string(l), "; expected [C] or [1, C]");
        if (case_change_action != "NONE" && case_change_action != "LOWER" && case_change_action != "UPPER")
            fail("case_change_action='", case_change_action, "'; expected NONE, LOWER or UPPER");
        for (std::string_view special : {"tr", "az", "lt"})
            if (locale.starts_with(special))
                fail("locale='", locale, "': its special case rules for i are not implemented (Unicode's default mapping is)");
        dynamic_dim c{.min = 1, .max = std::max<std::size_t>(l.back(), 1)};
        if (l.size() == 1) return {dtype::string, std::vector<dynamic_dim>{c}};
        return {dtype::string, std::vector<dynamic_dim>{{.min = 1, .max = 1}, c}};
    }

    argument compute(const shape&, std::span<const argument> args) const {
        auto fold = [&](const std::string& s) { return is_case_sensitive ? s : change_case(s, false); };
        std::unordered_set<std::string> stops;
        for (const auto& w : stopwords) stops.insert(fold(w));
        std::vector<std::string> kept;
        for (const auto& s : to_strings(args[0])) {
            if (stops.count(fold(s))) continue;
            kept.push_back(case_change_action == "NONE" ? s : change_case(s, case_change_action == "UPPER"));
        }
        if (kept.empty()) kept.emplace_back();
        std::vector<std::size_t> lens{kept.size()};
        if (args[0].get_shape().ndim() == 2) lens.insert(lens.begin(), 1);
        return from_strings(shape(dtype::string, lens), kept);
    }
};
KILN_REGISTER_OP(string_normalizer)

// The longest string regex_full_match takes, and the stack its matching runs on: libstdc++'s
// std::regex matches by recursion, up to about 1.5 KB of stack per character for nested groups
// (measured), more than a caller's thread may have; 64 MB holds 40,000 characters of such patterns.
constexpr std::size_t max_regex_input = 10000;
constexpr std::size_t regex_stack_bytes = std::size_t{64} << 20;

// Runs f() on a thread of its own with a stack of `bytes` (virtual: only touched pages are used),
// rethrowing what it throws.
template <class F>
void on_own_stack(F& f, std::size_t bytes) {
    struct job {
        F* f;
        std::exception_ptr error;
    } j{&f, nullptr};
    void* (*run)(void*) = [](void* p) -> void* {
        auto* jp = static_cast<job*>(p);
        try {
            (*jp->f)();
        } catch (...) {
            jp->error = std::current_exception();
        }
        return nullptr;
    };
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, bytes);
    pthread_t t;
    int rc = pthread_create(&t, &attr, run, &j);
    pthread_attr_destroy(&attr);
    if (rc != 0) fail("cannot start the thread regex matching runs on (error ", rc, ")");
    pthread_join(t, nullptr);
    if (j.error) std::rethrow_exception(j.error);
}

// RE2 syntax that std::regex's ECMAScript grammar reads differently or not at all: refused, so a
// pattern never silently means something else. (ECMAScript's extras, such as lookahead and
// backreferences, RE2 refuses; kiln takes them.)
void check_re2_subset(const std::string& pattern) {
    for (std::size_t i = 0; i + 1 < pattern.size(); ++i) {
        if (pattern[i] == '\\') {
            char c = pattern[i + 1];
            if (std::string_view("pPAzQEC").find(c) != std::string_view::npos)
                fail("pattern uses RE2's \\", c, ", which std::regex (ECMAScript) does not have");
            ++i;
        } else if (pattern[i] == '(' && pattern[i + 1] == '?' && i + 2 < pattern.size()) {
            char c = pattern[i + 2];
            if (c != ':' && c != '=' && c != '!')
                fail("pattern uses RE2's (?", c, "...) (flags or named groups), which std::regex (ECMAScript) does not have");
        }
    }
}

std::regex compile_regex(const std::string& pattern) {
    check_re2_subset(pattern);
    try {
        return std::regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        fail("pattern \"", pattern, "\" is not a valid regular expression: ", e.what());
    }
}

// ONNX RegexFullMatch: whether each string matches `pattern` as a whole.
struct regex_full_match {
    static constexpr std::string_view name = "regex_full_match";
    std::string pattern;
    auto attributes() { return fields(field("pattern", pattern)); }
    op_traits traits() const { return {.strings = true}; }

    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1);
        check_static(in);
        if (in[0].type() != dtype::string) fail("input 0 is ", dtype_name(in[0].type()), "; expected strings");
        compile_regex(pattern);
        return {dtype::bool_, in[0].lens()};
    }

    argument compute(const shape& out, std::span<const argument> args) const {
        std::regex re = compile_regex(pattern);
        auto s = to_strings(args[0]);
        argument r(out);
        for (std::size_t i = 0; i < s.size(); ++i)
            if (s[i].size() > max_regex_input)
                fail("element ", i, " has ", s[i].size(), " bytes; regex_full_match takes strings of at most ",
                     max_regex_input);
        auto match = [&] {
            for (std::size_t i = 0; i < s.size(); ++i) r.as<bool>()[i] = std::regex_match(s[i], re);
        };
        on_own_stack(match, regex_stack_bytes);
        return r;
    }
};
KILN_REGISTER_OP(regex_full_match)

}  // namespace
}  // namespace kiln::ops
