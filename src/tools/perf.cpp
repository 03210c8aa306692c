#include "tools/perf.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <unordered_map>

#include "core/error.hpp"
#include "tools/program_tools.hpp"

namespace kiln {

namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point start) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

// The mean of the middle half of sorted values.
double interquartile_mean(const std::vector<double>& sorted) {
    if (sorted.empty()) return 0;
    std::size_t lo = sorted.size() / 4, hi = std::max(lo + 1, sorted.size() - sorted.size() / 4);
    double sum = 0;
    for (std::size_t i = lo; i < hi; ++i) sum += sorted[i];
    return sum / static_cast<double>(hi - lo);
}

void time_whole_runs(executable& e, std::span<const param_map> sets, perf_report& r) {
    bool on_device = e.enable_device_timing();
    for (std::size_t i = 0; i < r.iterations; ++i) {
        auto start = clock_type::now();
        e.run(sets[i % sets.size()]);
        r.run_ms.push_back(since(start));
        if (on_device) r.device_run_ms.push_back(e.last_run_device_ms());
    }
    std::sort(r.run_ms.begin(), r.run_ms.end());
    std::sort(r.device_run_ms.begin(), r.device_run_ms.end());
    run_spread host = spread_of(r.run_ms);
    r.mean = host.mean;
    r.iq_mean = host.iq_mean;
    r.min = host.min;
    r.p10 = host.p10;
    r.median = host.median;
    r.p90 = host.p90;
    r.p99 = host.p99;
    r.max = host.max;
    r.device = spread_of(r.device_run_ms);
}

void time_instructions(executable& e, std::span<const param_map> sets, perf_report& r) {
    const module& m = e.get_program().main();
    std::unordered_map<const instruction*, std::size_t> index;
    auto names = instruction_names(m);
    for (const auto& ins : m) {
        if (ins.is_return()) continue;
        index[&ins] = r.instructions.size();
        r.instructions.push_back({instruction_line(m, ins, names), std::string(ins.name()), 0});
    }
    bool observed = false;
    std::vector<std::vector<double>> samples(r.instructions.size());
    for (std::size_t i = 0; i < r.iterations; ++i)
        e.run_observed(sets[i % sets.size()], [&](const instruction& ins, const argument&, double ms) {
            auto it = index.find(&ins);
            if (it == index.end()) return;
            samples[it->second].push_back(ms);
            observed = true;
        });
    if (!observed) {
        r.instructions.clear();
        return;
    }
    std::map<std::string, double> by_op;
    for (std::size_t i = 0; i < r.instructions.size(); ++i) {
        auto& it = r.instructions[i];
        std::sort(samples[i].begin(), samples[i].end());
        it.ms = interquartile_mean(samples[i]);
        r.instructions_ms += it.ms;
        by_op[it.op] += it.ms;
    }
    r.by_op.assign(by_op.begin(), by_op.end());
    std::stable_sort(r.by_op.begin(), r.by_op.end(), [](auto& a, auto& b) { return a.second > b.second; });
    r.overhead_ms = r.iq_mean - r.instructions_ms;
}

std::string json_string(const std::string& s) {
    std::string r = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') r += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            r += buf;
            continue;
        }
        r += c;
    }
    return r + "\"";
}

std::string slice(const std::string& name, const std::string& cat, double start_us, double dur_us,
                  const std::string& args) {
    char times[96];
    std::snprintf(times, sizeof times, "\"ts\": %.3f, \"dur\": %.3f", start_us, dur_us);
    return "{\"name\": " + json_string(name) + ", \"cat\": " + json_string(cat) + ", \"ph\": \"X\", " + times +
           ", \"pid\": 1, \"tid\": 1, \"args\": {" + args + "}}";
}

}  // namespace

double percentile(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return 0;
    auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

run_spread spread_of(const std::vector<double>& sorted) {
    run_spread s;
    if (sorted.empty()) return s;
    double sum = 0;
    for (double v : sorted) sum += v;
    s.mean = sum / static_cast<double>(sorted.size());
    s.iq_mean = interquartile_mean(sorted);
    s.min = percentile(sorted, 0);
    s.p10 = percentile(sorted, 0.1);
    s.median = percentile(sorted, 0.5);
    s.p90 = percentile(sorted, 0.9);
    s.p99 = percentile(sorted, 0.99);
    s.max = percentile(sorted, 1);
    return s;
}

perf_report measure_program(executable& e, std::span<const param_map> input_sets, const perf_options& o) {
    if (o.iterations == 0) fail("perf: at least 1 iteration is needed");
    if (input_sets.empty()) fail("perf: at least one set of inputs is needed");
    perf_report r;
    r.iterations = o.iterations;
    r.warmup = std::max<std::size_t>(1, o.warmup);
    r.input_sets = input_sets.size();
    for (std::size_t i = 0; i < r.warmup; ++i) {
        auto start = clock_type::now();
        e.run(input_sets[i % input_sets.size()]);
        if (i == 0) r.first_run_ms = since(start);
    }
    time_whole_runs(e, input_sets, r);
    if (o.instructions) time_instructions(e, input_sets, r);
    return r;
}

perf_report measure_program(executable& e, const param_map& inputs, std::size_t iterations) {
    return measure_program(e, std::span<const param_map>(&inputs, 1), perf_options{iterations, 1, true});
}

std::string trace_program(executable& e, const std::string& target_name, const param_map& inputs) {
    const module& m = e.get_program().main();
    auto names = instruction_names(m);
    std::vector<std::string> events;
    auto start = clock_type::now();
    auto us = [&](clock_type::time_point tp) { return std::chrono::duration<double, std::micro>(tp - start).count(); };
    e.run_observed(inputs, [&](const instruction& ins, const argument&, double ms) {
        if (!is_computing(ins)) return;
        double end = us(clock_type::now());
        std::string args = "\"instruction\": " + json_string(instruction_line(m, ins, names));
        events.push_back(slice(std::string(ins.name()), "kernel", std::max(0.0, end - ms * 1000), ms * 1000, args));
    });
    double total = us(clock_type::now());
    std::string s = "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"target\": " + json_string(target_name) +
                    "}, \"traceEvents\": [\n";
    s += "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": " +
         json_string(target_name) + "}},\n";
    s += slice("run", "run", 0, total, "\"instructions\": " + std::to_string(events.size()));
    for (const auto& e : events) s += ",\n" + e;
    return s + "\n]}\n";
}

}  // namespace kiln
