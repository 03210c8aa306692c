// The compile, verify and perf commands, saved programs through the driver, and the loading and
// output options they share with read, params and run.
#include "driver_util.hpp"

#include <cstdlib>

#include "core/target.hpp"
#include "core/value.hpp"

namespace kiln {
namespace {

using namespace driver_test;

class driver_cmd : public driver_fixture {
protected:
    std::string small = data_dir + "small.kir";
    std::string path(const std::string& name) const { return (tmp / name).string(); }
    // Runs kiln on ref with its deliberately broken -O pass (docs/driver.md).
    result broken(const std::string& args, const char* replace = "mul:add") const {
        setenv("KILN_DEBUG_REPLACE_OP", replace, 1);
        result r = kiln(args + " --ref");
        unsetenv("KILN_DEBUG_REPLACE_OP");
        return r;
    }
};

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST_F(driver_cmd, help_lists_the_new_commands_and_options) {
    auto top = kiln("--help").out;
    for (const char* c : {"compile ", "verify ", "perf "}) EXPECT_TRUE(has(top, c)) << c;
    const std::vector<std::string> compile_opts = {"--gpu", "--cpu", "--ref", "--optimize", "-O", "--fp16", "--bf16",
                                                   "--int8", "--fp8", "--enable-offload-copy", "--disable-fast-math",
                                                   "--exhaustive-tune"};
    const std::vector<std::string> loading = {"--onnx", "--kiln", "--kiln-json", "--kiln-text", "--batch",
                                              "--input-dim", "--dyn-input-dim", "--default-dyn-dim",
                                              "--skip-unknown-operators", "--trim", "-t"};
    std::map<std::string, std::vector<std::string>> options = {
        {"compile", {"--text", "--json", "--graphviz", "-g", "--binary", "--output", "-o", "--brief", "--full", "--quiet"}},
        {"verify", {"--rms-tol", "--atol", "--rtol", "--per-instruction", "-i", "--reduce", "-r", "--bisect", "--fill0",
                    "--fill1", "--input", "--seed"}},
        {"perf", {"--iterations", "-n", "--trace", "--fill0", "--fill1", "--input"}},
        {"read", {"--text", "--json", "--graphviz", "-g", "--binary", "--brief", "--full", "-O"}},
        {"run", {"-O", "--fp16"}},
    };
    for (auto& [cmd, opts] : options) {
        auto r = kiln(cmd + " --help");
        EXPECT_EQ(r.status, 0) << cmd;
        EXPECT_TRUE(has(r.out, "examples:\n  kiln " + cmd)) << r.out;
        std::vector<std::string> all = opts;
        all.insert(all.end(), loading.begin(), loading.end());
        if (cmd != "read") all.insert(all.end(), compile_opts.begin(), compile_opts.end());
        for (const auto& o : all) EXPECT_TRUE(has(r.out, "  " + o) || has(r.out, ", " + o)) << cmd << " " << o;
    }
}

TEST_F(driver_cmd, compiled_program_runs_without_recompiling) {
    auto c = kiln("compile " + small + " -O --ref -o " + path("s.kiln"));
    ASSERT_EQ(c.status, 0) << c.err;
    EXPECT_TRUE(has(c.out, "Compiled for ref (-O) in ")) << c.out;
    EXPECT_TRUE(has(c.out, "kernels compiled: 0 (cache hits 0)")) << c.out;
    EXPECT_TRUE(has(c.out, "Wrote " + path("s.kiln") + " (saved program, ")) << c.out;
    auto saved = kiln("run " + path("s.kiln") + " --seed 3");
    ASSERT_EQ(saved.status, 0) << saved.err;
    EXPECT_TRUE(has(saved.out, "Loaded " + path("s.kiln") + " in ")) << saved.out;
    EXPECT_TRUE(has(saved.out, "not compiled again")) << saved.out;
    EXPECT_FALSE(has(saved.out, "Compiled for")) << saved.out;
    auto source = kiln("run " + small + " -O --ref --seed 3");
    EXPECT_TRUE(has(source.out, "Compiled for ref (-O)")) << source.out;
    for (const char* o : {"#output_0", "#output_1"}) {
        EXPECT_FALSE(values_after(saved.out, o).empty()) << saved.out;
        EXPECT_EQ(values_after(saved.out, o), values_after(source.out, o)) << o;
    }
    // --kiln reads a saved program whatever its name.
    std::filesystem::copy_file(path("s.kiln"), path("s.bin"));
    EXPECT_EQ(kiln("run " + path("s.bin") + " --kiln --seed 3 --quiet").status, 0);
    EXPECT_EQ(kiln("params " + path("s.bin")).out, kiln("params " + small).out);
}

// Without a target flag the driver compiles for the default target: cpu on a machine without a GPU.
TEST_F(driver_cmd, default_target_is_cpu_without_a_gpu) {
    auto built = built_targets();
    bool gpu_found = false;
    if (std::find(built.begin(), built.end(), "gpu") != built.end()) {
        try {
            make_target("gpu");
            gpu_found = true;
        } catch (const std::exception&) {
        }
    }
    EXPECT_EQ(default_target(), gpu_found ? "gpu" : "cpu");
    auto r = kiln("run " + small + " -O --seed 3");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "Compiled for " + default_target() + " (-O)")) << r.out;
    auto v = kiln("verify " + small + " -O");
    EXPECT_EQ(v.status, 0) << v.out << v.err;
    EXPECT_TRUE(has(v.out, ": " + default_target() + " (-O) against ref (no passes)")) << v.out;
    EXPECT_TRUE(has(kiln("run " + small + " --help").out, "the cpu target (the default where no GPU is found)"));
}

