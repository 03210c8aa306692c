// Runs ONNX backend node test folders (model.onnx + test_data_set_N) on a kiln target and
// compares with the expected outputs (rtol 1e-3, atol 1e-5; or relative L2 error with --rel-l2).
// Half-precision outputs get the tolerance of their format instead: rtol 1e-3 is finer than a
// bfloat16 ulp (2^-8) and close to a float16 one (2^-11), and the expected values were computed
// at other intermediate precisions than kiln's; bfloat16 uses rtol 2e-2, float16 rtol 4e-3.
// Prints a line per failing case, a per-op summary and a final "N passed, N failed" line. Exits
// non-zero when a case outside the expected-failures list fails, a listed case passes or fails
// for another reason than the one listed, a listed case no longer exists, or the data folder
// holds fewer cases than the generator's .case-count says the suite ships.
// --precision fp16|bf16 compiles each model to compute in 16 bits (its float32 inputs and outputs
// keep their type), for sweeping the precision conversion over every op.
// --write-expected FILE writes the cases that fail as an expected-failures list, keeping the
// header and the comment lines (the reasons) of the --expected-failures list above the cases that
// still fail; new failures come last, under a line asking for their reasons.
// --shard K/N runs every N-th case from the K-th (0-based), so N processes can share a machine
// (the gpu target compiles kernels per case; scripts/gpu-test.sh conformance runs shards).
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/target.hpp"
#include "frontends/onnx/onnx.hpp"

namespace fs = std::filesystem;
using namespace kiln;

namespace {

struct options {
    std::string data, target = "ref", expected_path, skips_path, filter, write_expected;
    bool verbose = false;
    std::size_t shard = 0, shards = 1;   // --shard K/N
    double rtol = 1e-3, atol = 1e-5;
    double rel_l2 = 0;   // when set, float outputs pass on relative L2 error below it instead
    compute_precision precision = compute_precision::fp32;   // --precision fp16|bf16 (float32 models in 16 bits)
};

std::string trimmed(std::string s) {
    s.erase(s.find_last_not_of(" \t\r") + 1);
    s.erase(0, s.find_first_not_of(" \t"));
    return s;
}

// Lines of a list file, "name" or "name  # reason", as name -> reason (comment lines skipped).
std::map<std::string, std::string> read_list(const std::string& path) {
    std::map<std::string, std::string> out;
    if (path.empty()) return out;
    std::ifstream f(path);
    if (!f) fail("cannot open '", path, "'");
    for (std::string line; std::getline(f, line);) {
        auto hash = line.find('#');
        std::string name = trimmed(line.substr(0, hash));
        if (!name.empty()) out[name] = hash == std::string::npos ? "" : trimmed(line.substr(hash + 1));
    }
    return out;
}

// The number of cases the generator wrote (its .case-count file), or 0 when it wrote none.
std::size_t generated_count(const std::string& data) {
    std::ifstream f(fs::path(data) / ".case-count");
    std::size_t n = 0;
    return f >> n ? n : 0;
}

double relative_l2(const std::vector<double>& a, const std::vector<double>& b) {
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff += (a[i] - b[i]) * (a[i] - b[i]);
        norm += b[i] * b[i];
    }
    return std::sqrt(diff / std::max(norm, 1e-300));
}

