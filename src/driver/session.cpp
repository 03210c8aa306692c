#include "driver/session.hpp"

#include <chrono>

#include "core/error.hpp"
#include "driver/run_io.hpp"

namespace kiln::driver {

namespace {

fill_spec read_fill(const parsed_args& args, const std::string& opt) {
    fill_spec f;
    for (const auto& use : args.uses(opt)) {
        if (use.empty()) f.all = true;
        f.names.insert(use.begin(), use.end());
    }
    return f;
}

}  // namespace

std::vector<option_spec> input_option_specs() {
    return {
        {{"--seed"}, option_spec::one, "N", "seed of the random inputs (default 0)"},
        {{"--fill0"}, option_spec::many, "[NAME...]", "fill these inputs (all when no NAME) with 0s", true},
        {{"--fill1"}, option_spec::many, "[NAME...]", "fill these inputs (all when no NAME) with 1s", true},
        {{"--input"}, option_spec::one, "NAME=FILE.npy", "the value of input NAME, from a numpy .npy file", true},
    };
}

option_spec timeout_option_spec() {
    return {{"--timeout"}, option_spec::one, "SECONDS",
            "stop with exit status 3 when the command (load, compile, runs) has taken\n"
            "SECONDS, before the next instruction or Loop iteration"};
}

input_options read_input_options(const parsed_args& args) {
    input_options o;
    o.seed = parse_count(args.get("--seed", "0"), "--seed");
    o.zeros = read_fill(args, "--fill0");
    o.ones = read_fill(args, "--fill1");
    if (o.zeros.all && o.ones.all) throw usage_error("--fill0 and --fill1 both given without names");
    for (const auto& n : o.zeros.names)
        if (o.ones.names.count(n)) throw usage_error("input '" + n + "' is named by both --fill0 and --fill1");
    o.dims = read_dim_options(args);
    return o;
}

session open_session(const parsed_args& args, const std::function<void(session&)>& before_load) {
    session s;
    s.inputs = read_input_options(args);
    // Compile options first: a target that is not built is the first thing to report.
    compile_settings given = read_compile_settings(args);
    s.file = open_model(args);
    if (s.saved()) {
        check_saved_settings(args, s.file);
        s.settings.target = s.file.saved->info.target;
        s.settings.options = s.file.saved->info.options;
        if (args.has("--device")) s.settings.options.device = given.options.device;   // where to run it
    } else {
        s.settings = given;
    }
    s.tgt = make_target(s.settings.target);
    add_npy_inputs(args, s.inputs);
    if (before_load) before_load(s);
    s.prog = load_model(s.file, s.inputs.dims, true);
    return s;
}

std::string build_executable(session& s, bool quiet, compile_report* report) {
    if (!s.saved()) {
        auto c = compile_with_report(std::move(s.prog), *s.tgt, s.settings, quiet);
        s.exe = std::move(c.exe);
        if (report) *report = c.report;
        return format_compile_report(c.report, s.settings);
    }
    auto start = std::chrono::steady_clock::now();
    s.exe = s.tgt->load_saved(std::move(s.prog), s.settings.options, std::move(s.file.saved->parts));
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const executable_stats& st = s.exe->stats();
    if (report) {
        report->target = s.tgt->name();
        report->load_ms = ms;
        report->kernels = st.kernels;
        report->cache_hits = st.cache_hits;
    }
    std::string r = saved_summary(s.file) + "\n" + "  executable built in " + ms_text(ms) + "; " + st.memory + "\n";
    if (st.kernels)
        r += cat("  kernels: ", st.kernels, " (from the saved program ", st.saved_kernels, ", cache hits ",
                 st.cache_hits, ", compiled ", st.kernels - st.saved_kernels - st.cache_hits, ")\n");
    for (const auto& n : st.notes) r += "  " + n + "\n";
    return r;
}

param_map to_param_map(const std::vector<generated_input>& inputs) {
    param_map m;
    for (const auto& in : inputs) m.emplace(in.name, in.arg);
    return m;
}

std::string describe_inputs(const std::vector<generated_input>& inputs, std::uint64_t seed) {
    if (inputs.empty()) return "";
    std::string s = "Inputs (seed " + std::to_string(seed) + "):\n";
    for (const auto& in : inputs) s += in.name + ": " + to_string(in.arg.get_shape()) + ": " + in.how + "\n";
    return s;
}

}  // namespace kiln::driver
