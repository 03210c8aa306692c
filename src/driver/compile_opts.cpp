#include "driver/compile_opts.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "core/error.hpp"
#include "passes/analysis/kernel_count.hpp"
#include "tools/program_tools.hpp"
#include "tools/progress.hpp"

namespace kiln::driver {

namespace {

// A flag for every built target (the registry's), and for kiln's targets this build left out,
// so that --gpu on a build without CUDA says so instead of being an unknown option.
std::vector<std::string> target_names() {
    auto names = built_targets();
    for (const char* t : {"cpu", "gpu"})
        if (std::find(names.begin(), names.end(), t) == names.end()) names.push_back(t);
    return names;
}

std::string chosen_target(const parsed_args& args) {
    std::string name;
    for (const auto& t : target_names()) {
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
    if (name == "ref") help += " (the oracle verify compares against)";
    if (name == "cpu") help += " (the default where no GPU is found)";
    if (name == "gpu") help += " (the default where it finds a GPU)";
    if (!is_built) help += " (not built into this kiln)";
    return {{"--" + name}, option_spec::flag, "", help};
}

const char* const compile_flags[] = {"--optimize", "--fp16", "--bf16", "--int8", "--fp8", "--enable-offload-copy",
                                     "--disable-fast-math", "--exhaustive-tune", "--allow-tf32"};

// Every name given to --disable-pass must be a pass of the pipeline, or the option would
// silently do nothing.
void check_pass_names(const target& t, const compile_settings& s) {
    compile_options all = s.options;
    all.optimize = true;
    std::vector<std::string> names;   // in pipeline order, each once
    for (const auto& p : t.passes(all))
        if (std::find(names.begin(), names.end(), p.name()) == names.end()) names.push_back(p.name());
    for (const auto& d : s.disabled)
        if (std::find(names.begin(), names.end(), d) == names.end()) {
            std::string list;
            for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
            throw usage_error("--disable-pass " + d + ": the " + t.name() + " pipeline has no such pass (its passes: " +
                              list + ")");
        }
}

std::size_t computing_instructions(const module& m) {
    return static_cast<std::size_t>(std::count_if(m.begin(), m.end(), is_computing));
}

// The generated kernels' build: how many were compiled, from the cache or the saved program, the
// wall time and the threads, and (with --time-passes) each compiled kernel, slowest first.
std::string kernel_compile_report(const compile_report& r, bool each) {
    if (r.kernels == 0 || r.compile_threads == 0) return "";
    double sum = 0;
    for (const auto& k : r.compiled_kernels) sum += k.second;
    std::string out = cat("\n  kernel build: ", r.kernels, " kernels (compiled ", r.compiled_kernels.size(), ", cache hits ",
                          r.cache_hits, ", from the saved program ", r.saved_kernels, ") in ", ms_text(r.kernel_build_ms),
                          " on ", r.compile_threads, " thread", r.compile_threads == 1 ? "" : "s");
    if (!r.compiled_kernels.empty()) out += "; compile times sum to " + ms_text(sum);
    if (!each) return out;
    auto slowest = r.compiled_kernels;
    std::stable_sort(slowest.begin(), slowest.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [where, ms] : slowest)
        out += "\n    " + ms_text(ms) + " " + (where.size() > 160 ? where.substr(0, 157) + "..." : where);
    return out;
}

}  // namespace

std::string ms_text(double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f ms", ms);
    return buf;
}

std::vector<option_spec> compile_option_specs() {
    std::vector<option_spec> s;
    for (const auto& t : target_names()) s.push_back(target_option(t));
    std::vector<option_spec> rest = {
        {{"--optimize", "-O"}, option_spec::flag, "", "run the generic passes (simplify, fold, fuse, plan memory);\nwithout it ref runs the program as written"},
        {{"--fp16"}, option_spec::flag, "", "compute in float16 (the precision pass converts the program)"},
        {{"--bf16"}, option_spec::flag, "", "compute in bfloat16"},
        {{"--int8"}, option_spec::flag, "", "quantize to int8 (not implemented yet: an error)"},
        {{"--fp8"}, option_spec::flag, "", "quantize to fp8 (not implemented yet: an error)"},
        {{"--enable-offload-copy"}, option_spec::flag, "", "GPU/CPU: copy inputs and outputs between host and device\ninside the program"},
        {{"--disable-fast-math"}, option_spec::flag, "", "GPU/CPU: exact math functions instead of fast approximations; CPU: no Winograd convolutions"},
        {{"--exhaustive-tune"}, option_spec::flag, "", "gpu: time cuBLASLt's first 8 candidates for each GEMM and keep\nthe fastest in the kernel cache (cpu: ignored)"},
        {{"--threads"}, option_spec::one, "N", "cpu: threads of its one pool (default: the machine's cores)"},
        {{"--device"}, option_spec::one, "N", "gpu: the CUDA device to compile for and run on (default 0)"},
        {{"--allow-tf32"}, option_spec::flag, "", "gpu: float32 GEMMs and convolutions may round inputs to TF32\n(faster; off by default)"},
        {{"--no-cache"}, option_spec::flag, "", "gpu: compile every kernel, neither reading nor writing the\nkernel disk cache"},
        {{"--time-passes"}, option_spec::flag, "", "report every pass's time (perf always does)"},
        {{"--trace-passes"}, option_spec::flag, "", "print the program after every pass (on stderr)"},
        {{"--disable-pass"}, option_spec::one, "NAME", "skip the pass NAME (repeatable; for finding a pass that breaks\na program)", true},
    };
    s.insert(s.end(), rest.begin(), rest.end());
    return s;
}

compile_settings read_compile_settings(const parsed_args& args) {
    compile_settings s;
    std::string t = chosen_target(args);
    s.target = t.empty() ? default_target() : t;
    for (const char* q : {"--int8", "--fp8"})
        if (args.has(q))
            fail(q, ": ", std::string(q).substr(2), " quantization is not implemented in kiln yet (--fp16 and --bf16 are)");
    if (args.has("--fp16") && args.has("--bf16")) throw usage_error("give one precision: --fp16 and --bf16 are both given");
    s.options.optimize = args.has("--optimize");
    if (args.has("--fp16")) s.options.precision = compute_precision::fp16;
    if (args.has("--bf16")) s.options.precision = compute_precision::bf16;
    s.options.offload_copy = args.has("--enable-offload-copy");
    s.options.fast_math = !args.has("--disable-fast-math");
    s.options.exhaustive_tune = args.has("--exhaustive-tune");
    if (args.has("--threads")) {
        std::string n = args.get("--threads");
        if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || std::stoul(n) == 0)
            throw usage_error("--threads " + n + ": expected a count >= 1");
        s.options.threads = std::stoul(n);
    }
    if (args.has("--device")) {
        std::string n = args.get("--device");
        if (n.empty() || n.size() > 4 || n.find_first_not_of("0123456789") != std::string::npos)
            throw usage_error("--device " + n + ": expected a device number >= 0");
        s.options.device = std::stoi(n);
    }
    s.options.allow_tf32 = args.has("--allow-tf32");
    s.options.kernel_cache = !args.has("--no-cache");
    s.time_passes = args.has("--time-passes");
    s.trace_passes = args.has("--trace-passes");
    for (const auto& use : args.uses("--disable-pass")) s.disabled.push_back(use.at(0));
    auto tgt = make_target(s.target);
    check_pass_names(*tgt, s);
    s.ignored = tgt->ignored_options(s.options);
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

compiled_program compile_with_report(program p, const target& t, const compile_settings& s, bool quiet) {
    compiled_program c;
    compile_report& r = c.report;
    r.target = t.name();
    r.instructions_before = computing_instructions(p.main());
    compile_progress progress(std::cerr, !quiet && isatty(STDERR_FILENO), t.passes(s.options).size());
    pass_options popts;
    popts.on_pass = [&](const std::string& name, double ms) {
        r.passes.emplace_back(name, ms);
        progress.pass_done(name);
    };
    popts.disabled = s.disabled;
    if (s.trace_passes) popts.trace = &std::cerr;
    auto start = std::chrono::steady_clock::now();
    lower(p, t, s.options, popts);
    auto lowered = std::chrono::steady_clock::now();
    c.exe = t.load(std::move(p), s.options);
    auto end = std::chrono::steady_clock::now();
    r.load_ms = std::chrono::duration<double, std::milli>(end - lowered).count();
    r.total_ms = std::chrono::duration<double, std::milli>(end - start).count();
    const program& done = c.exe->get_program();
    r.instructions_after = computing_instructions(done.main());
    r.launches = kernel_count(done.main());
    const executable_stats& st = c.exe->stats();
    r.kernels = st.kernels;
    r.cache_hits = st.cache_hits;
    r.memory = st.memory;
    r.placement = st.placement;
    r.notes = st.notes;
    r.build_phases = st.build_phases;
    r.kernel_build_ms = st.kernel_build_ms;
    r.compile_threads = st.compile_threads;
    r.saved_kernels = st.saved_kernels;
    r.compiled_kernels = st.compiled_kernels;
    return c;
}

std::string describe_options(const compile_options& o) {
    std::string s = o.optimize ? "-O" : "no passes";
    if (o.precision == compute_precision::fp16) s += ", fp16";
    if (o.precision == compute_precision::bf16) s += ", bf16";
    if (o.offload_copy) s += ", offload copy";
    if (!o.fast_math) s += ", no fast math";
    if (o.exhaustive_tune) s += ", exhaustive tune";
    if (o.threads) s += ", " + std::to_string(o.threads) + " threads";
    if (o.allow_tf32) s += ", tf32";
    if (o.device) s += ", device " + std::to_string(o.device);
    if (!o.kernel_cache) s += ", no kernel cache";
    return s;
}

std::string format_compile_report(const compile_report& r, const compile_settings& s) {
    std::string out = "Compiled for " + r.target + " (" + describe_options(s.options) + ") in " + ms_text(r.total_ms);
    out += cat("\n  program: ", r.instructions_before, " instructions -> ", r.instructions_after, ", ", r.launches,
               " kernel launches; ", r.memory);
    for (std::size_t i = 0; s.time_passes && i < r.passes.size(); ++i) {
        const auto& [name, ms] = r.passes[i];
        char pct[16];
        std::snprintf(pct, sizeof pct, "%.0f%%", r.total_ms > 0 ? 100 * ms / r.total_ms : 0);
        out += (i ? "\n  " : "\n  passes: ") + name + " " + ms_text(ms) + " (" + pct + ")";
    }
    double in_passes = 0;
    for (const auto& p : r.passes) in_passes += p.second;
    if (s.time_passes && !r.passes.empty())
        out += "\n  pass manager: " + ms_text(r.total_ms - r.load_ms - in_passes) + " (IR snapshots kept for failure dumps)";
    out += "\n  executable built in " + ms_text(r.load_ms) + "; kernels compiled: " + std::to_string(r.kernels) +
           " (cache hits " + std::to_string(r.cache_hits) + ")";
    for (std::size_t i = 0; i < r.build_phases.size(); ++i)
        out += (i ? ", " : "\n  build: ") + r.build_phases[i].first + " " + ms_text(r.build_phases[i].second);
    out += kernel_compile_report(r, s.time_passes);
    for (const auto& p : r.placement) out += "\n  runs on " + p;
    for (const auto& n : r.notes) out += "\n  " + n;
    for (const auto& i : s.ignored) out += "\n  ignored: " + i;
    return out + "\n";
}

}  // namespace kiln::driver
