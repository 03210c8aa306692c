// kiln::api::verify and time_runs: the Python module's verify() and perf_report(), which are the
// driver's verify_program and measure_program (src/runtime) with the API's output names, input
// checks and error stages.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "api/api_program.hpp"
#include "core/error.hpp"
#include "tools/verify.hpp"

namespace kiln::api {

namespace {

std::string ms(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g ms", v);
    return buf;
}

std::string pct(double share) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.0f%%", 100 * share);
    return buf;
}

double share_of(double part, double whole) { return whole > 0 ? part / whole : 0; }

std::vector<std::pair<std::string, std::size_t>> count_ops(const module& m) {
    std::map<std::string, std::size_t> counts;
    for (const auto& ins : m)
        if (!ins.is_param() && !ins.is_literal() && !ins.is_return()) ++counts[std::string(ins.name())];
    std::vector<std::pair<std::string, std::size_t>> r(counts.begin(), counts.end());
    std::stable_sort(r.begin(), r.end(), [](auto& a, auto& b) { return a.second > b.second; });
    return r;
}

}  // namespace

std::string output_check::reason() const {
    if (cmp.pass) return "";
    std::string r;
    for (char c : describe(cmp, "")) r += c == '\n' ? std::string("; ") : std::string(1, c);
    return r.substr(0, r.size() - 2);   // describe ends each line with '\n'
}

std::string verify_report::to_string() const {
    std::ostringstream os;
    for (const auto& o : outputs) os << o.name << ": " << (o.cmp.pass ? "PASS" : "FAIL") << "\n" << describe(o.cmp);
    os << (passed ? "PASSED" : "FAILED");
    return os.str();
}

verify_report verify(const api_program& p, param_map inputs, const std::string& target_name,
                     const compile_options& opts, const tolerance_overrides& tol, std::uint64_t seed) {
    auto t = at_stage(stage::target, [&] { return make_target(target_name.empty() ? default_target() : target_name); });
    if (p.compiled())
        throw stage_error(stage::compile, cat("verify takes the program as parsed, but it is compiled for '",
                                              p.target_name(), "'; parse or load it again"));
    inputs = complete_inputs(p, std::move(inputs), seed);
    check_inputs(p, inputs);
    run_control_scope scope(p.control);
    verify_result v = at_stage(stage::compile, [&] { return verify_program(p.prog, *t, inputs, {opts, tol}); });
    verify_report r{v.pass, seed, {}};
    for (std::size_t i = 0; i < v.outputs.size(); ++i) r.outputs.push_back({p.output_names.at(i), v.outputs[i].cmp});
    return r;
}

std::string perf_result::to_string() const {
    const perf_report& t = timings;
    std::ostringstream os;
    os << "target " << target << ", " << t.iterations << " runs: mean " << ms(t.mean) << ", min " << ms(t.min)
       << ", median " << ms(t.median) << ", p90 " << ms(t.p90) << ", p99 " << ms(t.p99) << ", max " << ms(t.max)
       << "\ntotal " << ms(t.iq_mean) << " (interquartile mean), " << t.rate() << " runs/s";
    if (instructions.empty()) return os.str() + "\n(this target does not time single instructions)";
    os << "\ninstructions " << ms(t.instructions_ms) << ", overhead " << ms(t.overhead_ms) << "\nper instruction:";
    for (const auto& i : instructions) os << "\n  " << i.line << ": " << ms(i.ms) << ", " << pct(i.share);
    os << "\nby op:";
    for (const auto& [op, m, s] : by_op) os << "\n  " << op << ": " << ms(m) << ", " << pct(s);
    return os.str();
}

perf_result time_runs(api_program& p, param_map inputs, std::size_t iterations, std::uint64_t seed) {
    if (iterations == 0) throw stage_error(stage::input, "perf_report: iterations must be at least 1");
    if (!p.compiled()) throw stage_error(stage::run, "the program is not compiled: compile it for a target first");
    inputs = complete_inputs(p, std::move(inputs), seed);
    check_inputs(p, inputs);
    perf_result r{p.target_name()};
    std::lock_guard lock(p.running);
    run_control_scope scope(p.control);
    r.timings = at_stage(stage::run, [&] { return measure_program(*p.exe, inputs, iterations); });
    double total = r.timings.instructions_ms;
    for (const auto& i : r.timings.instructions) r.instructions.push_back({i.line, i.op, i.ms, share_of(i.ms, total)});
    for (const auto& [op, m] : r.timings.by_op) r.by_op.emplace_back(op, m, share_of(m, total));
    r.op_counts = count_ops(p.current().main());
    return r;
}

}  // namespace kiln::api
