// External data (TensorProto.external_data): read from the model's folder at an offset, with
// errors naming the tensor and the file, and never from outside that folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/eval.hpp"
#include "onnx_test_util.hpp"

namespace kiln {
namespace {

using namespace onnx_test;
namespace fs = std::filesystem;

argument floats(const std::vector<std::size_t>& lens, const std::vector<float>& values) {
    argument a(shape(dtype::float32, lens));
    std::memcpy(a.data(), values.data(), values.size() * sizeof(float));
    return a;
}

// x [2, 3] + W, with W's 24 bytes stored externally at `location` (offset 8).
onnx::ModelProto external_model(const std::string& location, const std::string& length = "24",
                                const std::string& offset = "8") {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    auto* w = add_initializer(m, "W", {2, 3}, {});
    w->clear_raw_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    std::vector<std::pair<std::string, std::string>> entries{
        {"location", location}, {"offset", offset}, {"length", length}};
    for (const auto& [k, v] : entries) {
        auto* e = w->add_external_data();
        e->set_key(k);
        e->set_value(v);
    }
    add_node(m, "Add", "add", {"x", "W"}, {"y"});
    add_output(m, "y", {2, 3});
    return m;
}

class OnnxExternalData : public ::testing::Test {
protected:
    fs::path dir = fs::temp_directory_path() / ("kiln_onnx_external_" + std::to_string(::getpid()));
    void SetUp() override { fs::create_directories(dir); }
    void TearDown() override { fs::remove_all(dir); }
    void write(const std::string& name, const std::string& bytes) {
        std::ofstream(dir / name, std::ios::binary) << bytes;
    }
    // 8 bytes of padding, then `n` floats 0.5, 1.5, ...
    static std::string data(std::size_t n) {
        std::string s(8, 'x');
        for (std::size_t i = 0; i < n; ++i) {
            float f = static_cast<float>(i) + 0.5f;
            s.append(reinterpret_cast<const char*>(&f), sizeof f);
        }
        return s;
    }
};

TEST_F(OnnxExternalData, ReadsFromOffset) {
    write("w.bin", data(6));
    program p = parse(external_model("w.bin"), {}, dir.string());
    auto y = evaluate(p, {{"x", floats({2, 3}, {1, 1, 1, 1, 1, 1})}}).at(0);
    for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(y.as<float>()[i], static_cast<float>(i) + 1.5f);
}

TEST_F(OnnxExternalData, MissingFile) {
    std::string model_path = (dir / "model.onnx").string();
    write("model.onnx", external_model("missing.bin").SerializeAsString());
    auto msg = error_of([&] { parse_onnx_file(model_path); });
    EXPECT_EQ(msg.rfind(model_path + ": ", 0), 0u) << msg;
    expect_has(msg, {"tensor 'W'", (dir / "missing.bin").string(), "cannot be opened"});
}

TEST_F(OnnxExternalData, TruncatedFile) {
    write("w.bin", data(5));
    auto msg = error_of([&] { parse(external_model("w.bin"), {}, dir.string()); });
    expect_has(msg, {"tensor 'W'", "w.bin", "is truncated (28 bytes, needs 24 from offset 8)"});
}

TEST_F(OnnxExternalData, LengthMismatch) {
    write("w.bin", data(6));
    auto msg = error_of([&] { parse(external_model("w.bin", "16"), {}, dir.string()); });
    expect_has(msg, {"tensor 'W'", "external data length 16 does not match its shape (24 bytes)"});
}

// The model lives in dir/model; `location` names a file relative to it.
class OnnxExternalPaths : public OnnxExternalData {
protected:
    fs::path model_dir = dir / "model";
    void SetUp() override {
        OnnxExternalData::SetUp();
        fs::create_directories(model_dir);
        write("outside.bin", data(6));
        write("model/w.bin", data(6));
    }
    std::string error_for(const std::string& location) {
        return error_of([&] { parse(external_model(location), {}, model_dir.string()); });
    }
};

TEST_F(OnnxExternalPaths, AbsolutePathIsRefused) {
    auto abs = (dir / "outside.bin").string();
    expect_has(error_for(abs), {"tensor 'W'", "'" + abs + "'", "is an absolute path"});
    expect_has(error_for("/etc/passwd"), {"tensor 'W'", "'/etc/passwd'", "is an absolute path"});
}

TEST_F(OnnxExternalPaths, DotDotIsRefused) {
    expect_has(error_for("../outside.bin"), {"tensor 'W'", "'../outside.bin'", "'..' component"});
    expect_has(error_for("sub/../../../../etc/passwd"), {"tensor 'W'", "'..' component"});
    // Even a '..' that comes back inside is refused: the rule is simple to state and check.
    expect_has(error_for("../model/w.bin"), {"'..' component"});
}

TEST_F(OnnxExternalPaths, DirectoriesAreRefused) {
    fs::create_directories(model_dir / "sub");
    for (const char* loc : {".", "./", "sub", "sub/"})
        expect_has(error_for(loc), {"tensor 'W'", cat("'", loc, "'"), "is not a regular file"});
    expect_has(error_for(""), {"tensor 'W'", "external data has no location"});
}

TEST_F(OnnxExternalPaths, SymlinkOutOfTheFolderIsRefused) {
    fs::create_symlink(dir / "outside.bin", model_dir / "link.bin");
    expect_has(error_for("link.bin"), {"tensor 'W'", "'link.bin'", "outside the model's folder"});
    fs::create_directory_symlink(dir, model_dir / "up");
    expect_has(error_for("up/outside.bin"), {"tensor 'W'", "outside the model's folder"});
}

TEST_F(OnnxExternalPaths, SymlinkInsideTheFolderIsRead) {
    fs::create_directories(model_dir / "weights");
    fs::create_symlink(model_dir / "w.bin", model_dir / "weights" / "link.bin");
    program p = parse(external_model("weights/link.bin"), {}, model_dir.string());
    auto y = evaluate(p, {{"x", floats({2, 3}, {0, 0, 0, 0, 0, 0})}}).at(0);
    EXPECT_EQ(y.as<float>()[5], 5.5f);
}

TEST_F(OnnxExternalData, BadOffsetOrLength) {
    write("w.bin", data(6));
    for (const char* bad : {"-1", "x", "", " 8", "8 ", "99999999999999999999999"}) {
        expect_has(error_of([&] { parse(external_model("w.bin", "24", bad), {}, dir.string()); }),
                   {"tensor 'W'", cat("external data offset '", bad, "' is not a byte count")});
        expect_has(error_of([&] { parse(external_model("w.bin", bad), {}, dir.string()); }),
                   {"tensor 'W'", cat("external data length '", bad, "' is not a byte count")});
    }
}

TEST_F(OnnxExternalData, OffsetBeyondTheFile) {
    write("w.bin", data(6));
    // 2^64 - 8: offset + length wraps to 16, which a naive check would take for in bounds.
    auto msg = error_of([&] { parse(external_model("w.bin", "24", "18446744073709551608"), {}, dir.string()); });
    expect_has(msg, {"tensor 'W'", "is truncated (32 bytes, needs 24 from offset 18446744073709551608)"});
}

}  // namespace
}  // namespace kiln
