// Runs the built `kiln` binary as a user would and checks each command's output, exit status
// and error messages. The MLP demo is generated at test time by scripts/make_mnist_mlp.py
// (Debian's /usr/bin/python3 with numpy), which also gives numpy's expected output.
#include "driver_util.hpp"

#include <algorithm>

#include "core/target.hpp"
#include "core/value.hpp"

namespace kiln {
namespace {

using namespace driver_test;

class driver : public driver_fixture {};

// --- help and usage ---------------------------------------------------------------------

TEST_F(driver, help_lists_every_command) {
    auto r = kiln("--help");
    EXPECT_EQ(r.status, 0);
    for (const char* c : {"op ", "read ", "params ", "run ", "onnx ", "usage: kiln COMMAND", "examples:"})
        EXPECT_NE(r.out.find(c), std::string::npos) << c;
    EXPECT_EQ(kiln("-h").out, r.out);
}

TEST_F(driver, no_arguments_is_a_usage_error) {
    auto r = kiln("");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("usage: kiln COMMAND"), std::string::npos);
}

TEST_F(driver, each_command_has_help_with_options_and_an_example) {
    const std::vector<std::string> loading = {"--onnx", "--kiln-text", "--input-dim", "--dim-param", "--default-dim",
                                              "--skip-unknown-operators"};
    std::map<std::string, std::vector<std::string>> options = {
        {"op", {"--list", "-l"}},
        {"read", {"--json", "--output", "-o"}},
        {"params", {}},
        {"run", {"--seed", "--fill0", "--fill1", "--input", "--test-data", "--rtol", "--atol", "--save-outputs",
                 "--print-all", "--quiet", "--brief", "--ref", "--cpu", "--gpu"}},
        {"onnx", {"--list", "-l"}},
    };
    for (const char* cmd : {"read", "params", "run"}) options[cmd].insert(options[cmd].end(), loading.begin(), loading.end());
    for (const auto& [cmd, opts] : options) {
        auto r = kiln(cmd + " --help");
        EXPECT_EQ(r.status, 0) << cmd;
        EXPECT_EQ(r.out.rfind("usage: kiln " + cmd, 0), 0u) << r.out;
        EXPECT_NE(r.out.find("examples:\n  kiln " + cmd), std::string::npos) << r.out;
        for (const auto& o : opts) EXPECT_NE(r.out.find(o), std::string::npos) << cmd << " " << o;
        EXPECT_EQ(kiln(cmd + " -h").out, r.out);
    }
    EXPECT_NE(kiln("run --help").out.find("uniform in [-1, 1]"), std::string::npos);
}

TEST_F(driver, unknown_command) {
    auto r = kiln("rnu x.kir");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("kiln: error: unknown command 'rnu'", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("did you mean 'run'?"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("kiln --help"), std::string::npos) << r.err;
}

TEST_F(driver, unknown_flag) {
    auto r = kiln("run " + data_dir + "small.kir --sede 3");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("kiln: error: unknown option '--sede' for 'kiln run'", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("did you mean '--seed'?"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'kiln run --help'"), std::string::npos) << r.err;
}

TEST_F(driver, every_target_has_its_flag) {
    auto help = lines(kiln("run --help").out);
    // Every target has its flag, built or not (a build without CUDA says so on --gpu).
    for (std::string flag : {"  --ref ", "  --cpu ", "  --gpu "})
        EXPECT_NE(std::find_if(help.begin(), help.end(), [&](auto& l) { return l.rfind(flag, 0) == 0; }), help.end())
            << flag;
    EXPECT_EQ(kiln("run " + data_dir + "small.kir --gpu --ref").status, 2);
}

// The gpu target is built wherever CUDA is; without a device it says so.
TEST_F(driver, the_gpu_target_without_a_device_says_so) {
    auto targets = built_targets();
    if (std::find(targets.begin(), targets.end(), "gpu") == targets.end()) GTEST_SKIP() << "gpu target not built";
    auto gpu = kiln("run " + data_dir + "small.kir --gpu");
    EXPECT_TRUE(gpu.status == 0 || gpu.err.find("gpu: no CUDA device") != std::string::npos) << gpu.err;
}

TEST_F(driver, option_values_are_checked) {
    auto r = kiln("run " + data_dir + "small.kir --seed abc");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--seed expects a non-negative integer, got 'abc'"), std::string::npos) << r.err;
    auto missing = kiln("run " + data_dir + "small.kir --seed");
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.err.find("--seed needs a value"), std::string::npos) << missing.err;
    auto order = kiln("run --fill1 " + data_dir + "small.kir");
    EXPECT_EQ(order.status, 2);
    EXPECT_NE(order.err.find("put FILE first"), std::string::npos) << order.err;
}

// --- op -------------------------------------------------------------------------------

TEST_F(driver, op_list_is_sorted_and_complete) {
    auto r = kiln("op --list");
    EXPECT_EQ(r.status, 0);
    auto names = lines(r.out);
    EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
    for (const char* n : {"@literal", "@param", "@return", "add", "dot", "relu", "reshape", "softmax"})
        EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
    EXPECT_GE(names.size(), 100u);
    EXPECT_EQ(kiln("op -l").out, r.out);
}

TEST_F(driver, op_prints_attributes_with_defaults_as_json) {
    auto r = kiln("op softmax");
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "{\n  \"axis\": -1\n}\n");
    value reshape = parse_json(kiln("op reshape").out);
    EXPECT_TRUE(reshape.at("dims").is_array());
    EXPECT_EQ(kiln("op relu").out, "{}\n");
}

TEST_F(driver, op_unknown_name_lists_close_matches) {
    auto r = kiln("op sofmax");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("kiln: error: unknown op 'sofmax'", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("softmax"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST_F(driver, op_needs_a_name_or_list) {
    EXPECT_EQ(kiln("op").status, 2);
    EXPECT_EQ(kiln("op relu --list").status, 2);
}

// --- read -----------------------------------------------------------------------------

TEST_F(driver, read_prints_the_program_back) {
    std::string text = read_file(data_dir + "small.kir");
    auto r = kiln("read " + data_dir + "small.kir");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, text);
    // -o writes the same text to a file, which reads back to itself.
    fs::path out = tmp / "again.kir";
    auto w = kiln("read " + data_dir + "small.kir -o " + out.string());
    EXPECT_EQ(w.status, 0) << w.err;
    EXPECT_EQ(w.out, "");
    EXPECT_EQ(read_file(out), text);
    EXPECT_EQ(kiln("read " + out.string()).out, text);
}

TEST_F(driver, read_json) {
    auto r = kiln("read " + data_dir + "small.kir --json");
    ASSERT_EQ(r.status, 0) << r.err;
    value doc = parse_json(r.out);
    const auto& mods = doc.at("modules").as_array();
    ASSERT_EQ(mods.size(), 1u);
    EXPECT_EQ(mods[0].at("name").as_string(), "main");
    const auto& ins = mods[0].at("instructions").as_array();
    ASSERT_EQ(ins.size(), 9u);
    EXPECT_EQ(ins[0].at("name").as_string(), "x");
    EXPECT_EQ(ins[0].at("op").as_string(), "@param");
    EXPECT_EQ(ins[0].at("shape").at("type").as_string(), "float_type");
    EXPECT_EQ(ins[0].at("shape").at("lens").as_array().size(), 2u);
    EXPECT_EQ(ins[2].at("op").as_string(), "@literal");
    EXPECT_EQ(ins[2].at("values"), value(value_array{value(0.5), value(-1.25), value(2.0)}));
    EXPECT_EQ(ins[3].at("op").as_string(), "add");
    EXPECT_EQ(ins[3].at("inputs"), value(value_array{value("x"), value("@0")}));
    EXPECT_EQ(ins[6].at("attributes").at("axis").as_int(), 1);
    EXPECT_EQ(ins[8].at("op").as_string(), "@return");
    EXPECT_FALSE(ins[8].contains("shape"));
}

TEST_F(driver, missing_file_is_named) {
    auto r = kiln("read " + (tmp / "nothing_here.kir").string());
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("kiln: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("nothing_here.kir"), std::string::npos) << r.err;
}

TEST_F(driver, syntax_error_shows_line_and_column) {
    auto r = kiln("read " + data_dir + "bad_syntax.kir");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("kiln: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("bad_syntax.kir"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("line 3, column 13"), std::string::npos) << r.err;
}

// --- params ---------------------------------------------------------------------------

TEST_F(driver, params_prints_inputs_and_outputs) {
    auto r = kiln("params " + data_dir + "small.kir");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out,
              "x: float_type, {2, 3}, {3, 1}\n"
              "y: float_type, {3}, {1}\n"
              "#output_0: float_type, {3, 2}, {1, 3}\n"
              "#output_1: float_type, {2, 3}, {3, 1}\n");
}

TEST_F(driver, params_of_a_dynamic_program) {
    auto r = kiln("params " + data_dir + "dynamic.kir");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(lines(r.out).front(), "x: float_type, {batch[1..8], 4}");
}

// --- run ------------------------------------------------------------------------------

TEST_F(driver, run_prints_program_inputs_outputs_and_time) {
    auto r = kiln("run " + data_dir + "small.kir");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind(read_file(data_dir + "small.kir"), 0), 0u) << r.out;
    EXPECT_NE(r.out.find("Inputs (seed 0):\nx: float_type, {2, 3}, {3, 1}: uniform in [-1, 1]\n"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("#output_0: float_type, {3, 2}, {1, 3}\n{"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("#output_1: float_type, {2, 3}, {3, 1}\n{"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Time: "), std::string::npos) << r.out;
}

TEST_F(driver, run_fill1_gives_exact_values) {
    // x = y = 1: relu((x + {0.5, -1.25, 2}) * y) = {1.5, 0, 3} per row.
    auto r = kiln("run " + data_dir + "small.kir --fill1 --quiet");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find("module:"), std::string::npos) << "--quiet prints no program";
    EXPECT_EQ(values_after(r.out, "#output_0"), "{1.5, 1.5, 0, 0, 3, 3}");
    auto zero = kiln("run " + data_dir + "small.kir --fill1 x --fill0 y --quiet");
    EXPECT_EQ(values_after(zero.out, "#output_0"), "{0, 0, 0, 0, 0, 0}");
}

TEST_F(driver, run_prints_tuple_outputs_by_element) {
    // topk of six 1s: ties go to the lower index (ONNX).
    auto r = kiln("run " + data_dir + "topk.kir --fill1 --quiet");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(values_after(r.out, "#output_0[0]"), "{1, 1}");
    EXPECT_EQ(values_after(r.out, "#output_0[1]"), "{0, 1}");
    EXPECT_NE(r.out.find("#output_0[1]: int64_type, {2}, {1}\n"), std::string::npos) << r.out;
}

TEST_F(driver, run_is_seeded) {
    auto a = kiln("run " + data_dir + "small.kir --quiet");
    auto b = kiln("run " + data_dir + "small.kir --quiet --seed 0");
    auto c = kiln("run " + data_dir + "small.kir --quiet --seed 5");
    ASSERT_EQ(a.status, 0) << a.err;
    EXPECT_EQ(values_after(a.out, "#output_1"), values_after(b.out, "#output_1"));
    EXPECT_NE(values_after(a.out, "#output_1"), values_after(c.out, "#output_1"));
    // Filling y does not change the random values of x.
    auto x_only = kiln("run " + data_dir + "small.kir --quiet --fill1 y --print-all");
    auto both = kiln("run " + data_dir + "small.kir --quiet --print-all");
    EXPECT_EQ(x_only.status, 0) << x_only.err;
    EXPECT_NE(values_after(x_only.out, "#output_0"), values_after(both.out, "#output_0"));
}

TEST_F(driver, run_fill_names_must_exist) {
    auto r = kiln("run " + data_dir + "small.kir --fill1 z");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("--fill1: the program has no input 'z' (inputs: x, y)"), std::string::npos) << r.err;
}

TEST_F(driver, run_dynamic_input_needs_its_dims) {
    auto r = kiln("run " + data_dir + "dynamic.kir");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("input 'x' has dynamic dims (dim 0 is batch[1..8])"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--input-dim @x D0 D1"), std::string::npos) << r.err;
    auto ok = kiln("run " + data_dir + "dynamic.kir --input-dim @x 3 4 --fill1 --quiet");
    ASSERT_EQ(ok.status, 0) << ok.err;
    EXPECT_NE(ok.out.find("#output_0: float_type, {3, 4}, {4, 1}"), std::string::npos) << ok.out;
    auto out_of_range = kiln("run " + data_dir + "dynamic.kir --input-dim @x 9 4");
    EXPECT_EQ(out_of_range.status, 1);
    EXPECT_NE(out_of_range.err.find("--input-dim @x"), std::string::npos) << out_of_range.err;
}

TEST_F(driver, run_mlp_demo_matches_numpy) {
    std::string expected = make_mlp();
    if (expected.empty()) GTEST_SKIP() << "/usr/bin/python3 with numpy is needed to generate the MLP";
    auto r = kiln("run " + (tmp / "mlp.kir").string() + " --fill1");
    ASSERT_EQ(r.status, 0) << r.err;
    // Weights are elided from the printed program; the structure shows.
    EXPECT_NE(r.out.find("@0 = @literal{ ... } -> float_type, {784, 128}, {128, 1}"), std::string::npos);
    EXPECT_NE(r.out.find("@10 = softmax[axis=1](@9) -> float_type, {1, 10}, {10, 1}"), std::string::npos);
    auto got = parse_values(values_after(r.out, "#output_0"));
    auto want = parse_values(expected);
    ASSERT_EQ(got.size(), 10u);
    ASSERT_EQ(want.size(), 10u);
    for (std::size_t i = 0; i < 10; ++i) EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-4 * want[i]) << "value " << i;
}

TEST_F(driver, run_shows_the_first_values_unless_print_all) {
    auto r = kiln("run " + data_dir + "wide.kir --quiet");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find(", ...} (10 of 24 values; --print-all shows all)"), std::string::npos) << r.out;
    EXPECT_EQ(parse_values(values_after(r.out, "#output_0")).size(), 10u);
    auto all = kiln("run " + data_dir + "wide.kir --quiet --print-all");
    EXPECT_EQ(parse_values(values_after(all.out, "#output_0")).size(), 24u);
}

}  // namespace
}  // namespace kiln
