#include "driver/args.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace kiln::driver {

namespace {

bool is_option_word(const std::string& w) {
    if (w.size() < 2 || w[0] != '-') return false;
    // Negative numbers are values, not options.
    return !(std::isdigit(static_cast<unsigned char>(w[1])) || w[1] == '.');
}

const option_spec* find_option(const command_spec& cmd, const std::string& name) {
    for (const auto& o : cmd.options)
        if (std::find(o.names.begin(), o.names.end(), name) != o.names.end()) return &o;
    return nullptr;
}

std::string see_help(const command_spec& cmd) { return "; see 'kiln " + cmd.name + " --help'"; }

[[noreturn]] void unknown_option(const command_spec& cmd, const std::string& word) {
    std::vector<std::string> names{"--help"};
    for (const auto& o : cmd.options)
        names.insert(names.end(), o.names.begin(), o.names.end());
    std::string msg = "unknown option '" + word + "' for 'kiln " + cmd.name + "'";
    auto close = close_matches(word, names);
    if (!close.empty()) msg += " (did you mean '" + close.front() + "'?)";
    throw usage_error(msg + see_help(cmd));
}

// The values of option `o` (spelt `word`) at words[i]; advances i past the words it takes.
std::vector<std::string> option_values(const command_spec& cmd, const option_spec& o, const std::string& word,
                                       const std::optional<std::string>& inline_value,
                                       std::span<const std::string> words, std::size_t& i) {
    std::vector<std::string> vals;
    if (o.arity == option_spec::flag && inline_value) throw usage_error(word + " takes no value" + see_help(cmd));
    if (inline_value) vals.push_back(*inline_value);
    if (o.arity == option_spec::one && !inline_value) {
        if (i + 1 >= words.size()) throw usage_error(word + " needs a value (" + o.metavar + ")" + see_help(cmd));
        vals.push_back(words[++i]);
    }
    if (o.arity == option_spec::many)
        while (i + 1 < words.size() && !is_option_word(words[i + 1]) && words[i + 1] != "--") vals.push_back(words[++i]);
    return vals;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

}  // namespace

const std::vector<std::vector<std::string>>& parsed_args::uses(const std::string& opt) const {
    static const std::vector<std::vector<std::string>> none;
    auto it = values_.find(opt);
    return it == values_.end() ? none : it->second;
}

std::string parsed_args::get(const std::string& opt, const std::string& fallback) const {
    const auto& u = uses(opt);
    return u.empty() || u.back().empty() ? fallback : u.back().front();
}

parsed_args parse_args(const command_spec& cmd, std::span<const std::string> words) {
    parsed_args r;
    std::string greedy;   // the last option that took a list of words, for a hint below
    for (std::size_t i = 0; i < words.size(); ++i) {
        std::string word = words[i];
        if (word == "--" && i + 1 < words.size()) {
            word = words[++i];
        } else if (is_option_word(word)) {
            std::optional<std::string> inline_value;
            if (auto eq = word.find('='); word.rfind("--", 0) == 0 && eq != std::string::npos) {
                inline_value = word.substr(eq + 1);
                word = word.substr(0, eq);
            }
            const option_spec* o = find_option(cmd, word);
            if (!o) unknown_option(cmd, word);
            const std::string& key = o->names.front();
            if (r.has(key) && !o->repeatable)
                throw usage_error(word + " is given twice" + see_help(cmd));
            auto vals = option_values(cmd, *o, word, inline_value, words, i);
            if (o->arity == option_spec::many && !vals.empty()) greedy = word;
            r.values_[key].push_back(std::move(vals));
            continue;
        }
        if (cmd.positional.empty() || r.positional_)
            throw usage_error("unexpected argument '" + word + "'" + see_help(cmd));
        r.positional_ = word;
    }
    if (!r.positional_ && cmd.positional_required && !cmd.positional.empty()) {
        std::string msg = "'kiln " + cmd.name + "' needs " + cmd.positional;
        if (!greedy.empty()) msg += " (" + greedy + " takes the words after it; put " + cmd.positional + " first)";
        throw usage_error(msg + see_help(cmd));
    }
    return r;
}

std::string help_text(const command_spec& cmd) {
    std::string s = "usage: kiln " + cmd.name;
    if (!cmd.positional.empty()) s += cmd.positional_required ? " " + cmd.positional : " [" + cmd.positional + "]";
    s += " [options]\n\n" + cmd.description + "\n\noptions:\n";
    std::vector<std::pair<std::string, std::string>> rows{{"-h, --help", "print this help"}};
    for (const auto& o : cmd.options) {
        std::string left;
        for (const auto& n : o.names) left += (left.empty() ? "" : ", ") + n;
        if (!o.metavar.empty()) left += " " + o.metavar;
        rows.emplace_back(left, o.help);
    }
    std::size_t width = 0;
    for (const auto& [l, h] : rows) width = std::max(width, l.size());
    for (const auto& [l, h] : rows) {
        s += "  " + l + std::string(width - l.size() + 2, ' ');
        // Continuation lines of a long help text line up under its first line.
        for (char c : h) s += c == '\n' ? "\n" + std::string(width + 4, ' ') : std::string(1, c);
        s += "\n";
    }
    if (!cmd.examples.empty()) {
        s += "\nexamples:\n";
        for (const auto& e : cmd.examples) s += "  " + e + "\n";
    }
    return s;
}

std::size_t parse_count(const std::string& word, const std::string& what) {
    std::size_t n = 0;
    auto r = std::from_chars(word.data(), word.data() + word.size(), n);
    if (word.empty() || r.ec != std::errc() || r.ptr != word.data() + word.size())
        throw usage_error(what + " expects a non-negative integer, got '" + word + "'");
    return n;
}

double parse_nonnegative(const std::string& word, const std::string& what) {
    char* end = nullptr;
    double v = std::strtod(word.c_str(), &end);
    if (word.empty() || end != word.c_str() + word.size() || !std::isfinite(v) || v < 0)
        throw usage_error(what + " expects a non-negative number, got '" + word + "'");
    return v;
}

std::vector<std::string> close_matches(const std::string& word, const std::vector<std::string>& candidates) {
    std::vector<std::pair<std::size_t, std::string>> scored;
    std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    for (const auto& c : candidates) {
        std::size_t d = edit_distance(word, c);
        bool contains = word.size() >= 3 && c.find(word) != std::string::npos;
        if (d <= limit || contains) scored.emplace_back(contains ? std::min(d, limit) : d, c);
    }
    std::stable_sort(scored.begin(), scored.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<std::string> r;
    for (std::size_t i = 0; i < scored.size() && i < 5; ++i) r.push_back(scored[i].second);
    return r;
}

}  // namespace kiln::driver