TEST_F(driver_cmd, pass_options_time_trace_and_disable) {
    auto plain = kiln("compile " + small + " -O -o " + path("p.kiln"));
    ASSERT_EQ(plain.status, 0) << plain.err;
    EXPECT_TRUE(has(plain.out, "program: 5 instructions -> ")) << plain.out;
    EXPECT_TRUE(has(plain.out, " kernel launches; arena ")) << plain.out;
    EXPECT_FALSE(has(plain.out, "passes: ")) << plain.out;
    auto timed = kiln("compile " + small + " -O --time-passes -o " + path("t.kiln"));
    EXPECT_TRUE(has(timed.out, "passes: propagate_constant ")) << timed.out;
    EXPECT_TRUE(has(timed.out, "fuse_pointwise ")) << timed.out;
    auto traced = kiln("compile " + small + " -O --trace-passes -o " + path("tr.kiln"));
    EXPECT_TRUE(has(traced.err, "after fuse_pointwise:")) << traced.err;
    auto fused = kiln("compile " + small + " -O");
    EXPECT_TRUE(has(fused.out, "pointwise")) << fused.out;
    auto off = kiln("compile " + small + " -O --disable-pass fuse_pointwise --disable-pass fuse_reduce");
    ASSERT_EQ(off.status, 0) << off.err;
    EXPECT_FALSE(has(off.out, "pointwise")) << off.out;   // the program is on stdout
    EXPECT_TRUE(has(off.out, "relu(")) << off.out;
    auto bad = kiln("compile " + small + " -O --ref --disable-pass fuse_everything");
    EXPECT_EQ(bad.status, 2);
    EXPECT_TRUE(has(bad.err, "--disable-pass fuse_everything: the ref pipeline has no such pass (its passes: "
                             "propagate_constant, "))
        << bad.err;
}

