// The driver on ONNX models: format detection, dims (--input-dim, --dim-param, --default-dim,
// given inputs), .npy inputs and outputs, --test-data, `kiln onnx --list`. The models, .npy
// files and expected outputs in data/onnx/ are written by data/make_onnx_models.py (numpy).
#include <onnx/onnx_pb.h>

#include <cstring>

#include "driver_util.hpp"

namespace kiln {
namespace {

using namespace driver_test;

const std::string onnx_dir = data_dir + "onnx/";

class driver_onnx : public driver_fixture {};

// The float32 values of a .npy file, read independently of kiln's reader: the header must say
// '<f4', C order and the given shape.
std::vector<float> npy_floats(const fs::path& p, const std::string& shape) {
    std::string bytes = read_file(p);
    EXPECT_EQ(bytes.rfind("\x93NUMPY\x01", 0), 0u) << p;
    if (bytes.size() < 10) return {};
    std::size_t header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    std::string header = bytes.substr(10, header_len);
    EXPECT_NE(header.find("'descr': '<f4', 'fortran_order': False, 'shape': " + shape), std::string::npos) << header;
    std::vector<float> v((bytes.size() - 10 - header_len) / 4);
    std::memcpy(v.data(), bytes.data() + 10 + header_len, v.size() * 4);
    return v;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float rel) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f + rel * std::abs(want[i])) << i;
}

// Copies the MLP's test data into the temp dir with output_0 (y) scaled by (1 + rel).
fs::path tampered_test_data(const fs::path& tmp, float rel) {
    fs::path dir = tmp / "test_data_set_0";
    fs::copy(onnx_dir + "mlp_test_data/test_data_set_0", dir);
    onnx::TensorProto t;
    EXPECT_TRUE(t.ParseFromString(read_file(dir / "output_0.pb")));
    std::string raw = t.raw_data();
    float first;
    std::memcpy(&first, raw.data(), 4);
    first *= 1 + rel;
    std::memcpy(raw.data(), &first, 4);
    t.set_raw_data(raw);
    std::ofstream(dir / "output_0.pb", std::ios::binary) << t.SerializeAsString();
    return dir;
}

// --- kiln onnx ------------------------------------------------------------------------------

TEST_F(driver_onnx, list_prints_supported_op_types_and_their_count) {
    auto r = kiln("onnx --list");
    ASSERT_EQ(r.status, 0) << r.err;
    auto ops = lines(r.out);
    EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
    for (const char* op : {"Add", "Conv", "MatMul", "Relu", "Softmax", "com.microsoft:Gelu"})
        EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
    EXPECT_EQ(std::find(ops.begin(), ops.end(), "Frobnicate"), ops.end());
    EXPECT_EQ(r.err, std::to_string(ops.size()) + " ONNX op types supported\n");
    EXPECT_EQ(kiln("onnx -l").out, r.out);
    EXPECT_EQ(kiln("onnx").status, 2);
    auto help = kiln("onnx --help");
    EXPECT_EQ(help.status, 0);
    EXPECT_EQ(help.out.rfind("usage: kiln onnx [options]", 0), 0u) << help.out;
}

// --- params and read --------------------------------------------------------------------------

TEST_F(driver_onnx, params_with_each_way_of_sizing_the_batch) {
    auto r = kiln("params " + onnx_dir + "mlp.onnx --dim-param batch=2");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out,
              "x: float_type, {2, 4}, {4, 1}\n"
              "#output_0 (y): float_type, {2, 3}, {3, 1}\n"
              "#output_1 (out/probs): float_type, {2, 3}, {3, 1}\n");
    EXPECT_EQ(lines(kiln("params " + onnx_dir + "mlp.onnx --default-dim 5").out).front(), "x: float_type, {5, 4}, {4, 1}");
    EXPECT_EQ(lines(kiln("params " + onnx_dir + "mlp.onnx --input-dim @x 7 4").out).front(), "x: float_type, {7, 4}, {4, 1}");
    auto range = kiln("params " + onnx_dir + "mlp.onnx --dim-param batch=1:64");
    ASSERT_EQ(range.status, 0) << range.err;
    EXPECT_EQ(lines(range.out).front(), "x: float_type, {batch[1..64], 4}");
}

