// Device pointers the caller owns through the C API (kiln_argument_create_device): the ref target
// refuses them with an error naming the input; on the gpu target inputs and outputs are read and
// written on the device, checked against the same program on ref with host buffers, also after a
// save and load, for a static program and for one with a Loop (which runs an instruction at a
// time). The gpu tests skip with one line where there is no GPU.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

#include "kiln/kiln.hpp"

#ifdef KILN_TEST_CUDA
#include <cuda_runtime.h>
#endif

namespace {

namespace kc = kiln::client;

// y = relu(x W + b): x [4, 64], W [64, 32], b [32], float initializers from a seeded generator.
std::string dense_model() {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    g->set_name("dense");
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> u(-1, 1);
    auto init = [&](const char* name, std::vector<int> dims) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        int n = 1;
        for (int d : dims) t->add_dims(d), n *= d;
        for (int i = 0; i < n; ++i) t->add_float_data(u(gen));
    };
    init("W", {64, 32});
    init("b", {32});
    auto node = [&](const char* op, const char* name, std::vector<const char*> in, const char* out) {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (auto* i : in) n->add_input(i);
        n->add_output(out);
    };
    node("MatMul", "matmul_0", {"x", "W"}, "xw");
    node("Add", "add_1", {"xw", "b"}, "s");
    node("Relu", "relu_2", {"s"}, "y");
    for (auto [vi, name, cols] : {std::tuple{g->add_input(), "x", 64}, std::tuple{g->add_output(), "y", 32}}) {
        vi->set_name(name);
        auto* t = vi->mutable_type()->mutable_tensor_type();
        t->set_elem_type(onnx::TensorProto::FLOAT);
        t->mutable_shape()->add_dim()->set_dim_value(4);
        t->mutable_shape()->add_dim()->set_dim_value(cols);
    }
    return m.SerializeAsString();
}

kc::program compiled(const std::string& target) {
    std::string model = dense_model();
    auto p = kc::program::parse_onnx_buffer(model.data(), model.size());
    p.compile(target);
    return p;
}

std::vector<float> random_input(unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> n;
    std::vector<float> x(4 * 64);
    for (auto& v : x) v = n(gen);
    return x;
}

// The program on ref with host buffers.
std::vector<float> on_ref(const std::vector<float>& x) {
    auto p = compiled("ref");
    std::vector<float> in = x, y(4 * 32);
    p.run({{"x", kc::argument(p.input_shape(0), in.data())}}, {kc::argument(p.output_shape(0), y.data())});
    return y;
}

TEST(c_api_device, ref_refuses_device_pointers_naming_the_input) {
    auto p = compiled("ref");
    // Never dereferenced: the ref target refuses device arguments before it reads anything.
    alignas(64) static float fake[4 * 64];
    auto in = kc::argument::device(p.input_shape(0), fake);
    std::vector<float> y(4 * 32);
    kiln_argument_t args[] = {in.get()};
    kc::argument out(p.output_shape(0), y.data());
    kiln_argument_t outs[] = {out.get()};
    const char* names[] = {"x"};
    EXPECT_EQ(kiln_program_run(p.get(), names, args, 1, outs, 1), KILN_STATUS_RUN_ERROR);
    std::string msg = kiln_last_error_message();
    EXPECT_NE(msg.find("input 'x' is device memory"), std::string::npos) << msg;
    EXPECT_NE(msg.find("gpu target"), std::string::npos) << msg;
    int is_device = 0;
    EXPECT_EQ(kiln_argument_is_device(in.get(), &is_device), KILN_STATUS_SUCCESS);
    EXPECT_EQ(is_device, 1);
    kiln_argument_t bad = nullptr;
    EXPECT_EQ(kiln_argument_create_device(&bad, p.input_shape(0).get(), nullptr), KILN_STATUS_BAD_PARAM);
}

#ifdef KILN_TEST_CUDA

// The gpu program, or nothing and why (the tests skip where there is no GPU).
std::optional<kc::program> gpu_program(std::string& why) {
    try {
        return compiled("gpu");
    } catch (const kc::c_error& e) {
        why = e.what();
        return std::nullopt;
    }
}

