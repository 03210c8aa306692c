// kiln onnx: what the ONNX frontend supports.
#include <iostream>

#include "driver/commands.hpp"
#include "frontends/onnx/onnx.hpp"

namespace kiln::driver {

namespace {

int run_onnx(const parsed_args& args) {
    if (!args.has("--list")) throw usage_error("'kiln onnx' needs --list; see 'kiln onnx --help'");
    auto ops = onnx_supported_ops();
    for (const auto& op : ops) std::cout << op << "\n";
    std::cerr << ops.size() << " ONNX op types supported\n";   // stderr, so that stdout is the bare list
    return 0;
}

}  // namespace

command onnx_command() {
    command_spec s;
    s.name = "onnx";
    s.summary = "list the ONNX op types the ONNX frontend reads";
    s.positional_required = false;
    s.description =
        "With --list, prints every ONNX op type the frontend maps, one per line, sorted: the ai.onnx\n"
        "ops by name (Conv), other domains as DOMAIN:NAME (com.microsoft:Gelu); then their count on\n"
        "stderr. A model with other ops is an error listing each unsupported node, unless\n"
        "--skip-unknown-operators is given.";
    s.options = {{{"--list", "-l"}, option_spec::flag, "", "list the supported ONNX op types"}};
    s.examples = {"kiln onnx --list", "kiln onnx --list | grep -x Conv"};
    return {s, run_onnx};
}

}  // namespace kiln::driver