TEST_F(driver_cmd, saved_program_errors) {
    ASSERT_EQ(kiln("compile " + small + " -o " + path("s.kiln") + " --quiet").status, 0);
    auto opt = kiln("run " + path("s.kiln") + " -O");
    EXPECT_EQ(opt.status, 2);
    EXPECT_TRUE(has(opt.err, "--optimize (-O) is a compile option, but '" + path("s.kiln") +
                                 "' is a saved program, compiled already (no passes)"))
        << opt.err;
    EXPECT_EQ(kiln("perf " + path("s.kiln") + " --fp16").status, 2);
    auto again = kiln("compile " + path("s.kiln"));
    EXPECT_EQ(again.status, 2);
    EXPECT_TRUE(has(again.err, "is a saved program, compiled already")) << again.err;
    auto verify = kiln("verify " + path("s.kiln"));
    EXPECT_EQ(verify.status, 2);
    EXPECT_TRUE(has(verify.err, "verify compiles the source model itself")) << verify.err;
    std::string bytes = read_file(path("s.kiln"));
    std::ofstream(path("cut.kiln"), std::ios::binary) << bytes.substr(0, bytes.size() - 70);
    auto cut = kiln("run " + path("cut.kiln"));
    EXPECT_EQ(cut.status, 1);
    EXPECT_TRUE(has(cut.err, "kiln: error: '" + path("cut.kiln") + "' is truncated: section")) << cut.err;
    bytes[bytes.size() - 80] ^= 0x40;
    std::ofstream(path("flip.kiln"), std::ios::binary) << bytes;
    auto flip = kiln("run " + path("flip.kiln"));
    EXPECT_EQ(flip.status, 1);
    EXPECT_TRUE(has(flip.err, "is corrupted: the checksum of section")) << flip.err;
    std::ofstream(path("text.kiln")) << "module: \"main\"\n";
    auto text = kiln("run " + path("text.kiln"));
    EXPECT_EQ(text.status, 1);
    EXPECT_TRUE(has(text.err, "is not a kiln saved program (wrong magic bytes)")) << text.err;
}

TEST_F(driver_cmd, perf_reports_instructions_summary_and_spread) {
    ASSERT_EQ(kiln("compile " + small + " -O -o " + path("s.kiln") + " --quiet").status, 0);
    for (const std::string& file : {small + " -O", path("s.kiln")}) {
        auto r = kiln("perf " + file + " -n 5");
        ASSERT_EQ(r.status, 0) << r.err;
        auto ls = lines(r.out);
        // -O fused add, mul and relu into one kernel, timed as one instruction.
        bool fused_line = std::any_of(ls.begin(), ls.end(), [](const std::string& l) {
            return l.rfind("@0 = pointwise(x,y), [pointwise0] -> float_type, {2, 3}, {3, 1}: ", 0) == 0 &&
                   l.back() == '%';
        });
        EXPECT_TRUE(fused_line) << r.out;
        for (const std::string& part : std::vector<std::string>{"Running performance report (5 iterations) on " + default_target(), "\nSummary:\n", "\nsoftmax: ",
                                 "Batch size: 1\n", "Rate: ", "/sec\n", "Total time: ", "(interquartile mean of 5 runs)",
                                 "Run time: mean ", ", min ", ", median ", ", p90 ", ", p99 ", ", max ",
                                 "Total instructions time: ", "Overhead time: "})
            EXPECT_TRUE(has(r.out, part)) << part << "\n" << r.out;
    }
    EXPECT_TRUE(has(kiln("perf " + path("s.kiln") + " -n 2").out, "not compiled again"));
    EXPECT_TRUE(has(kiln("perf " + data_dir + "dynamic.kir --batch 4 -n 2").out, "Batch size: 4"));
    EXPECT_EQ(kiln("perf " + small + " -n 0").status, 2);
    EXPECT_EQ(kiln("perf " + small + " --iterations x").status, 2);
}

TEST_F(driver_cmd, perf_json_warmup_and_input_sets) {
    auto r = kiln("perf " + small + " -O --ref -n 6 --warmup 2 --input-sets 3 --runs-only --json " + path("perf.json"));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "(3 input sets, seeds 0 to 2, taken in turn by the runs)")) << r.out;
    EXPECT_TRUE(has(r.out, "(warm-up, not counted: 2 runs)")) << r.out;
    EXPECT_TRUE(has(r.out, ", p10 ")) << r.out;
    EXPECT_FALSE(has(r.out, "Summary:")) << r.out;   // --runs-only
    EXPECT_FALSE(has(r.out, "Device time")) << r.out;   // ref has no device clock
    value j = parse_json(read_file(path("perf.json")));
    EXPECT_EQ(j.at("target").as_string(), "ref");
    EXPECT_EQ(j.at("iterations").as_int(), 6);
    EXPECT_EQ(j.at("warmup").as_int(), 2);
    EXPECT_EQ(j.at("input_sets").as_int(), 3);
    EXPECT_TRUE(j.at("device_ms").is_null());
    const value& runs = j.at("run_ms");
    EXPECT_LE(runs.at("p10").as_float(), runs.at("median").as_float());
    EXPECT_LE(runs.at("median").as_float(), runs.at("p90").as_float());
    EXPECT_GT(j.at("compile").at("total_ms").as_float(), 0);
    EXPECT_FALSE(j.at("compile").at("passes").as_array().empty());
    EXPECT_TRUE(j.at("instructions").as_array().empty());
    EXPECT_EQ(kiln("perf " + small + " --warmup 0").status, 2);
    EXPECT_EQ(kiln("perf " + small + " --input-sets 0").status, 2);
}

