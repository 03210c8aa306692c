// Initializers become literals holding exactly their values, and a model's weights are not copied
// on the way: a literal in raw_data takes the bytes protobuf parsed, whether the model comes from a
// file or a buffer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "onnx_test_util.hpp"

namespace kiln {
namespace {

using namespace onnx_test;
namespace fs = std::filesystem;

// Random bytes: every bit pattern, so a value converted on the way (not copied) shows.
std::string random_bytes(std::size_t n, std::uint32_t seed) {
    std::mt19937 gen(seed);
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(gen() & 0xff);
    return s;
}

// A model whose outputs are its initializers, each a literal of its own.
struct model_with_weights {
    onnx::ModelProto model = make_model();
    std::map<std::string, std::string> bytes;   // each raw_data initializer's bytes, by name

    void add_raw(const std::string& name, int type, std::vector<std::int64_t> dims, std::size_t nbytes) {
        auto* t = model.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(type);
        for (auto d : dims) t->add_dims(d);
        bytes[name] = random_bytes(nbytes, static_cast<std::uint32_t>(bytes.size() + 1));
        t->set_raw_data(bytes[name]);
        auto* tt = model.mutable_graph()->add_output()->mutable_type()->mutable_tensor_type();
        model.mutable_graph()->mutable_output()->rbegin()->set_name(name);
        tt->set_elem_type(type);
        for (auto d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
};

std::map<std::string, literal> literals_by_name(const program& p, const onnx::ModelProto& m) {
    // Outputs are the initializers themselves, in order.
    std::map<std::string, literal> out;
    auto ret = std::prev(p.main().end());
    for (int i = 0; i < m.graph().output_size(); ++i) {
        auto ins = ret->inputs().at(static_cast<std::size_t>(i));
        EXPECT_TRUE(ins->is_literal()) << m.graph().output(i).name();
        out[m.graph().output(i).name()] = ins->get_literal();
    }
    return out;
}

class OnnxInitializers : public ::testing::Test {
protected:
    fs::path dir = fs::temp_directory_path() / ("kiln_onnx_initializers_" + std::to_string(::getpid()));
    void SetUp() override { fs::create_directories(dir); }
    void TearDown() override { fs::remove_all(dir); }

    // Sizes that take each path: an odd size (padded to 8 bytes), a short one (a string kept inside
    // its object), large ones (taken as they are), a packed int4 and an empty tensor.
    model_with_weights weights() {
        model_with_weights w;
        w.add_raw("odd", onnx::TensorProto::FLOAT, {1001}, 4004);
        w.add_raw("short", onnx::TensorProto::UINT8, {3}, 3);
        w.add_raw("big", onnx::TensorProto::FLOAT, {256, 256}, 256 * 256 * 4);
        w.add_raw("half", onnx::TensorProto::FLOAT16, {64, 3}, 64 * 3 * 2);
        w.add_raw("nibbles", 22 /* INT4: newer than libonnx-dev's enum */, {7}, 4);
        w.add_raw("empty", onnx::TensorProto::FLOAT, {3, 0}, 0);
        w.bytes["nibbles"][3] &= 0x0f;   // the literal zeroes the padding nibble after 7 elements
        return w;
    }

    static void expect_values(const program& p, const model_with_weights& w) {
        auto lits = literals_by_name(p, w.model);
        for (const auto& [name, bytes] : w.bytes) {
            const argument& a = lits.at(name).get_argument();
            ASSERT_EQ(a.get_shape().bytes(), bytes.size()) << name;
            EXPECT_TRUE(a.get_shape().standard()) << name;
            EXPECT_EQ(std::memcmp(a.data(), bytes.data(), bytes.size()), 0) << name;
            EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 16, 0u) << name;
        }
    }
};

TEST_F(OnnxInitializers, FromAFileHoldExactlyTheirBytes) {
    auto w = weights();
    std::string path = (dir / "m.onnx").string();
    std::ofstream(path, std::ios::binary) << w.model.SerializeAsString();
    std::vector<std::string> names;
    program p = parse_onnx_file(path, {}, &names);
    expect_values(p, w);
    EXPECT_EQ(names, (std::vector<std::string>{"odd", "short", "big", "half", "nibbles", "empty"}));
}

TEST_F(OnnxInitializers, FromABufferHoldExactlyTheirBytes) {
    auto w = weights();
    expect_values(parse(w.model), w);
}

// Loading copied each weight twice (into a zeroed buffer, then again into the literal) after
// protobuf's parse; now a raw_data literal keeps the parsed bytes: no host buffer is allocated.
TEST_F(OnnxInitializers, RawDataWeightsAreNotCopied) {
    model_with_weights w;
    for (int i = 0; i < 8; ++i) w.add_raw("w" + std::to_string(i), onnx::TensorProto::FLOAT, {64, 64}, 64 * 64 * 4);
    std::string path = (dir / "m.onnx").string();
    std::ofstream(path, std::ios::binary) << w.model.SerializeAsString();
    std::size_t before = host_buffer_allocations();
    program p = parse_onnx_file(path);
    EXPECT_EQ(host_buffer_allocations() - before, 0u);
    expect_values(p, w);
}

// Values in typed fields (float_data, int64_data) and Constant nodes still convert, once.
TEST_F(OnnxInitializers, TypedFieldsConvert) {
    auto m = make_model();
    auto* f = m.mutable_graph()->add_initializer();
    f->set_name("f");
    f->set_data_type(onnx::TensorProto::FLOAT);
    f->add_dims(3);
    for (float v : {1.5f, -2.25f, 3e-8f}) f->add_float_data(v);
    auto* i = m.mutable_graph()->add_initializer();
    i->set_name("i");
    i->set_data_type(onnx::TensorProto::INT64);
    i->add_dims(2);
    for (std::int64_t v : {std::int64_t{-7}, std::int64_t{1} << 40}) i->add_int64_data(v);
    add_output(m, "f", {3});
    add_output(m, "i", {2}, onnx::TensorProto::INT64);
    program p = parse(m);
    auto lits = literals_by_name(p, m);
    EXPECT_EQ(to_doubles(lits.at("f")), (std::vector<double>{1.5, -2.25, double(3e-8f)}));
    EXPECT_EQ(to_int64s(lits.at("i")), (std::vector<std::int64_t>{-7, std::int64_t{1} << 40}));
}

}  // namespace
}  // namespace kiln
