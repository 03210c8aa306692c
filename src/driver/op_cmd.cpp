// kiln op: the registered ops, or one op's attributes with their defaults.
#include <iostream>

#include "core/error.hpp"
#include "core/operation.hpp"
#include "driver/commands.hpp"

namespace kiln::driver {

namespace {

int list_ops() {
    for (const auto& name : registered_ops()) std::cout << name << "\n";
    return 0;
}

int show_op(const std::string& name) {
    if (!has_op(name)) {
        std::string msg = "unknown op '" + name + "'";
        auto close = close_matches(name, registered_ops());
        for (std::size_t i = 0; i < close.size(); ++i) msg += (i ? ", " : "; did you mean: ") + close[i];
        fail(msg, close.empty() ? "" : "?", " ('kiln op --list' lists every op)");
    }
    std::cout << to_json(make_op(name).attributes(), 2) << "\n";
    return 0;
}

int run_op(const parsed_args& args) {
    bool list = args.has("--list");
    if (list == args.positional().has_value())
        throw usage_error("give either an op NAME or --list; see 'kiln op --help'");
    return list ? list_ops() : show_op(*args.positional());
}

}  // namespace

command op_command() {
    command_spec s;
    s.name = "op";
    s.summary = "list the registered ops, or show one op's attributes";
    s.positional = "NAME";
    s.positional_required = false;
    s.description =
        "With --list, prints every registered op, one per line, sorted (the builtins @literal,\n"
        "@param and @return included). With NAME, prints that op's attributes and their default\n"
        "values as JSON; an unknown NAME is an error that lists the closest op names.";
    s.options = {{{"--list", "-l"}, option_spec::flag, "", "list every registered op"}};
    s.examples = {"kiln op --list", "kiln op softmax"};
    return {s, run_op};
}

}  // namespace kiln::driver
