// kiln_program_cancel: another thread stops a run in progress (an ONNX Loop of 2^62 iterations)
// with KILN_STATUS_CANCELLED and a message naming the Loop node and the iteration.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "kiln/kiln.h"

namespace {

void set_type(onnx::ValueInfoProto* vi, const std::string& name, int elem, std::vector<long> dims) {
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* s = t->mutable_shape();
    for (long d : dims) s->add_dim()->set_dim_value(d);
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::string& name,
                          std::vector<std::string> in, std::vector<std::string> out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : in) n->add_input(i);
    for (auto& o : out) n->add_output(o);
    return n;
}

// y = Loop(M = 2^62, cond = true, x): each iteration negates the carried value.
std::string endless_loop_model() {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    g->set_name("g");
    auto* trips = g->add_initializer();
    trips->set_name("M");
    trips->set_data_type(onnx::TensorProto::INT64);
    trips->add_int64_data(std::int64_t{1} << 62);
    auto* cond = g->add_initializer();
    cond->set_name("cond");
    cond->set_data_type(onnx::TensorProto::BOOL);
    cond->add_int32_data(1);
    auto* loop = add_node(g, "Loop", "endless", {"M", "cond", "x"}, {"y"});
    auto* attr = loop->add_attribute();
    attr->set_name("body");
    attr->set_type(onnx::AttributeProto::GRAPH);
    auto* body = attr->mutable_g();
    body->set_name("body");
    set_type(body->add_input(), "i", onnx::TensorProto::INT64, {});
    set_type(body->add_input(), "c_in", onnx::TensorProto::BOOL, {});
    set_type(body->add_input(), "v_in", onnx::TensorProto::FLOAT, {3});
    add_node(body, "Identity", "keep_going", {"c_in"}, {"c_out"});
    add_node(body, "Neg", "flip", {"v_in"}, {"v_out"});
    set_type(body->add_output(), "c_out", onnx::TensorProto::BOOL, {});
    set_type(body->add_output(), "v_out", onnx::TensorProto::FLOAT, {3});
    set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {3});
    set_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {3});
    return m.SerializeAsString();
}

TEST(c_api_cancel, another_thread_stops_a_run) {
    std::string model = endless_loop_model();
    kiln_program_t prog = nullptr;
    ASSERT_EQ(kiln_parse_onnx_buffer(&prog, model.data(), model.size(), nullptr), KILN_STATUS_SUCCESS)
        << kiln_last_error_message();
    ASSERT_EQ(kiln_program_compile(prog, "ref", nullptr), KILN_STATUS_SUCCESS) << kiln_last_error_message();
    size_t dims[] = {3};
    kiln_shape_t s = nullptr;
    ASSERT_EQ(kiln_shape_create(&s, KILN_FLOAT32, dims, 1), KILN_STATUS_SUCCESS);
    std::vector<float> x = {1, -2, 3}, y(3);
    kiln_argument_t in = nullptr, out = nullptr;
    ASSERT_EQ(kiln_argument_create(&in, s, x.data()), KILN_STATUS_SUCCESS);
    ASSERT_EQ(kiln_argument_create(&out, s, y.data()), KILN_STATUS_SUCCESS);
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        EXPECT_EQ(kiln_program_cancel(prog), KILN_STATUS_SUCCESS);
    });
    const char* names[] = {"x"};
    kiln_status st = kiln_program_run(prog, names, &in, 1, &out, 1);
    canceller.join();
    std::string msg = kiln_last_error_message();
    EXPECT_EQ(st, KILN_STATUS_CANCELLED) << msg;
    EXPECT_STREQ(kiln_status_string(st), "cancelled");
    EXPECT_NE(msg.find("(node 'endless')"), std::string::npos) << msg;
    EXPECT_NE(msg.find(": iteration "), std::string::npos) << msg;
    EXPECT_NE(msg.find(": cancelled"), std::string::npos) << msg;
    EXPECT_EQ(kiln_program_cancel(nullptr), KILN_STATUS_BAD_PARAM);
    kiln_argument_destroy(in);
    kiln_argument_destroy(out);
    kiln_shape_destroy(s);
    kiln_program_destroy(prog);
}

}  // namespace