TEST_F(driver_cmd, perf_trace_is_valid_chrome_trace) {
    auto r = kiln("perf " + small + " -n 2 --trace " + path("trace.json"));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "Trace of one run: " + path("trace.json"))) << r.out;
    value t = parse_json(read_file(path("trace.json")));
    std::vector<std::string> names;
    for (const auto& e : t.at("traceEvents").as_array()) {
        if (e.at("ph").as_string() != "X") continue;
        EXPECT_TRUE(e.at("ts").is_number());
        EXPECT_TRUE(e.at("dur").is_number());
        names.push_back(e.at("name").as_string());
    }
    EXPECT_EQ(names, (std::vector<std::string>{"run", "add", "mul", "relu", "softmax", "transpose"}));
}

TEST_F(driver_cmd, verify_passes_with_tolerances_shown) {
    auto r = kiln("verify " + small + " -O --ref");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "Verifying " + small + ": ref (-O) against ref (no passes)")) << r.out;
    EXPECT_TRUE(has(r.out, "#output_0: PASS\n  RMS error 0 (rms_tol 0.001), 0 of 6 elements not close (atol 0.001, rtol 0.001)"))
        << r.out;
    EXPECT_TRUE(has(r.out, "PASS: 2 outputs match ref")) << r.out;
    auto o = kiln("verify " + small + " --rms-tol 0.5 --atol 0.25 --rtol 0.125");
    EXPECT_TRUE(has(o.out, "(rms_tol 0.5), 0 of 6 elements not close (atol 0.25, rtol 0.125)")) << o.out;
    EXPECT_EQ(kiln("verify " + small + " --atol -1").status, 2);
    EXPECT_TRUE(has(kiln("verify " + small + " -O --fp16").out, "(rms_tol 0.08)"));
}

TEST_F(driver_cmd, verify_fails_on_a_broken_kernel_and_bisect_finds_it) {
    auto v = broken("verify " + small + " -O");
    EXPECT_EQ(v.status, 1);
    EXPECT_TRUE(has(v.out, "#output_0: FAIL\n")) << v.out;
    EXPECT_TRUE(has(v.out, "worst element [")) << v.out;
    EXPECT_TRUE(has(v.err, "kiln: error: verify: 2 of 2 outputs differ from ref")) << v.err;
    auto b = broken("verify " + small + " -O --bisect");
    EXPECT_EQ(b.status, 1);
    EXPECT_TRUE(has(b.out, "First diverging instruction (")) << b.out;
    EXPECT_TRUE(has(b.out, "\n  @2 = mul(@1,y) -> float_type, {2, 3}, {3, 1}\n  inputs:\n"
                           "    @1: float_type, {2, 3}, {3, 1}\n    y: float_type, {3}, {1}\n"))
        << b.out;
    // The broken mul is inside the fused kernel that computes add, mul and relu.
    EXPECT_TRUE(has(b.out, "compiled as:\n    @0 = pointwise(x,y), [pointwise0]")) << b.out;
    EXPECT_TRUE(has(b.err, "kiln: error: verify: @2 is the first instruction whose value differs from ref")) << b.err;
    // Without the broken pass there is nothing to find.
    auto ok = kiln("verify " + small + " -O --ref --bisect");
    EXPECT_EQ(ok.status, 0);
    EXPECT_TRUE(has(ok.out, "PASS: every output matches ref, nothing to bisect")) << ok.out;
    auto bad = broken("verify " + small + " -O", "mul");
    EXPECT_EQ(bad.status, 1);
    EXPECT_TRUE(has(bad.err, "KILN_DEBUG_REPLACE_OP expects A:B")) << bad.err;
}

