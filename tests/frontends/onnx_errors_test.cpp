// Every error the ONNX frontend reports, checked for what its message names (node, op type,
// opset, tensor, file, input, dim), and --skip-unknown-operators, which defers the error for
// unsupported ops to run time.
#include <gtest/gtest.h>

#include <random>

#include "core/eval.hpp"
#include "onnx_test_util.hpp"

namespace kiln {
namespace {

using namespace onnx_test;

argument floats(const std::vector<std::size_t>& lens, const std::vector<float>& values) {
    argument a(shape(dtype::float32, lens));
    std::memcpy(a.data(), values.data(), values.size() * sizeof(float));
    return a;
}

const shape& output_shape(const program& p, std::size_t i) {
    return p.main().get_return()->inputs().at(i)->get_shape();
}

// x [2, 3] -> Relu -> y, the smallest valid model.
onnx::ModelProto relu_model() {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    add_node(m, "Relu", "relu", {"x"}, {"y"});
    add_output(m, "y", {2, 3});
    return m;
}

TEST(OnnxErrors, MalformedProtobuf) {
    std::mt19937 rng(7);
    std::string bytes(256, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    bytes += "\xff\xff";  // an unterminated varint: never a complete message
    auto msg = error_of([&] { parse_onnx_buffer(bytes.data(), bytes.size()); });
    expect_has(msg, {"not a valid ONNX model", "258 bytes"});
}

TEST(OnnxErrors, UnsupportedIrVersion) {
    for (std::int64_t v : {2, 99}) {
        auto m = relu_model();
        m.set_ir_version(v);
        expect_has(error_of([&] { parse(m); }), {cat("ONNX IR version ", v, " is not supported")});
    }
}

// x -> FooOp (ai.onnx) -> BarOp (com.example, unnamed) -> y, plus a BazOp inside an If branch.
onnx::ModelProto unsupported_model() {
    auto m = make_model();
    auto* os = m.add_opset_import();
    os->set_domain("com.example");
    os->set_version(2);
    add_input(m, "x", {2, 3});
    add_input(m, "c", {}, onnx::TensorProto::BOOL);
    add_node(m, "FooOp", "foo", {"x"}, {"t"});
    add_node(m, "BarOp", "", {"t"}, {"u"}, "com.example");
    auto* iff = add_node(m, "If", "if", {"c"}, {"y"});
    for (const char* branch : {"then_branch", "else_branch"}) {
        auto* a = iff->add_attribute();
        a->set_name(branch);
        a->set_type(onnx::AttributeProto::GRAPH);
        auto* g = a->mutable_g();
        g->set_name(branch);
        add_node(*g, std::string(branch) == "then_branch" ? "BazOp" : "Identity", branch, {"u"}, {"b"});
        set_type(g->add_output(), onnx_float, {2, 3});
        g->mutable_output(0)->set_name("b");
    }
    add_output(m, "y", {2, 3});
    return m;
}

TEST(OnnxErrors, UnsupportedOpsAreListedTogether) {
    auto msg = error_of([] { parse(unsupported_model()); });
    expect_has(msg,
               {"3 unsupported operators", "--skip-unknown-operators", "FooOp (node 'foo', domain 'ai.onnx', opset 17)",
                "BarOp (node 'BarOp_1', domain 'com.example', opset 2)",
                "BazOp (node 'then_branch', domain 'ai.onnx', opset 17)"});
}

TEST(OnnxErrors, SkipUnknownOperatorsInSubgraphs) {
    std::vector<std::string> warnings;
    auto opts = capture_warnings(warnings);
    opts.skip_unknown_operators = true;
    program p = parse(unsupported_model(), opts);
    ASSERT_EQ(warnings.size(), 1u);
    expect_has(warnings[0], {"skipped 3 unsupported operators", "BazOp (node 'then_branch'"});
    EXPECT_EQ(output_shape(p, 0), shape(dtype::float32, {2, 3}));
}

const char* skipped_message =
    "ONNX op FooOp (node 'foo') is not supported; it was skipped at parse time "
    "with --skip-unknown-operators";

TEST(OnnxErrors, SkipUnknownOperatorsParsesAndFailsAtRunTime) {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    add_node(m, "Relu", "r0", {"x"}, {"t"});
    add_node(m, "FooOp", "foo", {"t"}, {"u"});
    add_node(m, "Relu", "r1", {"u"}, {"y"});
    add_output(m, "y", {2, 3});
    auto* vi = m.mutable_graph()->add_value_info();
    vi->set_name("u");
    set_type(vi, onnx_float, {2, 3});

    expect_has(error_of([&] { parse(m); }), {"1 unsupported operator ", "FooOp (node 'foo'"});
    std::vector<std::string> warnings;
    auto opts = capture_warnings(warnings);
    opts.skip_unknown_operators = true;
    program p = parse(m, opts);
    ASSERT_EQ(warnings.size(), 1u);
    expect_has(warnings[0], {"skipped 1 unsupported operator", "FooOp (node 'foo', domain 'ai.onnx', opset 17)"});
    EXPECT_EQ(output_shape(p, 0), shape(dtype::float32, {2, 3}));
    auto msg = error_of([&] { evaluate(p, {{"x", floats({2, 3}, {1, 2, 3, 4, 5, 6})}}); });
    expect_has(msg, {skipped_message, "unknown_onnx_op"});
}

// Declared outputs keep their declared types; an undeclared one takes the first input's type.
TEST(OnnxErrors, SkippedNodeOutputTypes) {
    auto m = make_model();
    add_input(m, "x", {4, 5});
    add_node(m, "FooOp", "foo", {"", "x"}, {"a", "b"});
    add_node(m, "Relu", "r", {"b"}, {"y"});
    add_output(m, "a", {3}, onnx::TensorProto::INT64);
    add_output(m, "y", {4, 5});
    std::vector<std::string> warnings;
    auto opts = capture_warnings(warnings);
    opts.skip_unknown_operators = true;
    program p = parse(m, opts);
    EXPECT_EQ(output_shape(p, 0), shape(dtype::int64, std::vector<std::size_t>{3}));
    EXPECT_EQ(output_shape(p, 1), shape(dtype::float32, {4, 5}));
    expect_has(error_of([&] { evaluate(p, {{"x", argument(shape(dtype::float32, {4, 5}))}}); }), {skipped_message});
}

TEST(OnnxErrors, SkippedNodeWithoutInputsNeedsADeclaredType) {
    auto m = make_model();
    add_node(m, "FooOp", "foo", {}, {"t"});
    add_node(m, "Relu", "r", {"t"}, {"y"});
    add_output(m, "y", {2});
    onnx_options opts;
    opts.skip_unknown_operators = true;
    opts.warn = [](const std::string&) {};
    expect_has(error_of([&] { parse(m, opts); }),
               {"node 'foo' (FooOp, opset 17)", "output 't' has no declared type and the node has no input"});
}

TEST(OnnxErrors, RawDataSizeMismatch) {
    auto m = relu_model();
    add_initializer(m, "W", {2, 3}, {1, 2, 3, 4, 5, 6})->set_raw_data("12345");
    expect_has(error_of([&] { parse(m); }), {"tensor 'W'", "raw_data has 5 bytes", "needs 24"});
}

// Strings are read, but only string ops take them, and only from string_data.
TEST(OnnxErrors, StringTensorsReachOnlyStringOps) {
    auto m = relu_model();
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("names");
    t->set_data_type(onnx::TensorProto::STRING);
    t->add_dims(1);
    t->set_raw_data("a");
    expect_has(error_of([&] { parse(m); }), {"tensor 'names'", "keeps its values in string_data"});

    auto m2 = make_model();
    add_input(m2, "s", {2}, onnx::TensorProto::STRING);
    add_node(m2, "Relu", "act", {"s"}, {"y"});
    add_output(m2, "y", {2});
    expect_has(error_of([&] { parse(m2); }), {"'act'", "input 0 is a string tensor; this op takes numbers"});
}

TEST(OnnxErrors, InputNotProduced) {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    add_node(m, "Add", "add", {"x", "ghost"}, {"y"});
    add_output(m, "y", {2, 3});
    expect_has(error_of([&] { parse(m); }),
               {"node 'add' (Add, opset 17)", "input 'ghost' is not produced by any node, initializer or graph input"});

    auto m2 = relu_model();
    add_output(m2, "z", {2, 3});
    expect_has(error_of([&] { parse(m2); }), {"graph output 'z' is not produced by any node"});
}

TEST(OnnxErrors, Cycle) {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    add_node(m, "Add", "a", {"x", "b_out"}, {"a_out"});
    add_node(m, "Relu", "b", {"a_out"}, {"b_out"});
    add_output(m, "a_out", {2, 3});
    expect_has(error_of([&] { parse(m); }), {"the graph has a cycle through node 'a'"});
}

TEST(OnnxErrors, UnsortedNodesAreSortedWithAWarning) {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    add_node(m, "Relu", "second", {"t"}, {"y"});
    add_node(m, "Neg", "first", {"x"}, {"t"});
    add_output(m, "y", {2, 3});
    std::vector<std::string> warnings;
    program p = parse(m, capture_warnings(warnings));
    ASSERT_EQ(warnings.size(), 1u);
    expect_has(warnings[0], {"graph 'test'", "not in topological order"});
    auto y = evaluate(p, {{"x", floats({2, 3}, {1, -2, 3, -4, 0, -6})}}).at(0);
    std::vector<float> want{0, 2, 0, 4, 0, 6};
    for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(y.as<float>()[i], want[i]) << i;
}

onnx::ModelProto symbolic_model(dim d0) {
    auto m = make_model();
    add_input(m, "x", {d0, 3});
    add_node(m, "Relu", "relu", {"x"}, {"y"});
    add_output(m, "y", {d0, 3});
    return m;
}

TEST(OnnxErrors, UnsetDynamicDim) {
    expect_has(error_of([] { parse(symbolic_model("batch")); }),
               {"input 'x' dim 0 is 'batch'", "--dim-param batch=N", "--default-dim N"});
    expect_has(error_of([] { parse(symbolic_model("?")); }),
               {"input 'x' dim 0 is unknown", "--input-dim @x", "--default-dim N"});
}

TEST(OnnxErrors, DimParamSetsSymbolicDims) {
    onnx_options opts;
    opts.dim_params["batch"] = {4, 4, {}, {}};
    EXPECT_EQ(parse(symbolic_model("batch"), opts).main().get_parameter("x")->get_shape(),
              shape(dtype::float32, {4, 3}));

    opts.dim_params["batch"] = {1, 64, {}, {}};
    program p = parse(symbolic_model("batch"), opts);
    const shape& x = p.main().get_parameter("x")->get_shape();
    ASSERT_TRUE(x.dynamic());
    EXPECT_EQ(x.dyn_dims()[0], (dynamic_dim{1, 64, {}, "batch"}));
    EXPECT_EQ(x.dyn_dims()[1], (dynamic_dim{3, 3, {}, ""}));
    auto y = evaluate(p, {{"x", floats({5, 3}, std::vector<float>(15, -1.0f))}}).at(0);
    EXPECT_EQ(y.get_shape().lens(), (std::vector<std::size_t>{5, 3}));
    expect_has(error_of([&] {
                   evaluate(p, {{"x", argument(shape(dtype::float32, {65, 3}))}});
               }),
               {"65 is outside batch[1..64]"});
}

TEST(OnnxErrors, DefaultDim) {
    onnx_options opts;
    opts.default_dim = 7;
    for (dim d : {dim("batch"), dim("?")})
        EXPECT_EQ(parse(symbolic_model(d), opts).main().get_parameter("x")->get_shape(), shape(dtype::float32, {7, 3}));
}

TEST(OnnxErrors, InputDimsMismatch) {
    onnx_options opts;
    opts.input_dims["x"] = {2, 5};
    expect_has(error_of([&] { parse(relu_model(), opts); }), {"input 'x' dim 1 is 3 in the model but 5 was given"});
    opts.input_dims["x"] = {2, 3, 1};
    expect_has(error_of([&] { parse(relu_model(), opts); }), {"input 'x' has 2 dims in the model but 3 were given"});
    opts.input_dims["x"] = {2, 3};
    EXPECT_EQ(parse(relu_model(), opts).main().get_parameter("x")->get_shape(), shape(dtype::float32, {2, 3}));
}

TEST(OnnxErrors, DeclaredOutputTypeContradiction) {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    add_node(m, "Relu", "relu", {"x"}, {"y"});
    add_output(m, "y", {2, 3}, onnx::TensorProto::INT64);
    expect_has(error_of([&] { parse(m); }), {"output 'y' is declared int64", "computes float"});
}

TEST(OnnxErrors, MappingErrorNamesNodeOpTypeAndOpset) {
    auto m = make_model(11);
    add_input(m, "x", {1, 1, 4, 4});
    add_initializer(m, "w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
    set_string(add_node(m, "Conv", "conv1", {"x", "w"}, {"y"}), "auto_pad", "FOO");
    add_output(m, "y", {1, 1, 4, 4});
    expect_has(error_of([&] { parse(m); }),
               {"node 'conv1' (Conv, opset 11): auto_pad 'FOO' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID"});
}

// Conv (strides, dilations, asymmetric pads, bias) + Relu with random initializers, against a
// direct loop: the frontend's happy path end to end.
TEST(OnnxEndToEnd, ConvReluMatchesALoop) {
    const std::int64_t C = 2, H = 5, W = 6, M = 3, K = 3, OH = 3, OW = 3;
    const std::int64_t stride[2] = {2, 1}, dil[2] = {1, 2}, pad_begin[2] = {1, 0};
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(-1, 1);
    auto random = [&](std::size_t n) {
        std::vector<float> v(n);
        for (auto& e : v) e = u(rng);
        return v;
    };
    auto x = random(C * H * W), w = random(M * C * K * K), b = random(M);

    auto m = make_model(13);
    add_input(m, "x", {1, C, H, W});
    add_initializer(m, "w", {M, C, K, K}, w);
    add_initializer(m, "b", {M}, b);
    auto* conv = add_node(m, "Conv", "conv", {"x", "w", "b"}, {"c"});
    set_ints(conv, "strides", {stride[0], stride[1]});
    set_ints(conv, "dilations", {dil[0], dil[1]});
    set_ints(conv, "pads", {pad_begin[0], pad_begin[1], 1, 1});
    add_node(m, "Relu", "relu", {"c"}, {"y"});
    add_output(m, "y", {1, M, OH, OW});
    program p = parse(m);
    auto y = evaluate(p, {{"x", floats({1, 2, 5, 6}, x)}}).at(0);
    ASSERT_EQ(y.get_shape(), shape(dtype::float32, {1, 3, 3, 3}));

    for (std::int64_t o = 0; o < M; ++o)
        for (std::int64_t oh = 0; oh < OH; ++oh)
            for (std::int64_t ow = 0; ow < OW; ++ow) {
                float s = b[o];
                for (std::int64_t c = 0; c < C; ++c)
                    for (std::int64_t kh = 0; kh < K; ++kh)
                        for (std::int64_t kw = 0; kw < K; ++kw) {
                            std::int64_t ih = oh * stride[0] - pad_begin[0] + kh * dil[0];
                            std::int64_t iw = ow * stride[1] - pad_begin[1] + kw * dil[1];
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                            s += x[(c * H + ih) * W + iw] * w[((o * C + c) * K + kh) * K + kw];
                        }
                EXPECT_NEAR(y.as<float>()[(o * OH + oh) * OW + ow], std::max(s, 0.0f), 1e-5f)
                    << o << "," << oh << "," << ow;
            }
}

}  // namespace
}  // namespace kiln
