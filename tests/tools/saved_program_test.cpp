// The saved-program container: a round trip keeps the program and its results, literals borrow
// the file mapping, and every kind of damaged or foreign file is refused with a clear message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "../core/expect_error.hpp"
#include "core/random.hpp"
#include "core/text_parser.hpp"
#include "tools/saved_program.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// A program with a weight large enough to matter, an int literal, a submodule call and
// attributes of several kinds.
program sample_program() {
    std::string w = "{";
    for (int i = 0; i < 12; ++i) w += (i ? ", " : "") + std::to_string(0.25 * i - 1.5);
    w += "}";
    return parse_text(
        "module: \"main\"\n"
        "c = @param:c -> bool_type, {}\n"
        "x = @param:x -> float_type, {2, 3}\n"
        "@0 = @literal" + w + " -> float_type, {3, 4}\n"
        "@1 = @literal{1, -2, 3} -> int32_type, {3}\n"
        "@2 = dot(x,@0)\n"
        "@3 = convert[target_type=float_type](@1)\n"
        "@4 = softmax[axis=1](@2)\n"
        "@5 = if(c,x,x), [then_b, else_b]\n"
        "@6 = get_tuple_elem[index=0](@5)\n"
        "@7 = @return(@4,@6,@3)\n"
        "module: \"then_b\"\n"
        "a = @param:a -> float_type, {2, 3}\n"
        "b = @param:b -> float_type, {2, 3}\n"
        "@0 = add(a,b)\n"
        "@1 = @return(@0)\n"
        "module: \"else_b\"\n"
        "a = @param:a -> float_type, {2, 3}\n"
        "b = @param:b -> float_type, {2, 3}\n"
        "@0 = mul(a,b)\n"
        "@1 = @return(@0)\n");
}

class saved_program_test : public ::testing::Test {
protected:
    fs::path dir;
    std::string file;
    void SetUp() override {
        dir = fs::temp_directory_path() /
              ("kiln_saved_" + std::to_string(getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir);
        file = (dir / "model.kiln").string();
    }
    void TearDown() override { fs::remove_all(dir); }

    std::string bytes() const {
        std::ifstream f(file, std::ios::binary);
        return {std::istreambuf_iterator<char>(f), {}};
    }
    void write(const std::string& b) const { std::ofstream(file, std::ios::binary | std::ios::trunc) << b; }
};

TEST_F(saved_program_test, round_trip_keeps_program_and_results) {
    program p = sample_program();
    p.main().begin()->set_source_name("cond_input");
    saved_program_info info;
    info.options.precision = compute_precision::bf16;
    info.options.optimize = false;
    save_program(p, info, file);
    loaded_program l = load_program(file);
    EXPECT_EQ(to_string(l.prog), to_string(p));
    EXPECT_EQ(l.prog.main().begin()->source_name(), "cond_input");
    EXPECT_EQ(l.info.target, "ref");
    EXPECT_EQ(l.info.kiln_version, kiln_version());
    EXPECT_EQ(l.info.options.precision, compute_precision::bf16);
    EXPECT_FALSE(l.info.options.optimize);
    EXPECT_EQ(l.info.options_hash, options_hash(info.options));
    EXPECT_NE(options_hash(info.options), options_hash(compile_options{}));
    EXPECT_EQ(l.mapped_bytes, 12 * 4 + 3 * 4u);
    EXPECT_GE(l.load_ms, 0);
    for (bool cond : {true, false}) {
        param_map in = random_inputs(p.main(), 3);
        in["c"] = from_int64s(shape(dtype::bool_, std::vector<std::size_t>{}), std::vector<std::int64_t>{cond});
        auto want = evaluate(p, in), got = evaluate(l.prog, in);
        ASSERT_EQ(want.size(), got.size());
        for (std::size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(got[i].same_values(want[i])) << "output " << i;
    }
}

TEST_F(saved_program_test, literals_borrow_the_mapping_aligned) {
    save_program(sample_program(), {}, file);
    loaded_program l = load_program(file);
    for (const auto& ins : l.prog.main()) {
        if (!ins.is_literal()) continue;
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ins.get_literal().get_argument().data()) % 64, 0u);
    }
    // The program outlives the file: the mapping stays valid.
    fs::remove(file);
    auto outs = evaluate(l.prog, random_inputs(l.prog.main(), 1));
    EXPECT_EQ(outs.size(), 3u);
}

