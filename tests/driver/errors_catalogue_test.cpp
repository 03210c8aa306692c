// One test per row of docs/errors.md: each class of bad input given to the `kiln` binary, the
// message it must print (on stderr, after "kiln: error: ") and the exit status (1 for bad input,
// 2 for a bad command line). Never a crash, a hang or a silently wrong run.
#include <cstdint>
#include <cstring>

#include "../frontends/onnx_test_util.hpp"
#include "core/module.hpp"
#include "driver_util.hpp"
#include "tools/saved_program.hpp"

namespace kiln {
namespace {

using namespace driver_test;
using namespace onnx_test;

class errors_catalogue : public driver_fixture {
protected:
    std::string path(const std::string& name) const { return (tmp / name).string(); }
    std::string write(const std::string& name, const std::string& bytes) const {
        std::ofstream(tmp / name, std::ios::binary) << bytes;
        return path(name);
    }
    std::string write(const std::string& name, const onnx::ModelProto& m) const {
        return write(name, m.SerializeAsString());
    }
    // Runs `kiln ARGS` and checks the exit status and that stderr holds `message`.
    void expect(const std::string& args, int status, const std::string& message) const {
        auto r = kiln(args);
        EXPECT_EQ(r.status, status) << args << "\n" << r.err;
        EXPECT_NE(r.err.find(message), std::string::npos) << args << "\nmissing '" << message << "' in:\n" << r.err;
    }
};

// x [2, 3] -> Relu -> y.
onnx::ModelProto relu_model() {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    add_node(m, "Relu", "relu", {"x"}, {"y"});
    add_output(m, "y", {2, 3});
    return m;
}

// x [2, 3] + W, W's 24 bytes in external data at `location`.
onnx::ModelProto external_model(const std::string& location, const std::string& offset = "0") {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    auto* w = add_initializer(m, "W", {2, 3}, {});
    w->clear_raw_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [k, v] : {std::pair<std::string, std::string>{"location", location}, {"offset", offset}}) {
        auto* e = w->add_external_data();
        e->set_key(k);
        e->set_value(v);
    }
    add_node(m, "Add", "add", {"x", "W"}, {"y"});
    add_output(m, "y", {2, 3});
    return m;
}

// A .npy file: magic, version, a header length of `len_size` bytes, then `rest`.
std::string npy(int major, std::uint32_t header_len, const std::string& rest) {
    std::string s = "\x93NUMPY";
    s += static_cast<char>(major);
    s += '\0';
    for (int i = 0; i < (major == 1 ? 2 : 4); ++i) s += static_cast<char>((header_len >> (8 * i)) & 0xff);
    return s + rest;
}

// A saved-program container around `header` with a valid checksum (FNV-1a 64 over LE words).
std::string saved_with_header(const std::string& header) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::size_t i = 0; i < header.size(); i += 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, header.data() + i, std::min<std::size_t>(8, header.size() - i));
        h = (h ^ w) * 0x100000001b3ull;
    }
    std::string pre(32, '\0');
    std::memcpy(pre.data(), "\x89KILN\r\n\x1a", 8);
    std::uint32_t version = saved_program_format_version;
    std::uint64_t n = header.size();
    std::memcpy(pre.data() + 8, &version, 4);
    std::memcpy(pre.data() + 16, &n, 8);
    std::memcpy(pre.data() + 24, &h, 8);
    return pre + header;
}

// --- files ------------------------------------------------------------------------------------

TEST_F(errors_catalogue, missing_file) { expect("run " + path("none.onnx"), 1, "cannot read '" + path("none.onnx") + "'"); }

TEST_F(errors_catalogue, directory) {
    fs::create_directories(tmp / "model.kiln");
    expect("run " + path("model.kiln"), 1, "'" + path("model.kiln") + "' is a directory, not a model file");
}

TEST_F(errors_catalogue, empty_file) {
    expect("run " + write("e.onnx", ""), 1, "e.onnx: empty file");
    expect("run " + write("e.kir", ""), 1, "e.kir: empty file");
    expect("run /dev/null", 1, "/dev/null: empty file");
}

TEST_F(errors_catalogue, no_outputs) {
    expect("run " + write("two.onnx", std::string("\x08\x08")), 1, "model has no outputs");
    expect("run " + write("c.kir", "# a comment and nothing else\n"), 1, "c.kir: model has no outputs");
}

// --- ONNX models ------------------------------------------------------------------------------

TEST_F(errors_catalogue, not_a_protobuf) {
    expect("run --onnx " + write("bad.onnx", std::string(64, '\xff')), 1, "not a valid ONNX model");
}