TEST_F(driver_cmd, reduce_writes_a_smaller_failing_program) {
    auto r = broken("verify " + small + " -O -r -o " + path("reduced.kir"));
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(has(r.out, "Reduced program (6 of 9 instructions, still failing): " + path("reduced.kir"))) << r.out;
    std::string text = read_file(path("reduced.kir"));
    EXPECT_TRUE(has(text, "@2 = mul(@1,y)")) << text;
    EXPECT_FALSE(has(text, "softmax")) << text;
    EXPECT_EQ(broken("verify " + path("reduced.kir") + " -O").status, 1);
    EXPECT_EQ(kiln("verify " + path("reduced.kir") + " -O --ref").status, 0);
    auto shown = broken("verify " + small + " -O --reduce");
    EXPECT_TRUE(has(shown.out, "still failing):\nmodule: \"main\"\n")) << shown.out;
    EXPECT_EQ(kiln("verify " + small + " -o x.kir").status, 2);
    EXPECT_EQ(kiln("verify " + small + " -i --bisect").status, 2);
}

TEST_F(driver_cmd, per_instruction_checks_each_alone) {
    auto ok = kiln("verify " + small + " -O --ref -i");
    EXPECT_EQ(ok.status, 0) << ok.err;
    EXPECT_TRUE(has(ok.out, "@3 = relu(@2) -> float_type, {2, 3}, {3, 1}: PASS\n")) << ok.out;
    EXPECT_TRUE(has(ok.out, "PASS: 5 instructions match ref, each alone")) << ok.out;
    auto bad = broken("verify " + small + " -O -i");
    EXPECT_EQ(bad.status, 1);
    EXPECT_TRUE(has(bad.out, "@2 = mul(@1,y) -> float_type, {2, 3}, {3, 1}: FAIL\n    RMS error")) << bad.out;
    EXPECT_TRUE(has(bad.out, "@3 = relu(@2) -> float_type, {2, 3}, {3, 1}: PASS")) << bad.out;
    EXPECT_TRUE(has(bad.err, "verify -i: 1 of 5 instructions differ from ref")) << bad.err;
}

TEST_F(driver_cmd, compile_flags_that_do_not_exist_yet_fail_clearly) {
    for (const char* q : {"int8", "fp8"}) {
        auto r = kiln("compile " + small + " --" + q);
        EXPECT_EQ(r.status, 1);
        EXPECT_TRUE(has(r.err, std::string("--") + q + ": " + q + " quantization is not implemented in kiln yet")) << r.err;
    }
    EXPECT_EQ(kiln("compile " + small + " --cpu -o " + path("x.kiln")).status, 0);
    EXPECT_EQ(kiln("compile " + small + " --fp16 --bf16").status, 2);
    EXPECT_EQ(kiln("compile " + small + " --gpu --ref").status, 2);
    auto half = kiln("compile " + small + " -O --ref --fp16 -o " + path("h.kiln"));
    EXPECT_TRUE(has(half.out, "Compiled for ref (-O, fp16)")) << half.out;
    EXPECT_TRUE(has(kiln("run " + path("h.kiln")).out, "not compiled again"));
    auto ignored = kiln("compile " + small + " --ref --enable-offload-copy --disable-fast-math --exhaustive-tune -o " +
                        path("i.kiln"));
    for (const char* i : {"ignored: --enable-offload-copy (ref runs in host memory)",
                          "ignored: --disable-fast-math", "ignored: --exhaustive-tune"})
        EXPECT_TRUE(has(ignored.out, i)) << ignored.out;
}

// The gpu target's options: ref names each as ignored; they are stored in saved programs.
TEST_F(driver_cmd, gpu_options_are_reported_and_saved) {
    auto r = kiln("compile " + small + " --ref --allow-tf32 --no-cache --device 1 -o " + path("g.kiln"));
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char* i : {"ignored: --allow-tf32 (ref computes float32 in float32)", "ignored: --device 1 (ref runs on the host)",
                          "ignored: --no-cache (only the gpu target's kernel cache can be bypassed so far)", "tf32, device 1, no kernel cache"})
        EXPECT_TRUE(has(r.out, i)) << r.out;
    std::string header = read_file(path("g.kiln")).substr(0, 4096);
    for (const char* o : {"\"allow_tf32\": true", "\"device\": 1", "\"kernel_cache\": false"})
        EXPECT_TRUE(has(header, o)) << o;
    EXPECT_EQ(kiln("run " + path("g.kiln") + " --allow-tf32").status, 2);   // a compile option of a saved program
    auto bad = kiln("compile " + small + " --device x");
    EXPECT_EQ(bad.status, 2);
    EXPECT_TRUE(has(bad.err, "--device x: expected a device number >= 0")) << bad.err;
}