std::string compare(const argument& got, const argument& want, const options& o) {
    if (!got.get_shape().is_tensor() || !want.get_shape().is_tensor()) {
        // Sequences and optionals: the same kind, the same number of values, each value equal.
        if (got.get_shape().type() != want.get_shape().type())
            return cat(dtype_name(got.get_shape().type()), ", expected ", dtype_name(want.get_shape().type()));
        const auto &g = got.sub_arguments(), &w = want.sub_arguments();
        if (g.size() != w.size()) return cat(g.size(), " values, expected ", w.size());
        for (std::size_t i = 0; i < g.size(); ++i)
            if (std::string msg = compare(g[i], w[i], o); !msg.empty()) return cat("value ", i, ": ", msg);
        return "";
    }
    dtype t = got.get_shape().type();
    const double rtol = t == dtype::bfloat16 ? std::max(o.rtol, 2e-2) : t == dtype::float16 ? std::max(o.rtol, 4e-3) : o.rtol;
    const double atol = o.atol;
    const shape& g = got.get_shape();
    const shape& w = want.get_shape();
    if (g.type() != w.type()) return cat("type ", dtype_name(g.type()), ", expected ", dtype_name(w.type()));
    if (g.lens() != w.lens()) return cat("lens ", lens_to_string(g.lens()), ", expected ", lens_to_string(w.lens()));
    if (g.type() == dtype::string) {
        auto a = to_strings(got), b = to_strings(want);
        for (std::size_t i = 0; i < a.size(); ++i)
            if (a[i] != b[i]) return cat("element ", i, ": \"", a[i], "\", expected \"", b[i], "\"");
        return "";
    }
    if (!is_float(g.type())) {
        auto a = to_int64s(got), b = to_int64s(want);
        for (std::size_t i = 0; i < a.size(); ++i)
            if (a[i] != b[i]) return cat("element ", i, ": ", a[i], ", expected ", b[i]);
        return "";
    }
    auto a = to_doubles(got), b = to_doubles(want);
    if (o.rel_l2 > 0) {
        double e = relative_l2(a, b);
        if (o.verbose) std::cout << "  relative L2 error " << e << "\n";
        return e < o.rel_l2 ? "" : cat("relative L2 error ", e, " >= ", o.rel_l2);
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) && std::isnan(b[i])) continue;
        if (a[i] == b[i]) continue;
        if (!(std::abs(a[i] - b[i]) <= atol + rtol * std::abs(b[i])))
            return cat("element ", i, ": ", a[i], ", expected ", b[i]);
    }
    return "";
}

// The op a case tests: its only node's type, or the test's name for multi-node graphs.
std::string op_of(const fs::path& model) {
    onnx::ModelProto m;
    std::ifstream f(model, std::ios::binary);
    if (!m.ParseFromIstream(&f)) return "?";
    if (m.graph().node_size() == 1) return m.graph().node(0).op_type();
    return "(multi-node)";
}

// Runs one case folder; returns "" on success or the reason it failed.
std::string run_case(const fs::path& dir, const options& o, const target& t) {
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    for (const auto& set : sets) {
        onnx_test_data data;
        try {
            data = read_onnx_test_data(set.string(), (dir / "model.onnx").string());
        } catch (const error&) {
            // Values kiln cannot hold (strings) fail as test data too; the
            // model, when it fails, says why in its own terms (the input that is not a tensor, the
            // op kiln lacks), so its reason is the one reported.
            onnx_options quiet;
            quiet.warn = [](const std::string&) {};
            parse_onnx_file((dir / "model.onnx").string(), quiet);
            throw;
        }
        onnx_options opts;
        // The tensor inputs' shapes bind the model's symbolic dims.
        for (std::size_t i = 0; i < data.inputs.size() && i < data.input_names.size(); ++i)
            if (!data.input_names[i].empty() && data.inputs[i].get_shape().is_tensor())
                opts.input_dims[data.input_names[i]] = data.inputs[i].get_shape().lens();
        opts.warn = [](const std::string&) {};
        program p = parse_onnx_file((dir / "model.onnx").string(), opts);
        auto names = p.main().parameter_names();
        auto exe = t.compile(std::move(p), {.precision = o.precision}, pass_options{.dump_dir = ""});
        if (names.size() != data.inputs.size())
            return cat("model has ", names.size(), " inputs, test data ", data.inputs.size());
        param_map inputs;
        for (std::size_t i = 0; i < names.size(); ++i) inputs[names[i]] = data.inputs[i];
        auto outs = exe->run(inputs);
        if (outs.size() != data.outputs.size()) return cat(outs.size(), " outputs, expected ", data.outputs.size());
        for (std::size_t i = 0; i < outs.size(); ++i) {
            std::string msg = compare(outs[i], data.outputs[i], o);
            if (!msg.empty()) return cat(set.filename().string(), " output ", i, ": ", msg);
        }
    }
    return "";
}