TEST_F(driver_onnx, an_unset_dim_is_an_error_naming_the_input_and_the_dim) {
    auto r = kiln("params " + onnx_dir + "mlp.onnx");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "kiln: error: " + onnx_dir +
                         "mlp.onnx: input 'x' dim 0 is 'batch': set it with --dim-param batch=N or --default-dim N\n");
    EXPECT_EQ(r.out, "");
}

TEST_F(driver_onnx, dim_options_are_checked) {
    auto typo = kiln("params " + onnx_dir + "mlp.onnx --dim-param btach=2");
    EXPECT_EQ(typo.status, 1);
    EXPECT_NE(typo.err.find("--dim-param btach: the model's inputs have no symbolic dim 'btach' (symbolic dims: batch)"),
              std::string::npos)
        << typo.err;
    auto bad = kiln("params " + onnx_dir + "mlp.onnx --dim-param batch");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("--dim-param expects NAME=N or NAME=MIN:MAX"), std::string::npos) << bad.err;
    EXPECT_EQ(kiln("params " + onnx_dir + "mlp.onnx --dim-param batch=9:2").status, 2);
    auto name = kiln("params " + onnx_dir + "mlp.onnx --input-dim @z 1 4");
    EXPECT_EQ(name.status, 1);
    EXPECT_NE(name.err.find("--input-dim @z: the model has no input 'z' (inputs: x)"), std::string::npos) << name.err;
    auto fixed = kiln("params " + onnx_dir + "mlp.onnx --input-dim @x 2 5");
    EXPECT_EQ(fixed.status, 1);
    EXPECT_NE(fixed.err.find("input 'x' dim 1 is 4 in the model but 5 was given"), std::string::npos) << fixed.err;
}

