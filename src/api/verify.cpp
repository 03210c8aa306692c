// kiln::api::verify and time_runs: the Python module's verify() and perf_report(). The oracle is
// the program as parsed, run on ref without optimisation; the candidate is a copy compiled for
// the target. Copies go through the text IR, which round-trips exactly.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <sstream>

#include "api/api_program.hpp"
#include "core/error.hpp"
#include "core/text_parser.hpp"

namespace kiln::api {

namespace {

output_check compare(const std::string& name, const argument& got, const argument& want, tolerance tol) {
    output_check c{name};
    const shape &g = got.get_shape(), &w = want.get_shape();
    if (g.lens() != w.lens()) {
        c.reason = cat("lens ", lens_to_string(g.lens()), ", expected ", lens_to_string(w.lens()));
        return c;
    }
    auto a = to_doubles(got), b = to_doubles(want);
    double sum_sq = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) && std::isnan(b[i])) continue;
        double d = a[i] == b[i] ? 0.0 : std::abs(a[i] - b[i]);
        sum_sq += d * d;
        c.max_abs = std::max(c.max_abs, d);
        if (b[i] != 0) c.max_rel = std::max(c.max_rel, d / std::abs(b[i]));
        if (c.reason.empty() && !(d <= tol.atol + tol.rtol * std::abs(b[i])))
            c.reason = cat("element ", i, ": ", a[i], ", expected ", b[i]);
    }
    c.rms = a.empty() ? 0.0 : std::sqrt(sum_sq / static_cast<double>(a.size()));
    c.passed = c.reason.empty();
    return c;
}

api_program copy_of(const api_program& p) {
    api_program c;
    c.prog = parse_text(to_string(p.prog));
    c.input_names = p.input_names;
    c.output_names = p.output_names;
    return c;
}

}  // namespace

std::string verify_report::to_string() const {
    std::ostringstream os;
    for (const auto& o : outputs) {
        os << o.name << ": max abs error " << o.max_abs << ", max rel error " << o.max_rel << ", rms " << o.rms
           << ": " << (o.passed ? "PASS" : "FAIL");
        if (!o.passed) os << " (" << o.reason << ")";
        os << "\n";
    }
    os << (passed ? "PASSED" : "FAILED");
    return os.str();
}

verify_report verify(const api_program& p, param_map inputs, const std::string& target_name,
                     const compile_options& opts, tolerance tol, std::uint64_t seed) {
    if (p.compiled())
        throw stage_error(stage::compile, cat("verify takes the program as parsed, but it is compiled for '",
                                              p.target_name(), "'; parse or load it again"));
    api_program oracle = copy_of(p), candidate = copy_of(p);
    compile(oracle, "ref", compile_options{.optimize = false});
    compile(candidate, target_name, opts);
    inputs = complete_inputs(p, std::move(inputs), seed);
    auto want = run(oracle, inputs);
    auto got = run(candidate, inputs);
    verify_report r{true, seed, {}};
    for (std::size_t i = 0; i < want.size(); ++i) {
        r.outputs.push_back(compare(p.output_names[i], got.at(i), want[i], tol));
        r.passed = r.passed && r.outputs.back().passed;
    }
    return r;
}

std::string perf_report::to_string() const {
    std::ostringstream os;
    os << "target " << target << ", " << iterations << " runs: mean " << mean_ms << " ms, median " << median_ms
       << " ms, min " << min_ms << " ms, max " << max_ms << " ms\ninstructions by op:";
    for (const auto& [op, n] : op_counts) os << "\n  " << op << ": " << n;
    return os.str();
}

perf_report time_runs(const api_program& p, param_map inputs, std::size_t iterations, std::uint64_t seed) {
    if (iterations == 0) throw stage_error(stage::input, "perf_report: iterations must be at least 1");
    inputs = complete_inputs(p, std::move(inputs), seed);
    run(p, inputs);   // warm-up
    std::vector<double> ms;
    for (std::size_t i = 0; i < iterations; ++i) {
        auto start = std::chrono::steady_clock::now();
        run(p, inputs);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    perf_report r{p.target_name(), iterations};
    std::sort(ms.begin(), ms.end());
    for (double m : ms) r.mean_ms += m / static_cast<double>(iterations);
    r.min_ms = ms.front();
    r.max_ms = ms.back();
    r.median_ms = ms[ms.size() / 2];
    std::map<std::string, std::size_t> counts;
    for (const auto& ins : p.prog.main())
        if (!ins.is_param() && !ins.is_literal() && !ins.is_return()) ++counts[std::string(ins.name())];
    r.op_counts.assign(counts.begin(), counts.end());
    std::stable_sort(r.op_counts.begin(), r.op_counts.end(), [](auto& a, auto& b) { return a.second > b.second; });
    return r;
}

}  // namespace kiln::api