TEST_F(driver_cmd, compile_to_stdout_keeps_stdout_a_program) {
    auto r = kiln("compile " + small + " -O --ref");
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out.rfind("module: \"main\"\n", 0), 0u) << r.out;
    EXPECT_TRUE(has(r.err, "Compiled for ref (-O)")) << r.err;
    EXPECT_FALSE(has(r.err, "compiling:")) << r.err;   // no progress: stderr is not a terminal
    auto q = kiln("compile " + small + " -O --quiet -o " + path("q.kiln"));
    EXPECT_EQ(q.out + q.err, "");
    EXPECT_TRUE(has(kiln("compile " + small + " -O --json").out, "\"modules\""));
    EXPECT_EQ(kiln("compile " + small + " --binary").status, 2);
}

TEST_F(driver_cmd, read_writes_every_format_and_reads_json_back) {
    ASSERT_EQ(kiln("read " + small + " -o " + path("s.json")).status, 0);
    EXPECT_EQ(read_file(path("s.json")), kiln("read " + small + " --json").out);
    auto from_json = kiln("run " + path("s.json") + " --seed 2 --quiet").out;
    auto from_text = kiln("run " + small + " --seed 2 --quiet").out;
    EXPECT_FALSE(values_after(from_json, "#output_0").empty()) << from_json;
    EXPECT_EQ(values_after(from_json, "#output_0"), values_after(from_text, "#output_0"));
    EXPECT_EQ(values_after(from_json, "#output_1"), values_after(from_text, "#output_1"));
    std::filesystem::copy_file(path("s.json"), path("s.txt"));
    EXPECT_EQ(kiln("read " + path("s.txt") + " --kiln-json").out, kiln("read " + small).out);
    EXPECT_EQ(kiln("read " + path("s.txt")).out, kiln("read " + small).out);   // detected by its '{'
    auto dot = kiln("read " + small + " -g");
    EXPECT_EQ(dot.out.rfind("digraph kiln {", 0), 0u) << dot.out;
    EXPECT_TRUE(has(dot.out, "@2 mul\\nfloat_type, {2, 3}")) << dot.out;
    ASSERT_EQ(kiln("read " + small + " -o " + path("s.kiln")).status, 0);
    EXPECT_EQ(kiln("read " + path("s.kiln")).out, kiln("read " + small).out);
    EXPECT_EQ(kiln("read " + small + " --binary").status, 2);
    EXPECT_EQ(kiln("read " + small + " --json --graphviz").status, 2);
    EXPECT_EQ(kiln("read " + small + " --json --brief").status, 2);
    std::string lit = "{";
    for (int i = 0; i < 20; ++i) lit += (i ? ", " : "") + std::to_string(i);
    std::ofstream(path("lit.kir")) << "x = @param:x -> float_type, {20}\n@0 = @literal" + lit +
                                          "} -> float_type, {20}\n@1 = add(x,@0)\n@2 = @return(@1)\n";
    auto brief = kiln("read " + path("lit.kir") + " --brief").out;
    EXPECT_TRUE(has(brief, "@0 = @literal{ ... } -> float_type, {20}, {1}")) << brief;
    // On stdout literals are abbreviated unless --full; a file gets them in full unless --brief.
    EXPECT_EQ(kiln("read " + path("lit.kir")).out, brief);
    EXPECT_TRUE(has(kiln("read " + path("lit.kir") + " --full").out, "@literal{0.0, 1.0, 2.0"));
    ASSERT_EQ(kiln("read " + path("lit.kir") + " -o " + path("lit_full.kir")).status, 0);
    EXPECT_TRUE(has(read_file(path("lit_full.kir")), "@literal{0.0, 1.0, 2.0"));
    ASSERT_EQ(kiln("read " + path("lit.kir") + " --brief -o " + path("lit_brief.kir")).status, 0);
    EXPECT_TRUE(has(read_file(path("lit_brief.kir")), "@literal{ ... }"));
    EXPECT_EQ(kiln("read " + path("lit.kir") + " --brief --full").status, 2);
    EXPECT_EQ(kiln("read " + path("lit.kir") + " --json --full").status, 2);
    std::ofstream(path("bad.json")) << "{\"modules\": [{\"name\": \"main\", \"instructions\": [{\"name\": \"@0\", "
                                      "\"op\": \"relu\", \"inputs\": [\"x\"]}]}]}";
    auto bad = kiln("read " + path("bad.json"));
    EXPECT_EQ(bad.status, 1);
    EXPECT_TRUE(has(bad.err, "input 'x' is not defined before it")) << bad.err;
}