compute_precision parse_precision(const std::string& s) {
    if (s == "fp32") return compute_precision::fp32;
    if (s == "fp16") return compute_precision::fp16;
    if (s == "bf16") return compute_precision::bf16;
    fail("--precision ", s, ": expected fp32, fp16 or bf16");
}

options parse_args(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) fail(a, " needs a value");
            return argv[++i];
        };
        if (a == "--data") o.data = next();
        else if (a == "--target") o.target = next();
        else if (a == "--expected-failures") o.expected_path = next();
        else if (a == "--skips") o.skips_path = next();
        else if (a == "--filter") o.filter = next();
        else if (a == "--rel-l2") o.rel_l2 = std::stod(next());
        else if (a == "--precision") o.precision = parse_precision(next());
        else if (a == "--write-expected") o.write_expected = next();
        else if (a == "--shard") {
            std::string v = next();
            auto slash = v.find('/');
            if (slash == std::string::npos) fail("--shard ", v, ": expected K/N");
            o.shard = std::stoul(v.substr(0, slash));
            o.shards = std::stoul(v.substr(slash + 1));
            if (o.shards == 0 || o.shard >= o.shards) fail("--shard ", v, ": expected 0 <= K < N");
        } else if (a == "-v" || a == "--verbose") o.verbose = true;
        else fail("unknown option '", a, "'");
    }
    if (o.data.empty()) fail("--data DIR is required");
    return o;
}

// Writes the failing cases (name -> reason) to `out` as an expected-failures list laid out like
// `old`, the list this run read: its header (the comment lines before its first blank line), and
// each block of comment lines (the reasons a reader needs) above the listed cases that still
// fail, which keep their order; a block whose cases all pass goes with them. Cases the list did
// not hold come last, under a line that asks for their reasons.
void write_expected(const std::string& out, const std::string& old, const std::map<std::string, std::string>& failing,
                    const std::string& target) {
    std::ostringstream text;
    std::set<std::string> written;
    std::string pending;          // comment and blank lines waiting for a case of their block that still fails
    bool header = true, after_case = false;
    if (std::ifstream f(old); f && !old.empty()) {
        for (std::string line; std::getline(f, line);) {
            std::string name = trimmed(line.substr(0, line.find('#')));
            if (!name.empty()) {
                header = false;
                after_case = true;
                if (auto it = failing.find(name); it != failing.end()) {
                    text << pending << name << "  # " << it->second << "\n";
                    written.insert(name);
                    pending.clear();
                }
                continue;
            }
            if (after_case) pending.clear();   // a new block: the last one's comments go if none of its cases stayed
            after_case = false;
            pending += line + "\n";
            if (header && trimmed(line).empty()) {
                text << pending;
                pending.clear();
                header = false;
            }
        }
    }
    if (text.str().empty())
        text << "# ONNX backend node cases that fail on " << target << ", with the reason. This list may only shrink:\n"
             << "# the conformance test fails when a case outside it fails or a case in it passes.\n\n";
    bool noted = false;
    for (const auto& [name, why] : failing) {
        if (written.count(name)) continue;
        if (!noted) text << "# Not listed before this run: each needs a one-line reason a reader would accept.\n";
        noted = true;
        text << name << "  # " << why << "\n";
    }
    std::ofstream(out) << text.str();
}

struct tally {
    int passed = 0, failed = 0;
};

}  // namespace

