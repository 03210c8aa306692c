// The C API (kiln/kiln.h) and its C++ wrapper (kiln/kiln.hpp) on small ONNX models built here:
// parse from memory and file, compile, run on caller buffers, query names and shapes, and every
// error path (status code and message). This binary also runs under valgrind (c_api_valgrind).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

namespace {

// y = relu(x + b), b a float initializer; x is [batch, 4] with batch symbolic.
std::string relu_model(bool symbolic_batch = true, const std::string& op = "Relu") {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    g->set_name("g");
    auto* b = g->add_initializer();
    b->set_name("b");
    b->set_data_type(onnx::TensorProto::FLOAT);
    b->add_dims(4);
    for (float v : {0.5f, -1.0f, 0.25f, 2.0f}) b->add_float_data(v);
    auto* add = g->add_node();
    add->set_op_type("Add");
    add->set_name("add_0");
    add->add_input("x");
    add->add_input("b");
    add->add_output("s");
    auto* relu = g->add_node();
    relu->set_op_type(op);
    relu->set_name("act_1");
    relu->add_input("s");
    relu->add_output("y");
    for (auto* vi : {g->add_input(), g->add_output()}) {
        vi->set_name(vi == &g->input(0) ? "x" : "y");
        auto* t = vi->mutable_type()->mutable_tensor_type();
        t->set_elem_type(onnx::TensorProto::FLOAT);
        auto* d0 = t->mutable_shape()->add_dim();
        if (symbolic_batch) d0->set_dim_param("batch");
        else d0->set_dim_value(2);
        t->mutable_shape()->add_dim()->set_dim_value(4);
    }
    return m.SerializeAsString();
}

struct c_api : ::testing::Test {
    kiln_program_t prog = nullptr;
    kiln_onnx_options_t opts = nullptr;
    void SetUp() override { ASSERT_EQ(kiln_onnx_options_create(&opts), KILN_STATUS_SUCCESS); }
    void TearDown() override {
        kiln_program_destroy(prog);
        kiln_onnx_options_destroy(opts);
    }
    void parse(const std::string& model) {
        ASSERT_EQ(kiln_parse_onnx_buffer(&prog, model.data(), model.size(), opts), KILN_STATUS_SUCCESS)
            << kiln_last_error_message();
    }
    std::string last() const { return kiln_last_error_message(); }
};

TEST_F(c_api, parse_compile_run_on_caller_buffers) {
    ASSERT_EQ(kiln_onnx_options_set_dim_param(opts, "batch", 2, 2), KILN_STATUS_SUCCESS);
    parse(relu_model());
    // No target: the default one (cpu on a machine without a GPU), never ref.
    ASSERT_EQ(kiln_program_compile(prog, nullptr, nullptr), KILN_STATUS_SUCCESS) << last();
    const char* target = nullptr;
    ASSERT_EQ(kiln_program_target(prog, &target), KILN_STATUS_SUCCESS);
    EXPECT_TRUE(std::string(target) == "cpu" || std::string(target) == "gpu") << target;

    size_t dims[] = {2, 4};
    kiln_shape_t s = nullptr;
    ASSERT_EQ(kiln_shape_create(&s, KILN_FLOAT32, dims, 2), KILN_STATUS_SUCCESS);
    std::vector<float> x = {-1, 0, 1, 2, 3, -4, -0.5f, -3}, y(8, 42.0f);
    kiln_argument_t in = nullptr, out = nullptr;
    ASSERT_EQ(kiln_argument_create(&in, s, x.data()), KILN_STATUS_SUCCESS);
    ASSERT_EQ(kiln_argument_create(&out, s, y.data()), KILN_STATUS_SUCCESS);
    const char* names[] = {"x"};
    ASSERT_EQ(kiln_program_run(prog, names, &in, 1, &out, 1), KILN_STATUS_SUCCESS) << last();
    const float b[] = {0.5f, -1.0f, 0.25f, 2.0f};
    for (size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y[i], std::max(0.0f, x[i] + b[i % 4])) << i;
    EXPECT_EQ(last(), "");
    kiln_argument_destroy(in);
    kiln_argument_destroy(out);
    kiln_shape_destroy(s);
}

TEST_F(c_api, names_shapes_and_types) {
    ASSERT_EQ(kiln_onnx_options_set_dim_param(opts, "batch", 1, 8), KILN_STATUS_SUCCESS);
    parse(relu_model());
    size_t n = 0;
    ASSERT_EQ(kiln_program_input_count(prog, &n), KILN_STATUS_SUCCESS);
    EXPECT_EQ(n, 1u);
    ASSERT_EQ(kiln_program_output_count(prog, &n), KILN_STATUS_SUCCESS);
    EXPECT_EQ(n, 1u);
    const char* name = nullptr;
    ASSERT_EQ(kiln_program_input_name(prog, 0, &name), KILN_STATUS_SUCCESS);
    EXPECT_STREQ(name, "x");
    ASSERT_EQ(kiln_program_output_name(prog, 0, &name), KILN_STATUS_SUCCESS);
    EXPECT_STREQ(name, "y");
    kiln_shape_t s = nullptr;
    ASSERT_EQ(kiln_program_input_shape(prog, 0, &s), KILN_STATUS_SUCCESS);
    kiln_dtype t;
    int dynamic = 0;
    size_t lo = 0, hi = 0, ndim = 0;
    const char* symbol = nullptr;
    EXPECT_EQ(kiln_shape_type(s, &t), KILN_STATUS_SUCCESS);
    EXPECT_EQ(t, KILN_FLOAT32);
    EXPECT_STREQ(kiln_dtype_name(t), "float_type");
    EXPECT_EQ(kiln_shape_ndim(s, &ndim), KILN_STATUS_SUCCESS);
    EXPECT_EQ(ndim, 2u);
    EXPECT_EQ(kiln_shape_is_dynamic(s, &dynamic), KILN_STATUS_SUCCESS);
    EXPECT_EQ(dynamic, 1);
    EXPECT_EQ(kiln_shape_dim_range(s, 0, &lo, &hi, &symbol), KILN_STATUS_SUCCESS);
    EXPECT_EQ(lo, 1u);
    EXPECT_EQ(hi, 8u);
    EXPECT_EQ(kiln_shape_dim_range(s, 1, &lo, &hi, nullptr), KILN_STATUS_SUCCESS);
    EXPECT_EQ(lo, 4u);
    EXPECT_EQ(hi, 4u);
    const size_t* lens = nullptr;
    EXPECT_EQ(kiln_shape_lens(s, &lens), KILN_STATUS_BAD_PARAM);
    EXPECT_NE(last().find("dynamic"), std::string::npos) << last();
    kiln_shape_destroy(s);
    const char* text = nullptr;
    ASSERT_EQ(kiln_program_string(prog, &text), KILN_STATUS_SUCCESS);
    EXPECT_NE(std::string(text).find("relu"), std::string::npos) << text;
}

TEST_F(c_api, dynamic_input_runs_at_any_size_in_range) {
    ASSERT_EQ(kiln_onnx_options_set_dim_param(opts, "batch", 1, 8), KILN_STATUS_SUCCESS);
    parse(relu_model());
    ASSERT_EQ(kiln_program_compile(prog, "ref", nullptr), KILN_STATUS_SUCCESS) << last();
    size_t dims[] = {3, 4};
    kiln_shape_t s = nullptr;
    ASSERT_EQ(kiln_shape_create(&s, KILN_FLOAT32, dims, 2), KILN_STATUS_SUCCESS);
    std::vector<float> x(12, 1.0f), y(12);
    kiln_argument_t in = nullptr, out = nullptr;
    ASSERT_EQ(kiln_argument_create(&in, s, x.data()), KILN_STATUS_SUCCESS);
    ASSERT_EQ(kiln_argument_create(&out, s, y.data()), KILN_STATUS_SUCCESS);
    const char* names[] = {"x"};
    ASSERT_EQ(kiln_program_run(prog, names, &in, 1, &out, 1), KILN_STATUS_SUCCESS) << last();
    EXPECT_FLOAT_EQ(y[4 + 3], 3.0f);
    EXPECT_FLOAT_EQ(y[1], 0.0f);
    kiln_argument_destroy(in);
    kiln_argument_destroy(out);
    kiln_shape_destroy(s);
}

TEST_F(c_api, parse_from_file_and_errors_naming_the_file_and_node) {
    auto dir = std::filesystem::temp_directory_path() / ("kiln_c_api_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::string path = (dir / "m.onnx").string();
    std::ofstream(path, std::ios::binary) << relu_model(false);
    ASSERT_EQ(kiln_parse_onnx_file(&prog, path.c_str(), nullptr), KILN_STATUS_SUCCESS) << last();

    kiln_program_t bad = nullptr;
    EXPECT_EQ(kiln_parse_onnx_file(&bad, (dir / "missing.onnx").string().c_str(), nullptr), KILN_STATUS_PARSE_ERROR);
    EXPECT_NE(last().find("missing.onnx"), std::string::npos) << last();
    EXPECT_EQ(bad, nullptr);
    std::string junk = "this is not a protobuf \x01\x02\x03";
    std::ofstream(dir / "junk.onnx", std::ios::binary) << junk;
    EXPECT_EQ(kiln_parse_onnx_file(&bad, (dir / "junk.onnx").string().c_str(), nullptr), KILN_STATUS_PARSE_ERROR);
    EXPECT_NE(last(), "");
    std::string unknown = relu_model(false, "NoSuchOp");
    EXPECT_EQ(kiln_parse_onnx_buffer(&bad, unknown.data(), unknown.size(), nullptr), KILN_STATUS_PARSE_ERROR);
    EXPECT_NE(last().find("act_1"), std::string::npos) << last();
    std::filesystem::remove_all(dir);
}

TEST_F(c_api, symbolic_dim_without_size_is_a_parse_error) {
    std::string m = relu_model();
    EXPECT_EQ(kiln_parse_onnx_buffer(&prog, m.data(), m.size(), nullptr), KILN_STATUS_PARSE_ERROR);
    EXPECT_NE(last().find("batch"), std::string::npos) << last();
}

TEST_F(c_api, unknown_target_names_the_built_ones) {
    ASSERT_EQ(kiln_onnx_options_set_default_dim(opts, 2), KILN_STATUS_SUCCESS);
    parse(relu_model());
    EXPECT_EQ(kiln_program_compile(prog, "tpu", nullptr), KILN_STATUS_UNKNOWN_TARGET);
    EXPECT_NE(last().find("built targets: "), std::string::npos) << last();
    EXPECT_NE(last().find("ref"), std::string::npos) << last();
    EXPECT_NE(std::string(kiln_built_targets()).find("ref"), std::string::npos);
}

TEST_F(c_api, run_errors_name_the_input_or_output) {
    ASSERT_EQ(kiln_onnx_options_set_default_dim(opts, 2), KILN_STATUS_SUCCESS);
    parse(relu_model());
    size_t dims[] = {2, 4}, wrong[] = {2, 5};
    kiln_shape_t s = nullptr, ws = nullptr, is = nullptr;
    ASSERT_EQ(kiln_shape_create(&s, KILN_FLOAT32, dims, 2), KILN_STATUS_SUCCESS);
    ASSERT_EQ(kiln_shape_create(&ws, KILN_FLOAT32, wrong, 2), KILN_STATUS_SUCCESS);
    ASSERT_EQ(kiln_shape_create(&is, KILN_INT32, dims, 2), KILN_STATUS_SUCCESS);
    kiln_argument_t in = nullptr, out = nullptr, win = nullptr, iin = nullptr;
    ASSERT_EQ(kiln_argument_create(&in, s, nullptr), KILN_STATUS_SUCCESS);
    ASSERT_EQ(kiln_argument_create(&out, s, nullptr), KILN_STATUS_SUCCESS);
    ASSERT_EQ(kiln_argument_create(&win, ws, nullptr), KILN_STATUS_SUCCESS);
    ASSERT_EQ(kiln_argument_create(&iin, is, nullptr), KILN_STATUS_SUCCESS);
    const char* x[] = {"x"};
    const char* other[] = {"z"};

    EXPECT_EQ(kiln_program_run(prog, x, &in, 1, &out, 1), KILN_STATUS_RUN_ERROR);
    EXPECT_NE(last().find("not compiled"), std::string::npos) << last();
    ASSERT_EQ(kiln_program_compile(prog, "ref", nullptr), KILN_STATUS_SUCCESS);
    EXPECT_EQ(kiln_program_compile(prog, "ref", nullptr), KILN_STATUS_COMPILE_ERROR);
    EXPECT_NE(last().find("already compiled"), std::string::npos) << last();

    EXPECT_EQ(kiln_program_run(prog, nullptr, nullptr, 0, &out, 1), KILN_STATUS_INPUT_ERROR);
    EXPECT_NE(last().find("missing input 'x'"), std::string::npos) << last();
    kiln_argument_t two[] = {in, in};
    const char* xz[] = {"x", "z"};
    EXPECT_EQ(kiln_program_run(prog, xz, two, 2, &out, 1), KILN_STATUS_INPUT_ERROR);
    EXPECT_NE(last().find("unknown input 'z'"), std::string::npos) << last();
    EXPECT_EQ(kiln_program_run(prog, other, &in, 1, &out, 1), KILN_STATUS_INPUT_ERROR);
    EXPECT_EQ(kiln_program_run(prog, x, &win, 1, &out, 1), KILN_STATUS_INPUT_ERROR);
    EXPECT_NE(last().find("input 'x' has lens {2, 5}"), std::string::npos) << last();
    EXPECT_EQ(kiln_program_run(prog, x, &iin, 1, &out, 1), KILN_STATUS_INPUT_ERROR);
    EXPECT_NE(last().find("input 'x' has type int32_type"), std::string::npos) << last();
    EXPECT_EQ(kiln_program_run(prog, x, &in, 1, &win, 1), KILN_STATUS_INPUT_ERROR);
    EXPECT_NE(last().find("output 'y'"), std::string::npos) << last();
    EXPECT_EQ(kiln_program_run(prog, x, &in, 1, nullptr, 0), KILN_STATUS_INPUT_ERROR);
    EXPECT_NE(last().find("0 output buffers given"), std::string::npos) << last();
    EXPECT_EQ(kiln_program_run(prog, x, &in, 1, &out, 1), KILN_STATUS_SUCCESS);
    EXPECT_EQ(last(), "");
    for (auto a : {in, out, win, iin}) kiln_argument_destroy(a);
    for (auto sh : {s, ws, is}) kiln_shape_destroy(sh);
}

TEST_F(c_api, bad_params_are_reported_not_crashed_on) {
    EXPECT_EQ(kiln_program_compile(nullptr, "ref", nullptr), KILN_STATUS_BAD_PARAM);
    EXPECT_NE(last().find("program is NULL"), std::string::npos) << last();
    EXPECT_EQ(kiln_parse_onnx_file(nullptr, "x.onnx", nullptr), KILN_STATUS_BAD_PARAM);
    EXPECT_EQ(kiln_parse_onnx_file(&prog, nullptr, nullptr), KILN_STATUS_BAD_PARAM);
    EXPECT_EQ(kiln_parse_onnx_buffer(&prog, nullptr, 3, nullptr), KILN_STATUS_BAD_PARAM);
    kiln_shape_t s = nullptr;
    EXPECT_EQ(kiln_shape_create(&s, static_cast<kiln_dtype>(99), nullptr, 0), KILN_STATUS_BAD_PARAM);
    EXPECT_NE(last().find("unknown kiln_dtype 99"), std::string::npos) << last();
    EXPECT_EQ(kiln_shape_create(&s, KILN_FLOAT32, nullptr, 2), KILN_STATUS_BAD_PARAM);
    EXPECT_EQ(kiln_onnx_options_set_dim_param(opts, "batch", 4, 2), KILN_STATUS_BAD_PARAM);
    EXPECT_EQ(kiln_onnx_options_set_input_dims(opts, nullptr, nullptr, 0), KILN_STATUS_BAD_PARAM);
    kiln_compile_options_t co = nullptr;
    ASSERT_EQ(kiln_compile_options_create(&co), KILN_STATUS_SUCCESS);
    EXPECT_EQ(kiln_compile_options_set_precision(co, static_cast<kiln_precision>(7)), KILN_STATUS_BAD_PARAM);
    kiln_compile_options_destroy(co);
    ASSERT_EQ(kiln_onnx_options_set_default_dim(opts, 1), KILN_STATUS_SUCCESS);
    parse(relu_model());
    const char* name = nullptr;
    EXPECT_EQ(kiln_program_input_name(prog, 1, &name), KILN_STATUS_BAD_PARAM);
    EXPECT_NE(last().find("input index 1 is out of range"), std::string::npos) << last();
    EXPECT_EQ(kiln_program_output_shape(prog, 3, &s), KILN_STATUS_BAD_PARAM);
    EXPECT_STREQ(kiln_status_string(KILN_STATUS_UNKNOWN_TARGET), "unknown target");
}

TEST_F(c_api, compile_options_map_onto_the_compiler) {
    ASSERT_EQ(kiln_onnx_options_set_input_dims(opts, "x", std::vector<size_t>{2, 4}.data(), 2), KILN_STATUS_SUCCESS);
    parse(relu_model());
    kiln_compile_options_t co = nullptr;
    ASSERT_EQ(kiln_compile_options_create(&co), KILN_STATUS_SUCCESS);
    EXPECT_EQ(kiln_compile_options_set_optimize(co, 0), KILN_STATUS_SUCCESS);
    EXPECT_EQ(kiln_compile_options_set_fast_math(co, 0), KILN_STATUS_SUCCESS);
    EXPECT_EQ(kiln_compile_options_set_exhaustive_tune(co, 1), KILN_STATUS_SUCCESS);
    EXPECT_EQ(kiln_compile_options_set_offload_copy(co, 1), KILN_STATUS_SUCCESS);
    ASSERT_EQ(kiln_program_compile(prog, "ref", co), KILN_STATUS_SUCCESS) << last();
    kiln_compile_options_destroy(co);
}

TEST_F(c_api, save_and_load_without_compiling_again) {
    ASSERT_EQ(kiln_onnx_options_set_dim_param(opts, "batch", 2, 2), KILN_STATUS_SUCCESS);
    parse(relu_model());
    auto dir = std::filesystem::temp_directory_path() / ("kiln_c_api_save_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::string path = (dir / "m.kiln").string();
    EXPECT_EQ(kiln_program_save(prog, path.c_str()), KILN_STATUS_COMPILE_ERROR);
    EXPECT_NE(last().find("not compiled"), std::string::npos) << last();
    ASSERT_EQ(kiln_program_compile(prog, "ref", nullptr), KILN_STATUS_SUCCESS);
    ASSERT_EQ(kiln_program_save(prog, path.c_str()), KILN_STATUS_SUCCESS) << last();

    kiln_program_t loaded = nullptr;
    ASSERT_EQ(kiln_load(&loaded, path.c_str()), KILN_STATUS_SUCCESS) << last();
    const char* s = nullptr;
    ASSERT_EQ(kiln_program_target(loaded, &s), KILN_STATUS_SUCCESS);
    EXPECT_STREQ(s, "ref");
    ASSERT_EQ(kiln_program_output_name(loaded, 0, &s), KILN_STATUS_SUCCESS);
    EXPECT_STREQ(s, "y");
    size_t dims[] = {2, 4};
    kiln_shape_t sh = nullptr;
    ASSERT_EQ(kiln_shape_create(&sh, KILN_FLOAT32, dims, 2), KILN_STATUS_SUCCESS);
    std::vector<float> x = {-1, 0, 1, 2, 3, -4, -0.5f, -3}, y(8), z(8);
    kiln_argument_t in = nullptr, out = nullptr, out2 = nullptr;
    ASSERT_EQ(kiln_argument_create(&in, sh, x.data()), KILN_STATUS_SUCCESS);
    ASSERT_EQ(kiln_argument_create(&out, sh, y.data()), KILN_STATUS_SUCCESS);
    ASSERT_EQ(kiln_argument_create(&out2, sh, z.data()), KILN_STATUS_SUCCESS);
    const char* names[] = {"x"};
    ASSERT_EQ(kiln_program_run(loaded, names, &in, 1, &out, 1), KILN_STATUS_SUCCESS) << last();
    ASSERT_EQ(kiln_program_run(prog, names, &in, 1, &out2, 1), KILN_STATUS_SUCCESS) << last();
    EXPECT_EQ(y, z);
    EXPECT_FLOAT_EQ(y[3], 4.0f);

    kiln_program_t bad = nullptr;
    EXPECT_EQ(kiln_load(&bad, (dir / "missing.kiln").string().c_str()), KILN_STATUS_IO_ERROR);
    EXPECT_NE(last().find("missing.kiln"), std::string::npos) << last();
    std::ifstream f(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::ofstream(dir / "short.kiln", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    EXPECT_EQ(kiln_load(&bad, (dir / "short.kiln").string().c_str()), KILN_STATUS_IO_ERROR);
    EXPECT_NE(last().find("short.kiln"), std::string::npos) << last();
    EXPECT_EQ(bad, nullptr);
    EXPECT_EQ(kiln_program_save(prog, (dir / "no/such/dir.kiln").string().c_str()), KILN_STATUS_IO_ERROR);
    EXPECT_EQ(kiln_load(&bad, nullptr), KILN_STATUS_BAD_PARAM);

    for (auto a : {in, out, out2}) kiln_argument_destroy(a);
    kiln_shape_destroy(sh);
    kiln_program_destroy(loaded);
    std::filesystem::remove_all(dir);
}

TEST(cpp_wrapper, runs_and_throws_with_status) {
    namespace kc = kiln::client;
    std::string m = relu_model();
    kc::onnx_options o;
    o.set_dim_param("batch", 2);
    kc::program p = kc::program::parse_onnx_buffer(m.data(), m.size(), o);
    EXPECT_EQ(p.input_name(0), "x");
    EXPECT_EQ(p.output_name(0), "y");
    EXPECT_EQ(p.input_shape(0).lens(), (std::vector<size_t>{2, 4}));
    EXPECT_EQ(p.input_shape(0).str(), "float_type, {2, 4}, {4, 1}");
    try {
        p.compile("tpu");
        FAIL() << "compiling for an unbuilt target should throw";
    } catch (const kc::c_error& e) {
        EXPECT_EQ(e.status(), KILN_STATUS_UNKNOWN_TARGET);
        EXPECT_NE(std::string(e.what()).find("target 'tpu' is not built"), std::string::npos) << e.what();
    }
    p.compile();
    EXPECT_TRUE(p.target() == "cpu" || p.target() == "gpu") << p.target();
    std::vector<float> x = {1, 2, 3, 4, -5, -6, -7, -8}, y(8);
    p.run({{"x", kc::argument(p.input_shape(0), x.data())}}, {kc::argument(p.output_shape(0), y.data())});
    EXPECT_FLOAT_EQ(y[0], 1.5f);
    EXPECT_FLOAT_EQ(y[3], 6.0f);
    EXPECT_FLOAT_EQ(y[4], 0.0f);
    EXPECT_THROW(p.run({}, {kc::argument(p.output_shape(0), y.data())}), kc::c_error);
    std::string path = (std::filesystem::temp_directory_path() / ("kiln_wrapper_" + std::to_string(::getpid()) + ".kiln")).string();
    p.save(path);
    kc::program loaded = kc::program::load(path);
    std::vector<float> y2(8);
    loaded.run({{"x", kc::argument(loaded.input_shape(0), x.data())}}, {kc::argument(loaded.output_shape(0), y2.data())});
    EXPECT_EQ(y, y2);
    std::filesystem::remove(path);
    try {
        kc::program::load(path);
        FAIL() << "loading a removed file should throw";
    } catch (const kc::c_error& e) {
        EXPECT_EQ(e.status(), KILN_STATUS_IO_ERROR);
    }
    kc::argument owned(kc::shape(KILN_INT8, {3}));
    EXPECT_EQ(static_cast<const char*>(owned.data())[2], 0);
    EXPECT_EQ(owned.get_shape().bytes(), 3u);
}

}  // namespace
