// kiln perf: times the compiled program: per instruction (MIGraphX's report), by op, and whole
// runs (rate, spread); --trace writes one run as a Chrome trace.
#include <cstdio>
#include <iostream>

#include "driver/commands.hpp"
#include "driver/display.hpp"
#include "core/value.hpp"
#include "driver/session.hpp"
#include "tools/perf.hpp"

namespace kiln::driver {

namespace {

std::string ms(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6gms", v);
    return buf;
}

std::string pct(double part, double whole) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.0f%%", whole > 0 ? 100 * part / whole : 0);
    return buf;
}

void print_report(const perf_report& r, std::size_t batch, bool instructions) {
    if (r.instructions.empty()) {
        if (instructions) std::cout << "(this target does not time single instructions)\n";
    } else {
        for (const auto& i : r.instructions)
            std::cout << i.line << ": " << ms(i.ms) << ", " << pct(i.ms, r.instructions_ms) << "\n";
        std::cout << "\nSummary:\n";
        for (const auto& [op, t] : r.by_op) std::cout << op << ": " << ms(t) << ", " << pct(t, r.instructions_ms) << "\n";
    }
    char rate[64];
    std::snprintf(rate, sizeof rate, "%.1f/sec", r.rate() * static_cast<double>(batch));
    std::cout << "\nBatch size: " << batch << "\nRate: " << rate << "\nTotal time: " << ms(r.iq_mean)
              << " (interquartile mean of " << r.iterations << " runs)\nFirst run: " << ms(r.first_run_ms)
              << " (warm-up, not counted: " << r.warmup << " run" << (r.warmup == 1 ? "" : "s") << ")\n"
              << "Run time: mean " << ms(r.mean) << ", min " << ms(r.min) << ", p10 " << ms(r.p10) << ", median " << ms(r.median)
              << ", p90 " << ms(r.p90) << ", p99 " << ms(r.p99) << ", max " << ms(r.max) << "\n";
    if (!r.device_run_ms.empty()) {
        const run_spread& d = r.device;
        std::snprintf(rate, sizeof rate, "%.1f/sec", d.median > 0 ? 1000.0 / d.median * static_cast<double>(batch) : 0);
        std::cout << "Device time: median " << ms(d.median) << ", p10 " << ms(d.p10) << ", p90 " << ms(d.p90) << ", mean "
                  << ms(d.mean) << ", min " << ms(d.min) << ", max " << ms(d.max)
                  << " (the device's clock around each run's launches; input and output copies not included)\n"
                  << "Device rate: " << rate << " (from the device median)\n";
    }
    if (!r.instructions.empty())
        std::cout << "Total instructions time: " << ms(r.instructions_ms) << "\nOverhead time: " << ms(r.overhead_ms)
                  << ", " << pct(r.overhead_ms, r.iq_mean) << "\n";
}

value spread_json(const run_spread& s) {
    return value_object{{"median", s.median}, {"p10", s.p10}, {"p90", s.p90}, {"p99", s.p99}, {"mean", s.mean},
                        {"min", s.min},       {"max", s.max}, {"iq_mean", s.iq_mean}};
}

// --json: the measurement and the compile report's numbers, for benchmarks to read.
value perf_json(const session& s, const compile_report& c, const perf_report& r, std::size_t batch) {
    value_array passes;
    for (const auto& [name, t] : c.passes) passes.push_back(value_object{{"pass", name}, {"ms", t}});
    value_array phases, compiled;
    for (const auto& [name, t] : c.build_phases) phases.push_back(value_object{{"phase", name}, {"ms", t}});
    for (const auto& [where, t] : c.compiled_kernels) compiled.push_back(value_object{{"kernel", where}, {"ms", t}});
    value compile = value_object{{"saved_program", s.saved()},   {"total_ms", c.total_ms},
                                 {"build_ms", c.load_ms},        {"passes", passes},
                                 {"build_phases", phases},       {"kernels", c.kernels},
                                 {"cache_hits", c.cache_hits},   {"kernel_build_ms", c.kernel_build_ms},
                                 {"compile_threads", c.compile_threads}, {"compiled_kernels", compiled}};
    value_array instructions;
    for (const auto& i : r.instructions) instructions.push_back(value_object{{"instruction", i.line}, {"ms", i.ms}});
    value host = spread_json(run_spread{r.mean, r.min, r.p10, r.median, r.p90, r.p99, r.max, r.iq_mean});
    value device = r.device_run_ms.empty() ? value() : spread_json(r.device);
    return value_object{{"file", s.file.path},
                        {"target", s.tgt->name()},
                        {"options", describe_options(s.settings.options)},
                        {"batch", batch},
                        {"compile", compile},
                        {"iterations", r.iterations},
                        {"warmup", r.warmup},
                        {"input_sets", r.input_sets},
                        {"first_run_ms", r.first_run_ms},
                        {"run_ms", host},
                        {"device_ms", device},
                        {"instructions", instructions}};
}

int run_perf(const parsed_args& args) {
    perf_options o;
    o.iterations = parse_count(args.get("--iterations", "100"), "--iterations");
    if (o.iterations == 0) throw usage_error("--iterations expects a positive integer, got 0");
    o.warmup = parse_count(args.get("--warmup", "1"), "--warmup");
    if (o.warmup == 0) throw usage_error("--warmup expects a positive integer, got 0 (the first run loads what runs need)");
    std::size_t sets = parse_count(args.get("--input-sets", "1"), "--input-sets");
    if (sets == 0) throw usage_error("--input-sets expects a positive integer, got 0");
    o.instructions = !args.has("--runs-only");
    session s = open_session(args);
    s.settings.time_passes = true;   // perf breaks the compile time down by pass
    bool quiet = args.has("--quiet");
    compile_report compiled;
    std::string report = build_executable(s, quiet, &compiled);
    // Set k draws the random inputs from seed + k; given and filled inputs are the same in each.
    std::vector<param_map> in;
    std::string described;
    for (std::size_t k = 0; k < sets; ++k) {
        input_options io = s.inputs;
        io.seed += k;
        auto inputs = make_inputs(s.current().main(), io);
        if (k == 0) described = describe_inputs(inputs, io.seed);
        in.push_back(to_param_map(inputs));
    }
    if (!quiet) {
        std::cout << report << "\n" << described;
        if (sets > 1) std::cout << "(" << sets << " input sets, seeds " << s.inputs.seed << " to " << s.inputs.seed + sets - 1 << ", taken in turn by the runs)\n";
        std::cout << "\nRunning performance report (" << o.iterations << " iterations) on " << s.tgt->name() << " ...\n";
    }
    std::size_t batch = s.inputs.dims.batch.value_or(1);
    perf_report r = measure_program(*s.exe, in, o);
    print_report(r, batch, o.instructions);
    if (args.has("--json")) {
        std::string path = args.get("--json");
        write_text(to_json(perf_json(s, compiled, r, batch), 1) + "\n", path);
        std::cout << "JSON: " << path << "\n";
    }
    param_map& first = in.front();
    if (args.has("--trace")) {
        std::string path = args.get("--trace");
        write_text(trace_program(*s.exe, s.tgt->name(), first), path);
        std::cout << "Trace of one run: " << path << " (open in ui.perfetto.dev or chrome://tracing)\n";
    }
    return 0;
}

}  // namespace

