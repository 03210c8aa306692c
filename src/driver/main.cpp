// The kiln command: `kiln COMMAND [options]`. Exit status 0 on success, 1 on an error, 2 on a
// usage error, 3 when --timeout stopped it; messages go to stderr prefixed "kiln: error: ".
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "core/cancel.hpp"
#include "driver/commands.hpp"

namespace kiln::driver {

namespace {

std::vector<command> all_commands() {
    return {op_command(),      read_command(),   params_command(), compile_command(),
            run_command(),     verify_command(), perf_command(),   onnx_command()};
}

std::string driver_help(const std::vector<command>& cmds) {
    std::string s =
        "kiln: a deep-learning inference compiler\n\n"
        "usage: kiln COMMAND [options]\n\ncommands:\n";
    for (const auto& c : cmds) s += "  " + c.spec.name + std::string(8 - c.spec.name.size(), ' ') + c.spec.summary + "\n";
    s += "\n'kiln COMMAND --help' describes a command and its options.\n\n"
         "examples:\n  kiln op --list\n  kiln params mlp.kir\n  kiln run mlp.kir --fill1\n"
         "  kiln run model.onnx --input x=x.npy --save-outputs out\n"
         "  kiln compile model.onnx -O -o model.kiln\n  kiln perf model.kiln -n 100 --trace trace.json\n"
         "  kiln verify model.onnx -O --bisect\n";
    return s;
}

const command& find_command(const std::vector<command>& cmds, const std::string& name) {
    for (const auto& c : cmds)
        if (c.spec.name == name) return c;
    std::vector<std::string> names;
    for (const auto& c : cmds) names.push_back(c.spec.name);
    std::string msg = name[0] == '-' ? "unknown option '" + name + "' (options go after the command)"
                                     : "unknown command '" + name + "'";
    auto close = close_matches(name, names);
    if (!close.empty() && name[0] != '-') msg += " (did you mean '" + close.front() + "'?)";
    throw usage_error(msg + "; see 'kiln --help'");
}

bool asks_for_help(const std::vector<std::string>& words) {
    for (const auto& w : words) {
        if (w == "--") return false;
        if (w == "--help" || w == "-h") return true;
    }
    return false;
}

int run_driver(const std::vector<std::string>& words) {
    auto cmds = all_commands();
    if (words.empty()) {
        std::cerr << driver_help(cmds);
        return 2;
    }
    if (words[0] == "--help" || words[0] == "-h") {
        std::cout << driver_help(cmds);
        return 0;
    }
    const command& cmd = find_command(cmds, words[0]);
    std::vector<std::string> rest(words.begin() + 1, words.end());
    if (asks_for_help(rest)) {
        std::cout << help_text(cmd.spec);
        return 0;
    }
    parsed_args args = parse_args(cmd.spec, rest);
    // --timeout bounds the whole command: constant folding at compile time as much as the runs.
    run_control control;
    if (args.has("--timeout")) {
        double seconds = parse_nonnegative(args.get("--timeout"), "--timeout");
        if (seconds == 0) throw usage_error("--timeout expects a positive number of seconds, got 0");
        control.set_timeout(seconds);
    }
    run_control_scope scope(control);
    return cmd.run(args);
}

}  // namespace

}  // namespace kiln::driver

// The cpu target's OpenMP pool spins briefly at barriers, then sleeps: on a machine whose cores
// other processes share, a thread spinning for long burns the time slice its partner needs, and
// 2-thread runs got 20-40x slower (mobilenet_v2: 9 ms passive, 220-400 ms with libgomp's default
// spin, load average 11 on 2 cores); sleeping at once costs a wake-up per parallel kernel on a
// quiet machine (mobilenet_v2 at 2 threads: 7.5-9.3 ms passive, 4.9 ms with 1000 spins; 15.5 ms
// with 1000 spins at load 11). libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT when it is loaded,
// before main, so the driver sets them and runs itself again once; values already set are kept.
void wait_passively(char** argv) {
    if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
    setenv("OMP_WAIT_POLICY", "passive", 1);
    setenv("GOMP_SPINCOUNT", "1000", 1);   // overrides passive's 0: spin this long, then sleep
    execv("/proc/self/exe", argv);   // returns only when it fails: run on with libgomp's default
}

int main(int argc, char** argv) {
    wait_passively(argv);
    try {
        return kiln::driver::run_driver(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const kiln::driver::usage_error& e) {
        std::cerr << "kiln: error: " << e.what() << "\n";
        return 2;
    } catch (const kiln::cancelled& e) {
        std::cerr << "kiln: error: " << e.what() << "\n";
        return 3;
    } catch (const std::exception& e) {
        std::cerr << "kiln: error: " << e.what() << "\n";
        return 1;
    }
}