TEST_F(driver_cmd, graphviz_renders_with_dot_or_says_it_is_missing) {
    auto r = kiln("read " + small + " -o " + path("g.svg"));
    if (std::system("command -v dot >/dev/null 2>&1") == 0) {
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_TRUE(has(read_file(path("g.svg")), "<svg"));
    } else {
        EXPECT_EQ(r.status, 1);
        EXPECT_TRUE(has(r.err, "needs Graphviz's dot, which is not installed (Debian: apt install graphviz)")) << r.err;
    }
    ASSERT_EQ(kiln("compile " + small + " -O -o " + path("g.dot") + " --quiet").status, 0);
    EXPECT_EQ(read_file(path("g.dot")).rfind("digraph kiln {", 0), 0u);
}

TEST_F(driver_cmd, trim_and_optimize_when_reading) {
    auto t = kiln("read " + small + " -t 3");
    EXPECT_EQ(t.status, 0) << t.err;
    EXPECT_TRUE(has(t.out, "@2 = mul(@1,y)")) << t.out;
    EXPECT_FALSE(has(t.out, "relu")) << t.out;
    EXPECT_TRUE(has(t.out, "@3 = @return(@2)")) << t.out;
    auto all = kiln("read " + small + " --trim 5");
    EXPECT_EQ(all.status, 2);
    EXPECT_TRUE(has(all.err, "--trim 5 would cut every instruction (main has 5)")) << all.err;
    EXPECT_EQ(kiln("read " + small + " -O").status, 0);
}

TEST_F(driver_cmd, batch_and_dynamic_dims) {
    auto run = kiln("run " + data_dir + "dynamic.kir --batch 3");
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_TRUE(has(run.out, "x: float_type, {3, 4}, {4, 1}")) << run.out;
    std::string onnx = data_dir + "onnx/mlp.onnx";
    EXPECT_TRUE(has(kiln("params " + onnx + " --batch 4").out, "x: float_type, {4, 4}, {4, 1}"));
    EXPECT_EQ(kiln("params " + onnx + " --batch 4 --default-dim 2").status, 2);
    auto dyn = kiln("params " + onnx + " --dyn-input-dim @x \"[{min:1,max:64,optimals:[1,8,64]}, 4]\"");
    EXPECT_EQ(dyn.status, 0) << dyn.err;
    EXPECT_TRUE(has(dyn.out, "x: float_type, {?[1..64:1,8,64], 4}")) << dyn.out;
    auto def = kiln("params " + onnx + " --default-dyn-dim \"{min:1,max:16}\"");
    EXPECT_TRUE(has(def.out, "x: float_type, {batch[1..16], 4}")) << def.out;
    auto wrong = kiln("params " + onnx + " --dyn-input-dim @x \"[{min:1,max:64}, 5]\"");
    EXPECT_EQ(wrong.status, 1);
    EXPECT_TRUE(has(wrong.err, "input 'x' dim 1 is 4 in the model but 5..5 was given")) << wrong.err;
    auto malformed = kiln("params " + onnx + " --dyn-input-dim @x \"[{min:1,max:64}\"");
    EXPECT_EQ(malformed.status, 2);
    EXPECT_TRUE(has(malformed.err, "--dyn-input-dim @x expects dims like")) << malformed.err;
    auto text = kiln("params " + small + " --default-dyn-dim \"{min:1,max:4}\"");
    EXPECT_EQ(text.status, 2);
    EXPECT_TRUE(has(text.err, "--dyn-input-dim and --default-dyn-dim apply to ONNX models")) << text.err;
}

}  // namespace
}  // namespace kiln
