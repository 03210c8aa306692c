// kiln perf: times the compiled program: per instruction (MIGraphX's report), by op, and whole
// runs (rate, spread); --trace writes one run as a Chrome trace.
#include <cstdio>
#include <iostream>

#include "driver/commands.hpp"
#include "driver/display.hpp"
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

void print_report(const perf_report& r, std::size_t batch) {
    if (r.instructions.empty()) {
        std::cout << "(this target does not time single instructions)\n";
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
              << " (the warm-up, not counted)\n"
              << "Run time: mean " << ms(r.mean) << ", min " << ms(r.min) << ", median " << ms(r.median) << ", p90 " << ms(r.p90) << ", p99 "
              << ms(r.p99) << ", max " << ms(r.max) << "\n";
    if (!r.instructions.empty())
        std::cout << "Total instructions time: " << ms(r.instructions_ms) << "\nOverhead time: " << ms(r.overhead_ms)
                  << ", " << pct(r.overhead_ms, r.iq_mean) << "\n";
}

int run_perf(const parsed_args& args) {
    std::size_t n = parse_count(args.get("--iterations", "100"), "--iterations");
    if (n == 0) throw usage_error("--iterations expects a positive integer, got 0");
    session s = open_session(args);
    s.settings.time_passes = true;   // perf breaks the compile time down by pass
    bool quiet = args.has("--quiet");
    std::string report = build_executable(s, quiet);
    auto inputs = make_inputs(s.current().main(), s.inputs);
    if (!quiet) std::cout << report << "\n" << describe_inputs(inputs, s.inputs.seed) << "\n";
    if (!quiet) std::cout << "Running performance report (" << n << " iterations) on " << s.tgt->name() << " ...\n";
    param_map in = to_param_map(inputs);
    print_report(measure_program(*s.exe, in, n), s.inputs.dims.batch.value_or(1));
    if (args.has("--trace")) {
        std::string path = args.get("--trace");
        write_text(trace_program(*s.exe, s.tgt->name(), in), path);
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
        "Compiles FILE for the target (a saved program loads without compiling again), runs it once to\n"
        "warm up, then N times whole and N times timing each instruction. Prints the compile report,\n"
        "each instruction of main with its time (interquartile mean) and share of the instructions' total, a\n"
        "summary by op (largest first), the batch size (--batch) and rate (items per second), the\n"
        "total time (the mean of the middle half of the runs), the runs' mean, min, median, p90, p99\n"
        "and max, the instructions' total and the overhead (the total time minus the instructions'\n"
        "total; negative when timing each instruction costs more than it leaves out). --trace writes one run as a Chrome trace (JSON): one slice per\n"
        "instruction or kernel, which ui.perfetto.dev and chrome://tracing open.";
    s.options = input_option_specs();
    std::vector<option_spec> own = {
        {{"--iterations", "-n"}, option_spec::one, "N", "runs to time (default 100)"},
        {{"--trace"}, option_spec::one, "FILE", "write a Chrome trace of one run to FILE"},
        {{"--quiet"}, option_spec::flag, "", "print only the report (and no progress)"},
    };
    s.options.insert(s.options.end(), own.begin(), own.end());
    for (auto& o : compile_option_specs()) s.options.push_back(o);
    for (auto& o : loader_options()) s.options.push_back(o);
    s.options.push_back(timeout_option_spec());
    s.examples = {"kiln perf mlp.kir -O", "kiln perf mlp.kiln -n 1000", "kiln perf model.onnx -O --trace trace.json",
                  "kiln perf model.onnx --batch 8 -O"};
    return {s, run_perf};
}

}  // namespace kiln::driver
