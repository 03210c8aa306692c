#include "driver/compile_opts.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "core/error.hpp"
#include "runtime/progress.hpp"

namespace kiln::driver {

namespace {

const char* const target_names[] = {"ref", "cpu", "gpu"};

std::string chosen_target(const parsed_args& args) {
    std::string name;
    for (const char* t : target_names) {
        if (!args.has(std::string("--") + t)) continue;
        if (!name.empty()) throw usage_error("give one target: --" + name + " and --" + t + " are both given");
        name = t;
    }
    return name;
}

option_spec target_option(const std::string& name) {
    auto built = built_targets();
    bool is_built = std::find(built.begin(), built.end(), name) != built.end();
    std::string help = "compile for and run on the " + name + " target";
    if (name == "ref") help += " (the default)";
    if (!is_built) help += " (not built into this kiln)";
    return {{"--" + name}, option_spec::flag, "", help};
}

const char* const compile_flags[] = {"--optimize", "--fp16", "--bf16", "--int8", "--fp8", "--enable-offload-copy",
                                     "--disable-fast-math", "--exhaustive-tune"};

std::string ms_text(double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f ms", ms);
    return buf;
}

}  // namespace

std::vector<option_spec> compile_option_specs() {
    std::vector<option_spec> s;
    for (const char* t : target_names) s.push_back(target_option(t));
    std::vector<option_spec> rest = {
        {{"--optimize", "-O"}, option_spec::flag, "", "run the generic passes (simplify, fold, fuse, plan memory);\nwithout it ref runs the program as written"},
        {{"--fp16"}, option_spec::flag, "", "compute in float16 (the precision pass converts the program)"},
        {{"--bf16"}, option_spec::flag, "", "compute in bfloat16"},
        {{"--int8"}, option_spec::flag, "", "quantize to int8 (not implemented yet: an error)"},
        {{"--fp8"}, option_spec::flag, "", "quantize to fp8 (not implemented yet: an error)"},
        {{"--enable-offload-copy"}, option_spec::flag, "", "GPU/CPU: copy inputs and outputs between host and device\ninside the program"},
        {{"--disable-fast-math"}, option_spec::flag, "", "GPU/CPU: exact math functions instead of fast approximations"},
        {{"--exhaustive-tune"}, option_spec::flag, "", "GPU/CPU: time every kernel configuration instead of a heuristic pick"},
    };
    s.insert(s.end(), rest.begin(), rest.end());
    return s;
}

compile_settings read_compile_settings(const parsed_args& args) {
    compile_settings s;
    std::string t = chosen_target(args);
    s.target = t.empty() ? "ref" : t;
    for (const char* q : {"--int8", "--fp8"})
        if (args.has(q))
            fail(q, ": ", std::string(q).substr(2), " quantization is not implemented in kiln yet (--fp16 and --bf16 are)");
    if (args.has("--fp16") && args.has("--bf16")) throw usage_error("give one precision: --fp16 and --bf16 are both given");
    make_target(s.target);   // names the built targets when this one is not
    s.options.optimize = args.has("--optimize");
    if (args.has("--fp16")) s.options.precision = compute_precision::fp16;
    if (args.has("--bf16")) s.options.precision = compute_precision::bf16;
    s.options.offload_copy = args.has("--enable-offload-copy");
    s.options.fast_math = !args.has("--disable-fast-math");
    s.options.exhaustive_tune = args.has("--exhaustive-tune");
    if (s.target == "ref") {
        if (s.options.offload_copy) s.ignored.push_back("--enable-offload-copy (ref runs in host memory)");
        if (!s.options.fast_math) s.ignored.push_back("--disable-fast-math (ref's math is exact already)");
        if (s.options.exhaustive_tune) s.ignored.push_back("--exhaustive-tune (ref has no kernels to tune)");
    }
    return s;
}

void check_saved_settings(const parsed_args& args, const model_file& f) {
    for (const char* flag : compile_flags)
        if (args.has(flag))
            throw usage_error(std::string(flag) + (flag == std::string("--optimize") ? " (-O)" : "") + " is a compile option, but '" + f.path +
                              "' is a saved program, compiled already (" + describe_options(f.saved->info.options) + ")");
    std::string t = chosen_target(args);
    if (!t.empty() && t != f.saved->info.target)
        throw usage_error("--" + t + ": '" + f.path + "' was compiled for the " + f.saved->info.target + " target");
}

compile_report compile_with_report(program& p, const target& t, const compile_options& o, bool quiet) {
    compile_report r;
    r.target = t.name();
    compile_progress progress(std::cerr, !quiet && isatty(STDERR_FILENO), t.passes(o).size());
    pass_options popts;
    popts.on_pass = [&](const std::string& name, double ms) {
        r.passes.emplace_back(name, ms);
        progress.pass_done(name);
    };
    auto start = std::chrono::steady_clock::now();
    compile(p, t, o, popts);
    r.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return r;
}

std::string describe_options(const compile_options& o) {
    std::string s = o.optimize ? "-O" : "no passes";
    if (o.precision == compute_precision::fp16) s += ", fp16";
    if (o.precision == compute_precision::bf16) s += ", bf16";
    if (o.offload_copy) s += ", offload copy";
    if (!o.fast_math) s += ", no fast math";
    if (o.exhaustive_tune) s += ", exhaustive tune";
    return s;
}

std::string format_compile_report(const compile_report& r, const compile_settings& s) {
    std::string out = "Compiled for " + r.target + " (" + describe_options(s.options) + ") in " + ms_text(r.total_ms);
    if (r.passes.empty() && r.kernels == 0 && s.ignored.empty()) return out + "\n";
    for (std::size_t i = 0; i < r.passes.size(); ++i) {
        const auto& [name, ms] = r.passes[i];
        char pct[16];
        std::snprintf(pct, sizeof pct, "%.0f%%", r.total_ms > 0 ? 100 * ms / r.total_ms : 0);
        out += (i ? "\n  " : "\n  passes: ") + name + " " + ms_text(ms) + " (" + pct + ")";
    }
    double in_passes = 0;
    for (const auto& p : r.passes) in_passes += p.second;
    if (!r.passes.empty())
        out += "\n  pass manager: " + ms_text(r.total_ms - in_passes) + " (IR snapshots kept for failure dumps)";
    out += "\n  kernels compiled: " + std::to_string(r.kernels) + " (cache hits " + std::to_string(r.cache_hits) + ")";
    if (r.target == "ref") out += "; ref interprets every op, it compiles no kernels";
    for (const auto& i : s.ignored) out += "\n  ignored: " + i;
    return out + "\n";
}

}  // namespace kiln::driver