TEST_F(saved_program_test, kernels_round_trip) {
    std::vector<kernel_binary> k{{"fused_0", {1, 2, 3, 4, 5}}, {"fused_1", {}}};
    save_program(sample_program(), {}, file, {k, {}});
    loaded_program l = load_program(file);
    ASSERT_EQ(l.parts.kernels.size(), 2u);
    EXPECT_EQ(l.parts.kernels[0].name, "fused_0");
    EXPECT_EQ(l.parts.kernels[0].code, k[0].code);
    EXPECT_TRUE(l.parts.kernels[1].code.empty());
}

TEST_F(saved_program_test, wrong_magic) {
    save_program(sample_program(), {}, file);
    std::string b = bytes();
    b[1] = 'X';
    write(b);
    expect_error([&] { load_program(file); }, "'" + file + "' is not a kiln saved program (wrong magic bytes)");
    EXPECT_FALSE(is_saved_program(file));
}

TEST_F(saved_program_test, other_format_version) {
    save_program(sample_program(), {}, file);
    std::string b = bytes();
    b[8] = static_cast<char>(saved_program_format_version + 1);
    write(b);
    expect_error([&] { load_program(file); },
                 "has saved-program format version " + std::to_string(saved_program_format_version + 1));
    EXPECT_TRUE(is_saved_program(file));
}

TEST_F(saved_program_test, truncated) {
    save_program(sample_program(), {}, file);
    std::string b = bytes();
    write(b.substr(0, b.size() - 100));
    expect_error([&] { load_program(file); }, "'" + file + "' is truncated: section");
    write(b.substr(0, 40));
    expect_error([&] { load_program(file); }, "is truncated: its header needs");
    write(b.substr(0, 10));
    expect_error([&] { load_program(file); }, "is truncated: 10 bytes, less than the 32-byte preamble");
}

TEST_F(saved_program_test, flipped_byte_fails_its_checksum) {
    save_program(sample_program(), {}, file);
    std::string b = bytes();
    // The last literal section's first byte (the int32 literal 1).
    std::int32_t one = 1;
    auto at = b.rfind(std::string(reinterpret_cast<const char*>(&one), 4) + std::string("\xfe\xff\xff\xff", 4));
    ASSERT_NE(at, std::string::npos);
    b[at] ^= 0x10;
    write(b);
    expect_error([&] { load_program(file); }, "is corrupted: the checksum of section 2 (literal) does not match");
    b = bytes();
    b[b.find("\"target\"") + 2] ^= 1;   // inside the header
    b[at] ^= 0x10;
    write(b);
    expect_error([&] { load_program(file); }, "is corrupted: the header's checksum does not match");
}

TEST_F(saved_program_test, missing_file) {
    expect_error([&] { load_program(file); }, "cannot read the saved program '" + file + "'");
}

class arch_target final : public target {
public:
    std::string name() const override { return "saved_program_test_arch"; }
    std::string device_arch() const override { return "test_arch_2"; }
    std::vector<pass> passes(const compile_options&) const override { return {}; }
    std::vector<std::string> ignored_options(const compile_options&) const override { return {}; }
    std::unique_ptr<executable> load(program p, const compile_options& opts) const override {
        return make_target("ref")->load(std::move(p), opts);
    }
};

TEST_F(saved_program_test, other_device_architecture) {
    register_target("saved_program_test_arch", [] { return std::unique_ptr<target>(new arch_target()); });
    saved_program_info info;
    info.target = "saved_program_test_arch";
    info.device_arch = "test_arch_1";
    save_program(sample_program(), info, file);
    expect_error([&] { load_program(file); },
                 "was compiled for device architecture test_arch_1 but this saved_program_test_arch device is "
                 "test_arch_2");
    info.device_arch = "test_arch_2";
    save_program(sample_program(), info, file);
    EXPECT_EQ(load_program(file).info.device_arch, "test_arch_2");
}

TEST_F(saved_program_test, target_not_built) {
    saved_program_info info;
    info.target = "gpu_not_built";
    save_program(sample_program(), info, file);
    expect_error([&] { load_program(file); },
                 "was compiled for the gpu_not_built target, which is not built into this kiln (built targets:");
}

}  // namespace
}  // namespace kiln