command perf_command() {
    command_spec s;
    s.name = "perf";
    s.summary = "time the compiled program: per instruction, by op, and whole runs";
    s.positional = "FILE";
    s.description =
        "Compiles FILE for the target (a saved program loads without compiling again), runs it to warm\n"
        "up (--warmup, once by default), then N times whole and N times timing each instruction\n"
        "(--runs-only skips those). Prints the compile report,\n"
        "each instruction of main with its time (interquartile mean) and share of the instructions' total, a\n"
        "summary by op (largest first), the batch size (--batch) and rate (items per second), the\n"
        "total time (the mean of the middle half of the runs), the runs' mean, min, p10, median, p90, p99\n"
        "and max, the instructions' total and the overhead (the total time minus the instructions'\n"
        "total; negative when timing each instruction costs more than it leaves out). --trace writes one run as a Chrome trace (JSON): one slice per\n"
        "instruction or kernel, which ui.perfetto.dev and chrome://tracing open. On a device (gpu) it\n"
        "also times each whole run on the device's clock (CUDA events around the launches, the graph's\n"
        "replay; input and output copies not included). --json writes the numbers and the compile\n"
        "report's as JSON.";
    s.options = input_option_specs();
    std::vector<option_spec> own = {
        {{"--iterations", "-n"}, option_spec::one, "N", "runs to time (default 100)"},
        {{"--warmup"}, option_spec::one, "N", "untimed runs first (default 1)"},
        {{"--input-sets"}, option_spec::one, "N", "random inputs drawn N times (seeds seed to seed+N-1), taken in\nturn by the runs (default 1)"},
        {{"--runs-only"}, option_spec::flag, "", "time whole runs only, not each instruction"},
        {{"--json"}, option_spec::one, "FILE", "also write the timings and the compile report as JSON to FILE"},
        {{"--trace"}, option_spec::one, "FILE", "write a Chrome trace of one run to FILE"},
        {{"--quiet"}, option_spec::flag, "", "print only the report (and no progress)"},
    };
    s.options.insert(s.options.end(), own.begin(), own.end());
    for (auto& o : compile_option_specs()) s.options.push_back(o);
    for (auto& o : loader_options()) s.options.push_back(o);
    s.options.push_back(timeout_option_spec());
    s.examples = {"kiln perf mlp.kir -O", "kiln perf mlp.kiln -n 1000", "kiln perf model.onnx -O --trace trace.json",
                  "kiln perf model.onnx --batch 8 -O", "kiln perf model.onnx --gpu -O --fp16 --warmup 10 --input-sets 4 --runs-only --json r.json"};
    return {s, run_perf};
}

}  // namespace kiln::driver