TEST_F(errors_catalogue, ir_version) {
    auto m = relu_model();
    m.set_ir_version(99);
    expect("run " + write("m.onnx", m), 1, "ONNX IR version 99 is not supported");
}

TEST_F(errors_catalogue, opset) {
    auto m = relu_model();
    m.mutable_opset_import(0)->set_version(99);
    expect("run " + write("m.onnx", m), 1, "opset 99 of domain 'ai.onnx' is not supported: kiln knows opsets 1 to 28");
}

TEST_F(errors_catalogue, unsupported_operator) {
    auto m = relu_model();
    m.mutable_graph()->mutable_node(0)->set_op_type("Frobnicate");
    expect("run " + write("m.onnx", m), 1, "1 unsupported operator");
}

TEST_F(errors_catalogue, empty_required_input_name) {
    auto m = relu_model();
    m.mutable_graph()->mutable_node(0)->set_input(0, "");
    expect("run " + write("m.onnx", m), 1, "node 'relu' (Relu, opset 17): a required input is absent (its name is empty)");
}

TEST_F(errors_catalogue, empty_graph_input_name) {
    auto m = relu_model();
    add_input(m, "", {1});
    expect("run " + write("m.onnx", m), 1, "graph 'test': input 1 has an empty name");
}

TEST_F(errors_catalogue, tensor_written_twice) {
    auto m = relu_model();
    add_node(m, "Neg", "neg", {"x"}, {"y"});
    expect("run " + write("m.onnx", m), 1, "tensor 'y' is written by both node 'relu' (Relu) and node 'neg' (Neg)");
}

TEST_F(errors_catalogue, input_and_initializer_disagree) {
    auto m = relu_model();
    add_input(m, "w", {2});
    add_initializer(m, "w", {3}, {1, 2, 3});
    expect("run " + write("m.onnx", m), 1, "input 'w' is declared {2} but its initializer (its default) is {3}");
}

TEST_F(errors_catalogue, declared_output_shape) {
    auto m = relu_model();
    m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(5);
    expect("run " + write("m.onnx", m), 1, "output 'y' is declared {5, 3} but computes float_type, {2, 3}");
}

TEST_F(errors_catalogue, negative_dim) {
    auto m = relu_model();
    m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(-3);
    expect("run " + write("m.onnx", m), 1, "input 'x' dim 1 is -3; a dim is 0 or more");
}

TEST_F(errors_catalogue, wrong_input_count) {
    auto m = make_model();
    add_input(m, "x", {1, 1, 4, 4});
    add_node(m, "Conv", "conv", {"x"}, {"y"});
    add_output(m, "y", {1, 1, 4, 4});
    expect("run " + write("m.onnx", m), 1, "node 'conv' (Conv, opset 17): expects 2 or 3 inputs, got 1");
}

TEST_F(errors_catalogue, cycle) {
    auto m = make_model();
    add_input(m, "x", {2});
    add_node(m, "Add", "a", {"x", "b_out"}, {"a_out"});
    add_node(m, "Neg", "b", {"a_out"}, {"b_out"});
    add_output(m, "b_out", {2});
    expect("run " + write("m.onnx", m), 1, "the graph has a cycle through node");
}

TEST_F(errors_catalogue, initializer_size_overflow) {
    auto m = relu_model();
    add_initializer(m, "w", {(std::int64_t{1} << 62) + 1}, {1});
    expect("run " + write("m.onnx", m), 1, "tensor 'w': shape float_type, {4611686018427387905}: its size in bytes exceeds 2^63");
}

TEST_F(errors_catalogue, initializer_data_size) {
    auto m = relu_model();
    add_initializer(m, "w", {2, 3}, {1, 2, 3});
    expect("run " + write("m.onnx", m), 1, "tensor 'w': raw_data has 12 bytes, its shape float_type, {2, 3}, {3, 1} needs 24");
}

TEST_F(errors_catalogue, size_bomb) {
    auto m = make_model();
    add_input(m, "x", {2});
    auto* r = add_initializer(m, "r", {1}, {});
    r->set_data_type(onnx::TensorProto::INT64);
    std::int64_t reps = std::int64_t{1} << 50;
    r->set_raw_data(std::string(reinterpret_cast<const char*>(&reps), 8));
    add_node(m, "Tile", "tiles", {"x", "r"}, {"y"});
    add_output(m, "y", {"n"});
    expect("run " + write("m.onnx", m), 1, "(node 'tiles'): a tensor of float_type, {2251799813685248}");
    expect("run " + write("m.onnx", m), 1, "bytes, more than the limit of");
}

