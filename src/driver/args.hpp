// Command line parsing for the kiln driver: each command declares its options once, and that
// one table gives the parser, the checks and the --help text.
#pragma once
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::driver {

// A mistake in how kiln was called (exit status 2); other errors exit with 1.
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct option_spec {
    enum arity_t { flag, one, many };   // many: every following word up to the next option
    std::vector<std::string> names;     // "--seed", or "--list", "-l"
    arity_t arity = flag;
    std::string metavar;                // "N", "[NAME...]" (for the help text)
    std::string help;
    bool repeatable = false;            // may be given more than once (each use kept apart)
};

struct command_spec {
    std::string name;          // "run"
    std::string summary;       // one line, for `kiln --help`
    std::string positional;    // "FILE", "NAME" or "" when the command takes none
    bool positional_required = true;
    std::string description;   // a paragraph, for `kiln NAME --help`
    std::vector<option_spec> options;
    std::vector<std::string> examples;
};

// The parsed command line of one command. Options are keyed by their first name.
class parsed_args {
public:
    bool has(const std::string& opt) const { return values_.count(opt) > 0; }
    // The values of every use of `opt` (one list per use); empty when not given.
    const std::vector<std::vector<std::string>>& uses(const std::string& opt) const;
    // The value of a one-valued option, or `fallback` when not given.
    std::string get(const std::string& opt, const std::string& fallback = "") const;
    const std::optional<std::string>& positional() const { return positional_; }

private:
    friend parsed_args parse_args(const command_spec& cmd, std::span<const std::string> words);
    std::map<std::string, std::vector<std::vector<std::string>>> values_;
    std::optional<std::string> positional_;
};

// Throws usage_error naming the offending word and pointing to `kiln CMD --help`.
// --help/-h are handled by the caller before parsing.
parsed_args parse_args(const command_spec& cmd, std::span<const std::string> words);

std::string help_text(const command_spec& cmd);

// Parses a non-negative integer given to `what` ("--seed"), or throws usage_error.
std::size_t parse_count(const std::string& word, const std::string& what);
// Parses a finite non-negative number given to `what` ("--rtol"), or throws usage_error.
double parse_nonnegative(const std::string& word, const std::string& what);

// Names among `candidates` close to `word` (edit distance or substring), best first.
std::vector<std::string> close_matches(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace kiln::driver