struct device_floats {
    float* ptr = nullptr;
    explicit device_floats(std::size_t n) { EXPECT_EQ(cudaMalloc(&ptr, n * sizeof(float)), cudaSuccess); }
    ~device_floats() { cudaFree(ptr); }
};

double max_rel(const std::vector<float>& got, const std::vector<float>& want) {
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, std::abs(double(got[i]) - want[i]) / (1e-3 + std::abs(double(want[i]))));
    return worst;
}

// Device input and output, device input with a host output, and a saved and loaded copy.
TEST(c_api_device, gpu_reads_and_writes_caller_device_buffers) {
    std::string why;
    auto p = gpu_program(why);
    if (!p) GTEST_SKIP() << "no GPU: " << why;
    auto saved = std::filesystem::temp_directory_path() / ("kiln-device-" + std::to_string(::getpid()) + ".kiln");
    p->save(saved.string());
    auto loaded = kc::program::load(saved.string());
    std::filesystem::remove(saved);
    // Two sets of buffers in turn: after the first run the CUDA graph reads and writes them in
    // place, rebinding its kernels' pointers when the buffers change.
    device_floats dxs[2] = {device_floats(4 * 64), device_floats(4 * 64)};
    device_floats dys[2] = {device_floats(4 * 32), device_floats(4 * 32)};
    for (unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
        device_floats& dx = dxs[seed % 2];
        device_floats& dy = dys[seed % 2];
        auto x = random_input(seed);
        auto want = on_ref(x);
        ASSERT_EQ(cudaMemcpy(dx.ptr, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
        for (kc::program* q : {&*p, &loaded}) {
            ASSERT_EQ(cudaMemset(dy.ptr, 0xff, 4 * 32 * sizeof(float)), cudaSuccess);   // NaNs until written
            q->run({{"x", kc::argument::device(q->input_shape(0), dx.ptr)}},
                   {kc::argument::device(q->output_shape(0), dy.ptr)});
            std::vector<float> got(4 * 32);
            ASSERT_EQ(cudaMemcpy(got.data(), dy.ptr, got.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
            EXPECT_LT(max_rel(got, want), 1e-4) << "seed " << seed;
            std::vector<float> host(4 * 32, -7);
            q->run({{"x", kc::argument::device(q->input_shape(0), dx.ptr)}},
                   {kc::argument(q->output_shape(0), host.data())});
            EXPECT_LT(max_rel(host, want), 1e-4) << "seed " << seed;
        }
    }
}

// y = tanh(v) after 3 iterations of v <- v + 0.5 * v * v from v = x, x [4, 64]: a Loop, so the gpu
// runs it an instruction at a time.
std::string loop_model() {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    g->set_name("loop");
    auto value = [](onnx::ValueInfoProto* vi, const char* name, int type, std::vector<int> dims) {
        vi->set_name(name);
        auto* t = vi->mutable_type()->mutable_tensor_type();
        t->set_elem_type(type);
        auto* sh = t->mutable_shape();
        for (int d : dims) sh->add_dim()->set_dim_value(d);
    };
    auto node = [](onnx::GraphProto* graph, const char* op, std::vector<const char*> in, const char* out) {
        auto* n = graph->add_node();
        n->set_op_type(op);
        n->set_name(out);
        for (auto* i : in) n->add_input(i);
        n->add_output(out);
        return n;
    };
    auto* loop = node(g, "Loop", {"trips", "go", "x"}, "v");
    node(g, "Tanh", {"v"}, "y");
    auto* attr = loop->add_attribute();
    attr->set_name("body");
    attr->set_type(onnx::AttributeProto::GRAPH);
    auto* body = attr->mutable_g();
    body->set_name("body");
    value(body->add_input(), "i", onnx::TensorProto::INT64, {});
    value(body->add_input(), "cond", onnx::TensorProto::BOOL, {});
    value(body->add_input(), "w", onnx::TensorProto::FLOAT, {4, 64});
    node(body, "Identity", {"cond"}, "cond_out");
    node(body, "Mul", {"w", "w"}, "sq");
    node(body, "Mul", {"sq", "half"}, "step");
    node(body, "Add", {"w", "step"}, "w_out");
    value(body->add_output(), "cond_out", onnx::TensorProto::BOOL, {});
    value(body->add_output(), "w_out", onnx::TensorProto::FLOAT, {4, 64});
    auto* half = body->add_initializer();
    half->set_name("half");
    half->set_data_type(onnx::TensorProto::FLOAT);
    half->add_float_data(0.5f);
    auto* trips = g->add_initializer();
    trips->set_name("trips");
    trips->set_data_type(onnx::TensorProto::INT64);
    trips->add_int64_data(3);
    auto* go = g->add_initializer();
    go->set_name("go");
    go->set_data_type(onnx::TensorProto::BOOL);
    go->add_int32_data(1);
    value(g->add_input(), "x", onnx::TensorProto::FLOAT, {4, 64});
    value(g->add_output(), "y", onnx::TensorProto::FLOAT, {4, 64});
    return m.SerializeAsString();
}

// The Loop program with device input and output buffers, also after a save and load, against the
// same program on ref with host buffers, on fresh random inputs.
TEST(c_api_device, gpu_reads_and_writes_caller_device_buffers_on_a_loop) {
    std::string model = loop_model();
    std::optional<kc::program> p;
    try {
        p = kc::program::parse_onnx_buffer(model.data(), model.size());
        p->compile("gpu");
    } catch (const kc::c_error& e) {
        GTEST_SKIP() << "no GPU: " << e.what();
    }
    auto saved = std::filesystem::temp_directory_path() / ("kiln-device-loop-" + std::to_string(::getpid()) + ".kiln");
    p->save(saved.string());
    auto loaded = kc::program::load(saved.string());
    std::filesystem::remove(saved);
    auto ref = kc::program::parse_onnx_buffer(model.data(), model.size());
    ref.compile("ref");
    device_floats dx(4 * 64), dy(4 * 64);
    for (unsigned seed : {1u, 2u, 3u}) {
        std::mt19937 gen(seed);
        std::uniform_real_distribution<float> u(-0.5f, 0.5f);
        std::vector<float> x(4 * 64), want(4 * 64);
        for (auto& v : x) v = u(gen);
        ref.run({{"x", kc::argument(ref.input_shape(0), x.data())}}, {kc::argument(ref.output_shape(0), want.data())});
        ASSERT_EQ(cudaMemcpy(dx.ptr, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
        for (kc::program* q : {&*p, &loaded}) {
            ASSERT_EQ(cudaMemset(dy.ptr, 0xff, 4 * 64 * sizeof(float)), cudaSuccess);   // NaNs until written
            q->run({{"x", kc::argument::device(q->input_shape(0), dx.ptr)}},
                   {kc::argument::device(q->output_shape(0), dy.ptr)});
            std::vector<float> got(4 * 64);
            ASSERT_EQ(cudaMemcpy(got.data(), dy.ptr, got.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
            EXPECT_LT(max_rel(got, want), 1e-4) << "seed " << seed;
        }
    }
}

TEST(c_api_device, gpu_refuses_host_memory_given_as_device_and_wrong_shapes) {
    std::string why;
    auto p = gpu_program(why);
    if (!p) GTEST_SKIP() << "no GPU: " << why;
    std::vector<float> host(4 * 64), y(4 * 32);
    try {
        p->run({{"x", kc::argument::device(p->input_shape(0), host.data())}}, {kc::argument(p->output_shape(0), y.data())});
        ADD_FAILURE() << "a host pointer given as device memory ran";
    } catch (const kc::c_error& e) {
        EXPECT_EQ(e.status(), KILN_STATUS_RUN_ERROR);
        EXPECT_NE(std::string(e.what()).find("input 'x' is given as a device buffer, but it is not CUDA device memory"),
                  std::string::npos)
            << e.what();
    }
    device_floats dx(4 * 64), small(4 * 16);
    try {
        p->run({{"x", kc::argument::device(p->input_shape(0), dx.ptr)}},
              {kc::argument::device(kc::shape(KILN_FLOAT32, {4, 16}), small.ptr)});
        ADD_FAILURE() << "a mis-shaped output buffer ran";
    } catch (const kc::c_error& e) {
        EXPECT_EQ(e.status(), KILN_STATUS_INPUT_ERROR);
        EXPECT_NE(std::string(e.what()).find("output 'y' computes"), std::string::npos) << e.what();
    }
}

#endif

}  // namespace