int main(int argc, char** argv) try {
    options o = parse_args(argc, argv);
    auto expected = read_list(o.expected_path);
    std::vector<std::regex> skips;
    for (const auto& [s, why] : read_list(o.skips_path)) skips.emplace_back(s);
    auto t = make_target(o.target);

    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(o.data))
        if (e.is_directory() && fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    // The gate cannot pass empty: every case the suite ships must be here, and every listed
    // expected failure must still exist.
    int gate_errors = 0;
    if (std::size_t want = generated_count(o.data); dirs.empty() || dirs.size() < want) {
        std::cout << "FOUND " << dirs.size() << " cases in " << o.data << " but the suite ships " << want
                  << " (regenerate the data)\n";
        ++gate_errors;
    }
    std::set<std::string> present;
    for (const auto& d : dirs) present.insert(d.filename().string());
    for (const auto& [name, why] : expected)
        if (o.filter.empty() && !present.count(name)) {
            std::cout << "LISTED CASE MISSING " << name << " (remove it from the expected-failures list)\n";
            ++gate_errors;
        }

    std::map<std::string, tally> per_op;
    std::map<std::string, std::string> failing;   // name -> reason
    int passed = 0, failed = 0, expected_failed = 0, skipped = 0, unexpected = 0;
    for (std::size_t i = o.shard; i < dirs.size(); i += o.shards) {
        const fs::path& dir = dirs[i];
        std::string name = dir.filename().string();
        if (!o.filter.empty() && name.find(o.filter) == std::string::npos) continue;
        if (std::any_of(skips.begin(), skips.end(), [&](const std::regex& r) { return std::regex_match(name, r); })) {
            ++skipped;
            continue;
        }
        std::string why;
        try {
            why = run_case(dir, o, *t);
        } catch (const std::exception& e) {
            why = e.what();
        }
        std::replace(why.begin(), why.end(), '\n', ' ');
        // Messages name files by full path; the case name already says which.
        for (std::size_t p; (p = why.find(dir.string() + "/")) != std::string::npos;) why.erase(p, dir.string().size() + 1);
        tally& op = per_op[op_of(dir / "model.onnx")];
        auto entry = expected.find(name);
        bool listed = entry != expected.end();
        if (why.empty()) {
            ++passed;
            ++op.passed;
            if (listed) {
                ++unexpected;
                std::cout << "UNEXPECTED PASS " << name << " (remove it from the expected-failures list)\n";
            } else if (o.verbose) {
                std::cout << "pass " << name << "\n";
            }
        } else {
            ++failed;
            ++op.failed;
            std::string reason = trimmed(why.substr(0, 120));
            failing[name] = reason;
            if (listed && entry->second != reason) {
                ++unexpected;
                std::cout << "FAILS FOR ANOTHER REASON " << name << ":\n  listed: " << entry->second
                          << "\n  now:    " << reason << "\n";
            } else if (listed) {
                ++expected_failed;
            } else {
                ++unexpected;
            }
            if (!listed || o.verbose)
                std::cout << (listed ? "expected failure " : "FAIL ") << name << ": " << why.substr(0, 300) << "\n";
        }
    }
    std::cout << "\nper op (passed/total):\n";
    for (const auto& [op, c] : per_op)
        if (c.failed || o.verbose) std::cout << "  " << op << ": " << c.passed << "/" << c.passed + c.failed << "\n";
    std::cout << "target " << o.target << ": " << skipped << " skipped, " << expected_failed
              << " expected failures, " << unexpected << " unexpected results\n";
    std::cout << passed << " passed, " << failed << " failed\n";
    unexpected += gate_errors;
    if (!o.write_expected.empty()) {
        write_expected(o.write_expected, o.expected_path, failing, o.target);
        std::cout << "wrote " << failing.size() << " expected failures to " << o.write_expected << "\n";
        return 0;
    }
    return unexpected == 0 ? 0 : 1;
} catch (const std::exception& e) {
    std::cerr << "kiln_onnx_conformance: error: " << e.what() << "\n";
    return 2;
}