TEST_F(driver_onnx, read_prints_text_ir_that_reads_back) {
    auto r = kiln("read " + onnx_dir + "mlp.onnx --dim-param batch=2");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("module: \"main\"\n", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("x = @param:x -> float_type, {2, 4}, {4, 1}\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("softmax"), std::string::npos) << r.out;
    fs::path kir = tmp / "mlp.kir";
    ASSERT_EQ(kiln("read " + onnx_dir + "mlp.onnx --dim-param batch=2 -o " + kir.string()).status, 0);
    EXPECT_EQ(kiln("read " + kir.string()).out, r.out);
}

TEST_F(driver_onnx, format_comes_from_the_extension_else_the_content) {
    fs::copy(onnx_dir + "mlp.onnx", tmp / "model.bin");
    fs::copy(data_dir + "small.kir", tmp / "program.txt");
    auto onnx = kiln("params " + (tmp / "model.bin").string() + " --default-dim 1");
    EXPECT_EQ(onnx.status, 0) << onnx.err;
    EXPECT_EQ(lines(onnx.out).front(), "x: float_type, {1, 4}, {4, 1}");
    auto text = kiln("params " + (tmp / "program.txt").string());
    EXPECT_EQ(text.status, 0) << text.err;
    EXPECT_EQ(lines(text.out).front(), "x: float_type, {2, 3}, {3, 1}");
    // Forcing the wrong format gives that format's error.
    auto as_onnx = kiln("params " + (tmp / "program.txt").string() + " --onnx");
    EXPECT_EQ(as_onnx.status, 1);
    EXPECT_NE(as_onnx.err.find("not a valid ONNX model"), std::string::npos) << as_onnx.err;
    auto as_text = kiln("params " + (tmp / "model.bin").string() + " --kiln-text");
    EXPECT_EQ(as_text.status, 1);
    EXPECT_NE(as_text.err.find("model.bin: line 1"), std::string::npos) << as_text.err;
    EXPECT_EQ(kiln("params " + (tmp / "model.bin").string() + " --onnx --kiln-text").status, 2);
}

TEST_F(driver_onnx, missing_model_is_named) {
    auto r = kiln("read " + (tmp / "none.onnx").string());
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "kiln: error: cannot read '" + (tmp / "none.onnx").string() + "'\n");
    auto no_ext = kiln("params " + (tmp / "none").string());
    EXPECT_EQ(no_ext.status, 1);
    EXPECT_NE(no_ext.err.find("cannot read '" + (tmp / "none").string() + "'"), std::string::npos) << no_ext.err;
}

TEST_F(driver_onnx, unsupported_ops_are_all_listed_with_their_nodes) {
    auto r = kiln("read " + onnx_dir + "unsupported.onnx");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("2 unsupported operators (use --skip-unknown-operators to parse past them):"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("Frobnicate (node 'frob_1', domain 'ai.onnx', opset 17)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("Twiddle (node 'twiddle_2', domain 'com.example', opset 1)"), std::string::npos) << r.err;
}

TEST_F(driver_onnx, skip_unknown_operators_parses_and_running_names_the_node) {
    auto r = kiln("read " + onnx_dir + "unsupported.onnx --skip-unknown-operators");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("@0 = relu(x) -> float_type, {2, 3}, {3, 1}\n"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("kiln: warning: skipped 2 unsupported operators"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("Twiddle (node 'twiddle_2'"), std::string::npos) << r.err;
    auto run = kiln("run " + onnx_dir + "unsupported.onnx --skip-unknown-operators --quiet");
    EXPECT_EQ(run.status, 1);
    EXPECT_NE(run.err.find("ONNX op Frobnicate (node 'frob_1') is not supported"), std::string::npos) << run.err;
}

TEST_F(driver_onnx, text_ir_options_that_only_onnx_takes_are_refused) {
    auto skip = kiln("read " + data_dir + "small.kir --skip-unknown-operators");
    EXPECT_EQ(skip.status, 2);
    EXPECT_NE(skip.err.find("--skip-unknown-operators applies to ONNX models"), std::string::npos) << skip.err;
    auto dims = kiln("params " + data_dir + "small.kir --dim-param batch=2");
    EXPECT_EQ(dims.status, 2);
    EXPECT_NE(dims.err.find("is kiln text IR (kiln run takes them to size its dynamic inputs)"), std::string::npos)
        << dims.err;
}

// --- run ------------------------------------------------------------------------------------

TEST_F(driver_onnx, run_with_npy_input_saves_outputs_that_match_numpy) {
    fs::path out = tmp / "out";
    auto r = kiln("run " + onnx_dir + "mlp.onnx --input x=" + onnx_dir + "mlp_x.npy --save-outputs " + out.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("x: float_type, {2, 4}, {4, 1}: from " + onnx_dir + "mlp_x.npy\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("#output_0 (y): float_type, {2, 3}, {3, 1}\n{"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("#output_1 (out/probs): float_type, {2, 3}, {3, 1}\n{"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Saved to " + out.string() + ": y.npy, out_probs.npy\n"), std::string::npos) << r.out;
    expect_close(npy_floats(out / "y.npy", "(2, 3)"), npy_floats(onnx_dir + "mlp_y.npy", "(2, 3)"), 1e-5f);
    expect_close(npy_floats(out / "out_probs.npy", "(2, 3)"), npy_floats(onnx_dir + "mlp_probs.npy", "(2, 3)"), 1e-5f);
}

TEST_F(driver_onnx, npy_format_version_2_reads_like_1) {
    auto v1 = kiln("run " + onnx_dir + "mlp.onnx --quiet --print-all --input x=" + onnx_dir + "mlp_x.npy");
    auto v2 = kiln("run " + onnx_dir + "mlp.onnx --quiet --print-all --input x=" + onnx_dir + "mlp_x_v2.npy");
    ASSERT_EQ(v2.status, 0) << v2.err;
    EXPECT_EQ(values_after(v2.out, "#output_0 (y)"), values_after(v1.out, "#output_0 (y)"));
    EXPECT_FALSE(values_after(v1.out, "#output_0 (y)").empty());
}

TEST_F(driver_onnx, npy_round_trip_of_every_numpy_dtype_is_byte_exact) {
    // types.onnx is Identity per input: each saved output must be the input file, byte for byte
    // (kiln writes numpy's own header layout).
    std::string args = "run " + onnx_dir + "types.onnx --quiet --save-outputs " + (tmp / "out").string();
    const char* names[] = {"f16", "f64", "i8", "u16", "i64", "bool", "scalar"};
    for (const char* n : names) args += std::string(" --input t_") + n + "=" + onnx_dir + "types_t_" + n + ".npy";
    auto r = kiln(args);
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char* n : names) {
        std::string in = read_file(onnx_dir + "types_t_" + n + ".npy");
        EXPECT_FALSE(in.empty()) << n;
        EXPECT_EQ(read_file(tmp / "out" / (std::string("o_") + n + ".npy")), in) << n;
    }
    EXPECT_NE(r.out.find("#output_5 (o_bool): bool_type, {5}, {1}\n{"), std::string::npos) << r.out;
}

TEST_F(driver_onnx, external_data_is_read_from_next_to_the_model) {
    auto r = kiln("run " + onnx_dir + "ext.onnx --quiet --input x=" + onnx_dir + "ext_x.npy --save-outputs " +
                  (tmp / "out").string());
    ASSERT_EQ(r.status, 0) << r.err;
    // One multiplication per element: kiln's float32 result is numpy's exactly.
    EXPECT_EQ(read_file(tmp / "out" / "y.npy"), read_file(onnx_dir + "ext_y.npy"));
}

TEST_F(driver_onnx, run_sizes_dims_from_options) {
    auto r = kiln("run " + onnx_dir + "mlp.onnx --dim-param batch=3 --quiet");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("#output_0 (y): float_type, {3, 3}, {3, 1}\n"), std::string::npos) << r.out;
    auto range = kiln("run " + onnx_dir + "mlp.onnx --dim-param batch=1:64");
    EXPECT_EQ(range.status, 1);
    EXPECT_NE(range.err.find("input 'x' has dynamic dims (dim 0 is batch[1..64]); give its size with --input-dim @x D0 "
                             "D1 or --dim-param batch=N"),
              std::string::npos)
        << range.err;
    auto missing = kiln("run " + onnx_dir + "mlp.onnx");
    EXPECT_EQ(missing.status, 1);
    EXPECT_NE(missing.err.find("input 'x' dim 0 is 'batch'"), std::string::npos) << missing.err;
}

TEST_F(driver_onnx, given_inputs_must_fit_the_model) {
    auto shape = kiln("run " + onnx_dir + "mlp.onnx --input x=" + onnx_dir + "mlp_x_5cols.npy");
    EXPECT_EQ(shape.status, 1);
    EXPECT_NE(shape.err.find("input 'x' dim 1 is 4 in the model but 5 was given (x's dims {2, 5} come from --input x=" +
                             onnx_dir + "mlp_x_5cols.npy)"),
              std::string::npos)
        << shape.err;
    auto type = kiln("run " + onnx_dir + "mlp.onnx --input x=" + onnx_dir + "mlp_x_f64.npy");
    EXPECT_EQ(type.status, 1);
    EXPECT_NE(type.err.find("--input x=" + onnx_dir + "mlp_x_f64.npy: the array is double_type but input 'x' is float_type"),
              std::string::npos)
        << type.err;
    auto name = kiln("run " + onnx_dir + "mlp.onnx --input z=" + onnx_dir + "mlp_x.npy");
    EXPECT_EQ(name.status, 1);
    EXPECT_NE(name.err.find("the model has no input 'z' (inputs: x)"), std::string::npos) << name.err;
    EXPECT_EQ(kiln("run " + onnx_dir + "mlp.onnx --input x").status, 2);
    auto fill = kiln("run " + onnx_dir + "mlp.onnx --input x=" + onnx_dir + "mlp_x.npy --fill1 x");
    EXPECT_EQ(fill.status, 1);
    EXPECT_NE(fill.err.find("--fill1: input 'x' is given by --input x="), std::string::npos) << fill.err;
}

TEST_F(driver_onnx, malformed_npy_files_are_refused) {
    std::map<std::string, std::string> cases = {
        {"not_npy.npy", "not_npy.npy: not a .npy file"},
        {"truncated.npy", "truncated.npy: the data has 27 bytes; float_type, {2, 4}, {4, 1} needs 32"},
        {"mlp_x_fortran.npy", "mlp_x_fortran.npy: the array is in Fortran order"},
        {"mlp_x_big_endian.npy", "mlp_x_big_endian.npy: dtype '>f4' is big-endian"},
        {"nothing.npy", "cannot read '" + onnx_dir + "nothing.npy'"},
    };
    for (const auto& [file, message] : cases) {
        auto r = kiln("run " + onnx_dir + "mlp.onnx --input x=" + onnx_dir + file);
        EXPECT_EQ(r.status, 1) << file;
        EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    }
}

TEST_F(driver_onnx, outputs_numpy_cannot_hold_are_an_error_before_running) {
    auto r = kiln("run " + onnx_dir + "bf16.onnx --save-outputs " + (tmp / "out").string());
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "kiln: error: --save-outputs: #output_0 (y) is bf16_type, which numpy has no dtype for\n");
    EXPECT_EQ(r.out, "");
}

TEST_F(driver_onnx, test_data_passes) {
    std::string dir = onnx_dir + "mlp_test_data/test_data_set_0";
    auto r = kiln("run " + onnx_dir + "mlp.onnx --quiet --test-data " + dir);
    ASSERT_EQ(r.status, 0) << r.err;
    // The test data's input sizes the batch: 3.
    EXPECT_NE(r.out.find("#output_0 (y): float_type, {3, 3}, {3, 1}\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nTest data " + dir + " (rtol 0.001, atol 1e-05):\n#output_0 (y): max abs error "),
              std::string::npos)
        << r.out;
    auto ls = lines(r.out);
    ASSERT_GE(ls.size(), 2u);
    EXPECT_EQ(ls[ls.size() - 2].substr(ls[ls.size() - 2].size() - 6), ": PASS") << r.out;
    EXPECT_EQ(ls.back().rfind("#output_1 (out/probs): max abs error ", 0), 0u) << r.out;
    EXPECT_EQ(ls.back().substr(ls.back().size() - 6), ": PASS") << r.out;
}

TEST_F(driver_onnx, test_data_fails_beyond_the_tolerance) {
    fs::path dir = tampered_test_data(tmp, 0.01f);
    auto r = kiln("run " + onnx_dir + "mlp.onnx --quiet --test-data " + dir.string());
    EXPECT_EQ(r.status, 1);
    auto ls = lines(r.out);
    ASSERT_GE(ls.size(), 2u);
    EXPECT_EQ(ls[ls.size() - 2].rfind("#output_0 (y): max abs error ", 0), 0u) << r.out;
    EXPECT_EQ(ls[ls.size() - 2].substr(ls[ls.size() - 2].size() - 6), ": FAIL") << r.out;
    EXPECT_NE(ls[ls.size() - 2].find("max rel error 0.0099: FAIL"), std::string::npos) << r.out;   // 0.01 / 1.01
    EXPECT_EQ(ls.back().substr(ls.back().size() - 6), ": PASS") << r.out;
    EXPECT_EQ(r.err, "kiln: error: 1 of 2 outputs differ from the test data in " + dir.string() +
                         " (rtol 0.001, atol 1e-05)\n");
    // A looser tolerance passes.
    auto loose = kiln("run " + onnx_dir + "mlp.onnx --quiet --test-data " + dir.string() + " --rtol 0.05");
    EXPECT_EQ(loose.status, 0) << loose.out << loose.err;
    EXPECT_NE(loose.out.find("(rtol 0.05, atol 1e-05)"), std::string::npos) << loose.out;
    EXPECT_EQ(kiln("run " + onnx_dir + "mlp.onnx --test-data " + dir.string() + " --atol -1").status, 2);
    auto alone = kiln("run " + onnx_dir + "mlp.onnx --default-dim 1 --rtol 0.1");
    EXPECT_EQ(alone.status, 2);
    EXPECT_NE(alone.err.find("--rtol is a tolerance of --test-data, which is not given"), std::string::npos) << alone.err;
}

TEST_F(driver_onnx, test_data_folder_must_exist_and_fit) {
    auto r = kiln("run " + onnx_dir + "mlp.onnx --test-data " + (tmp / "nothing").string());
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("test data folder '" + (tmp / "nothing").string() + "' does not exist"), std::string::npos)
        << r.err;
    auto both = kiln("run " + onnx_dir + "mlp.onnx --input x=" + onnx_dir + "mlp_x.npy --test-data " + onnx_dir +
                     "mlp_test_data/test_data_set_0");
    EXPECT_EQ(both.status, 2);
    EXPECT_NE(both.err.find("input 'x' is given by both --input x="), std::string::npos) << both.err;
}

// --- the same options on kiln text IR ------------------------------------------------------

TEST_F(driver_onnx, text_ir_inputs_from_npy_and_dims_from_symbols) {
    // small.kir: x {2, 3} and y {3}; ext_x.npy is a float32 {2, 3}.
    auto r = kiln("run " + data_dir + "small.kir --quiet --fill1 y --input x=" + onnx_dir + "ext_x.npy --save-outputs " +
                  (tmp / "out").string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(fs::exists(tmp / "out" / "#output_0.npy"));
    EXPECT_EQ(npy_floats(tmp / "out" / "#output_1.npy", "(2, 3)").size(), 6u);
    auto wrong = kiln("run " + data_dir + "small.kir --input x=" + onnx_dir + "mlp_x.npy");
    EXPECT_EQ(wrong.status, 1);
    EXPECT_NE(wrong.err.find("--input x=" + onnx_dir + "mlp_x.npy: {2, 4} differs from the static shape of input 'x' "
                             "(float_type, {2, 3}, {3, 1})"),
              std::string::npos)
        << wrong.err;
    auto sym = kiln("run " + data_dir + "dynamic.kir --quiet --fill1 --dim-param batch=3");
    ASSERT_EQ(sym.status, 0) << sym.err;
    EXPECT_NE(sym.out.find("#output_0: float_type, {3, 4}, {4, 1}"), std::string::npos) << sym.out;
    auto dflt = kiln("run " + data_dir + "dynamic.kir --quiet --fill1 --default-dim 2");
    EXPECT_NE(dflt.out.find("#output_0: float_type, {2, 4}, {4, 1}"), std::string::npos) << dflt.out << dflt.err;
    auto out_of_range = kiln("run " + data_dir + "dynamic.kir --dim-param batch=9");
    EXPECT_EQ(out_of_range.status, 1);
    EXPECT_NE(out_of_range.err.find("input 'x': shape: dim 0 = 9 is outside batch[1..8]"), std::string::npos)
        << out_of_range.err;
}

TEST_F(driver_onnx, tuple_outputs_save_one_file_per_element) {
    auto r = kiln("run " + data_dir + "topk.kir --fill1 --save-outputs " + (tmp / "out").string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("Saved to " + (tmp / "out").string() + ": #output_0[0].npy, #output_0[1].npy\n"),
              std::string::npos)
        << r.out;
    EXPECT_TRUE(fs::exists(tmp / "out" / "#output_0[1].npy"));
}

}  // namespace
}  // namespace kiln