// --- external data ----------------------------------------------------------------------------

TEST_F(errors_catalogue, external_data_absolute_path) {
    expect("run " + write("m.onnx", external_model("/etc/passwd")), 1,
           "tensor 'W': external data location '/etc/passwd' is an absolute path");
}

TEST_F(errors_catalogue, external_data_outside_the_folder) {
    expect("run " + write("m.onnx", external_model("../../etc/passwd")), 1,
           "tensor 'W': external data location '../../etc/passwd' has a '..' component");
}

TEST_F(errors_catalogue, external_data_symlink_out) {
    write("outside.bin", std::string(24, '\0'));
    fs::create_directories(tmp / "model");
    fs::create_symlink(tmp / "outside.bin", tmp / "model" / "w.bin");
    expect("run " + write("model/m.onnx", external_model("w.bin")), 1, "outside the model's folder");
}

TEST_F(errors_catalogue, external_data_not_a_file) {
    expect("run " + write("m.onnx", external_model(".")), 1, "tensor 'W': external data location '.' is not a regular file");
}

TEST_F(errors_catalogue, external_data_bad_offset) {
    write("w.bin", std::string(24, '\0'));
    expect("run " + write("m.onnx", external_model("w.bin", "-8")), 1, "tensor 'W': external data offset '-8' is not a byte count");
}

TEST_F(errors_catalogue, external_data_beyond_the_file) {
    write("w.bin", std::string(24, '\0'));
    expect("run " + write("m.onnx", external_model("w.bin", "8")), 1, "is truncated (24 bytes, needs 24 from offset 8)");
}

// --- kiln's own formats -----------------------------------------------------------------------

TEST_F(errors_catalogue, text_ir_syntax) {
    expect("run " + data_dir + "bad_syntax.kir", 1, "line ");
}

TEST_F(errors_catalogue, nested_json) {
    expect("run " + write("deep.json", std::string(30000, '[')), 1, "JSON: nesting deeper than 512 levels");
}

TEST_F(errors_catalogue, saved_program_nested_header) {
    expect("run " + write("deep.kiln", saved_with_header(std::string(30000, '['))), 1,
           "has an unreadable header: JSON: nesting deeper than 512 levels");
}

TEST_F(errors_catalogue, saved_program_output_names) {
    program p = parse_onnx_buffer(relu_model().SerializeAsString().data(), relu_model().ByteSizeLong());
    saved_program_info info;
    info.output_names = {"a", "b", "c", "d"};
    save_program(p, info, path("m.kiln"));
    expect("run " + path("m.kiln"), 1, "is corrupted: its header names 4 outputs but its program returns 1");
}

// --- inputs and options -----------------------------------------------------------------------

TEST_F(errors_catalogue, npy_not_a_regular_file) {
    expect("run " + write("m.onnx", relu_model()) + " --input x=/dev/zero", 1,
           "/dev/zero: is not a regular file; kiln reads .npy files");
}

TEST_F(errors_catalogue, npy_huge_header) {
    expect("run " + write("m.onnx", relu_model()) + " --input x=" + write("x.npy", npy(2, 0xffffffffu, "{")), 1,
           "x.npy: the header announces 4294967295 bytes; kiln reads headers of up to 1048576");
}

TEST_F(errors_catalogue, npy_data_size) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
    expect("run " + write("m.onnx", relu_model()) + " --input x=" + write("x.npy", npy(1, header.size(), header + "abcd")),
           1, "x.npy: the data has 4 bytes; float_type, {2, 3}, {3, 1} needs 24");
}

TEST_F(errors_catalogue, npy_big_endian) {
    std::string header = "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }\n";
    expect("run " + write("m.onnx", relu_model()) + " --input x=" + write("x.npy", npy(1, header.size(), header + std::string(24, '\0'))),
           1, "dtype '>f4' is big-endian");
}

TEST_F(errors_catalogue, unknown_input_name) {
    expect("run " + write("m.onnx", relu_model()) + " --input-dim @X 2 3", 1, "the model has no input 'X' (inputs: x)");
}

TEST_F(errors_catalogue, negative_tolerance) {
    expect("verify " + write("m.onnx", relu_model()) + " --rtol -1", 2, "--rtol expects a non-negative number, got '-1'");
}

TEST_F(errors_catalogue, unknown_option) {
    expect("run --frobnicate " + write("m.onnx", relu_model()), 2, "unknown option '--frobnicate' for 'kiln run'");
}

}  // namespace
}  // namespace kiln
