// What the ONNX frontend refuses in a graph as read, found by feeding it hostile models: empty
// names, tensors written twice, declarations that contradict the data or what kiln computes,
// opsets it cannot know, sizes that overflow; and what it must survive (a long chain stored in
// reverse order), each with an error that names the node, tensor or input.
#include <gtest/gtest.h>

#include "core/eval.hpp"
#include "onnx_test_util.hpp"

namespace kiln {
namespace {

using namespace onnx_test;

onnx::ModelProto relu_model() {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    add_node(m, "Relu", "relu", {"x"}, {"y"});
    add_output(m, "y", {2, 3});
    return m;
}

TEST(OnnxGraphChecks, EmptyInputNameOfARequiredInput) {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    add_node(m, "Relu", "relu", {""}, {"y"});
    add_output(m, "y", {2, 3});
    expect_has(error_of([&] { parse(m); }), {"node 'relu' (Relu", "a required input is absent (its name is empty)"});
    // Ops that read the absent input's shape before adding anything.
    auto c = make_model();
    add_input(c, "x", {1, 1, 4, 4});
    add_node(c, "Conv", "conv", {"x", ""}, {"y"});
    add_output(c, "y", {1, 1, 4, 4});
    expect_has(error_of([&] { parse(c); }), {"node 'conv' (Conv"});
}

TEST(OnnxGraphChecks, EmptyOptionalNamesFollowTheSpec) {
    // An empty output name is an unused optional output; an empty input an omitted optional one.
    auto m = make_model();
    add_input(m, "x", {2, 3});
    add_node(m, "Dropout", "drop", {"x", "", ""}, {"y", ""});
    add_output(m, "y", {2, 3});
    program p = parse(m);
    EXPECT_EQ(p.main().output_shapes().at(0).lens(), (std::vector<std::size_t>{2, 3}));
}

TEST(OnnxGraphChecks, EmptyGraphInputOrInitializerName) {
    auto m = relu_model();
    add_input(m, "", {2});
    expect_has(error_of([&] { parse(m); }), {"graph 'test': input 1 has an empty name"});
    auto w = relu_model();
    add_initializer(w, "", {1}, {1});
    expect_has(error_of([&] { parse(w); }), {"graph 'test': initializer 0 has an empty name"});
}

TEST(OnnxGraphChecks, TwoNodesWritingOneTensor) {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    add_node(m, "Relu", "first", {"x"}, {"y"});
    add_node(m, "Neg", "", {"x"}, {"y"});
    add_output(m, "y", {2, 3});
    expect_has(error_of([&] { parse(m); }),
               {"tensor 'y' is written by both node 'first' (Relu) and node 'Neg_1' (Neg)"});
}

TEST(OnnxGraphChecks, InputAndInitializerOfOneName) {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    add_input(m, "w", {2, 3});
    add_initializer(m, "w", {3, 2}, {1, 2, 3, 4, 5, 6});
    add_node(m, "Add", "add", {"x", "w"}, {"y"});
    add_output(m, "y", {2, 3});
    expect_has(error_of([&] { parse(m); }),
               {"input 'w' is declared {2, 3} but its initializer (its default) is {3, 2}"});
    // The same shape: the initializer is the input's default, and kiln compiles it as a constant.
    auto same = make_model();
    add_input(same, "x", {2, 3});
    add_input(same, "w", {2, "n"});
    add_initializer(same, "w", {2, 3}, {1, 2, 3, 4, 5, 6});
    add_node(same, "Add", "add", {"x", "w"}, {"y"});
    add_output(same, "y", {2, 3});
    program p = parse(same);
    EXPECT_EQ(p.main().parameter_names(), (std::vector<std::string>{"x"}));
}

TEST(OnnxGraphChecks, DeclaredOutputShapeMustHold) {
    auto m = make_model();
    add_input(m, "x", {2, 3});
    add_node(m, "Relu", "relu", {"x"}, {"y"});
    add_output(m, "y", {3, 2});
    expect_has(error_of([&] { parse(m); }), {"output 'y' is declared {3, 2} but computes float_type, {2, 3}"});
    auto rank = make_model();
    add_input(rank, "x", {2, 3});
    add_node(rank, "Relu", "relu", {"x"}, {"y"});
    add_output(rank, "y", {6});
    expect_has(error_of([&] { parse(rank); }), {"output 'y' is declared {6}"});
    auto symbolic = make_model();  // symbolic and unknown dims match anything
    add_input(symbolic, "x", {2, 3});
    add_node(symbolic, "Relu", "relu", {"x"}, {"y"});
    add_output(symbolic, "y", {"n", "?"});
    EXPECT_NO_THROW(parse(symbolic));
}

TEST(OnnxGraphChecks, OpsetNewerThanKilnKnows) {
    for (std::int64_t v : {29, 99, 0, -1}) {
        auto m = relu_model();
        m.mutable_opset_import(0)->set_version(v);
        expect_has(error_of([&] { parse(m); }), {cat("opset ", v, " of domain 'ai.onnx' is not supported"), "1 to 28"});
    }
}

TEST(OnnxGraphChecks, EmptyModels) {
    expect_has(error_of([&] { parse_onnx_buffer("", 0); }), {"the model is empty (0 bytes)"});
    std::string two_bytes = "\x08\x08";  // ir_version 8 and nothing else
    expect_has(error_of([&] { parse_onnx_buffer(two_bytes.data(), two_bytes.size()); }), {"model has no outputs"});
}

TEST(OnnxGraphChecks, UnknownInputDimsNames) {
    onnx_options o;
    o.input_dims["X"] = {2, 3};
    expect_has(error_of([&] { parse(relu_model(), o); }),
               {"input_dims names 'X', which is not an input of the model (inputs: x)"});
    onnx_options d;
    d.dyn_input_dims["z"] = {{1, 4, {}, {}}};
    expect_has(error_of([&] { parse(relu_model(), d); }), {"dyn_input_dims names 'z'"});
}

TEST(OnnxGraphChecks, NegativeDims) {
    auto m = make_model();
    add_input(m, "x", {2, -3});
    m.mutable_graph()
        ->mutable_input(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(1)
        ->set_dim_value(-3);
    add_node(m, "Relu", "relu", {"x"}, {"y"});
    add_output(m, "y", {2, 3});
    expect_has(error_of([&] { parse(m); }), {"input 'x' dim 1 is -3"});
}

TEST(OnnxGraphChecks, HugeInitializerDims) {
    // 2^62 + 1 floats would be 2^64 + 4 bytes: a byte count that wraps to 4 must not pass for the 4 bytes given.
    auto m = relu_model();
    add_initializer(m, "w", {(std::int64_t{1} << 62) + 1}, {1});
    expect_has(error_of([&] { parse(m); }), {"tensor 'w'", "its size in bytes exceeds 2^63"});
    auto big = relu_model();  // within 2^63, but far beyond the data given
    add_initializer(big, "w", {std::int64_t{1} << 40}, {1});
    expect_has(error_of([&] { parse(big); }), {"tensor 'w'"});
}

template <class T>
onnx::TensorProto* add_constant(onnx::ModelProto& m, const std::string& name, int type, std::vector<std::int64_t> dims,
                                const std::vector<T>& values) {
    auto* t = add_initializer(m, name, dims, {});
    t->set_data_type(type);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
    return t;
}

// Ops whose output size comes from data: a size above max_tensor_bytes is an error naming the node
// and the size, whether it is folded at parse time or computed at run time, never std::bad_alloc.
TEST(OnnxGraphChecks, SizeBombsNameTheNodeAndSize) {
    auto expand = make_model();
    add_constant<float>(expand, "c", onnx::TensorProto::FLOAT, {1}, {1});
    add_constant<std::int64_t>(expand, "s", onnx::TensorProto::INT64, {3}, {1 << 20, 1 << 20, 1 << 10});
    add_node(expand, "Expand", "boom", {"c", "s"}, {"y"});
    add_output(expand, "y", {"n", "m", "k"});
    expect_has(error_of([&] { parse(expand); }),
               {"node 'boom' (Expand, opset 17)", "float_type, {1048576, 1048576, 1024}", "needs 4503599627370496 bytes"});

    auto range = make_model();
    for (auto [name, v] : {std::pair{"a", 0.0f}, {"b", 1e15f}, {"d", 1.0f}})
        add_constant<float>(range, name, onnx::TensorProto::FLOAT, {}, {v});
    add_node(range, "Range", "rng", {"a", "b", "d"}, {"y"});
    add_output(range, "y", {"n"});
    expect_has(error_of([&] { parse(range); }), {"node 'rng' (Range, opset 17)", "more than the limit of"});

    auto resize = make_model(13);
    add_input(resize, "x", {1, 1, 4, 4});
    add_constant<float>(resize, "sc", onnx::TensorProto::FLOAT, {4}, {1, 1, 1e6f, 1e6f});
    add_node(resize, "Resize", "rs", {"x", "", "sc"}, {"y"});
    add_output(resize, "y", {1, 1, 4000000, 4000000});
    program p = parse(resize);
    argument x(shape(dtype::float32, std::vector<std::size_t>{1, 1, 4, 4}));
    expect_has(error_of([&] { evaluate(p, {{"x", x}}); }),
               {"(node 'rs')", "float_type, {1, 1, 4000000, 4000000}", "more than the limit of"});
}

TEST(OnnxGraphChecks, ConvWithOneInput) {
    auto m = make_model();
    add_input(m, "x", {1, 1, 4, 4});
    add_node(m, "Conv", "conv", {"x"}, {"y"});
    add_output(m, "y", {1, 1, 4, 4});
    expect_has(error_of([&] { parse(m); }), {"node 'conv' (Conv, opset 17): expects 2 or 3 inputs, got 1"});
}

TEST(OnnxGraphChecks, LongChainInReverseOrder) {
    // 100,000 Neg nodes, stored last first: sorting them must not recurse once per node.
    constexpr int n = 100000;
    auto m = make_model();
    add_input(m, "x", {1});
    auto* g = m.mutable_graph();
    for (int i = n - 1; i >= 0; --i)
        add_node(*g, "Neg", "", {i == 0 ? "x" : cat("t", i - 1)}, {i == n - 1 ? "y" : cat("t", i)});
    add_output(m, "y", {1});
    std::vector<std::string> warnings;
    program p = parse(m, capture_warnings(warnings));
    ASSERT_EQ(warnings.size(), 1u);
    argument x(shape(dtype::float32, std::vector<std::size_t>{1}));
    x.as<float>()[0] = 2;
    EXPECT_EQ(evaluate(p, {{"x", x}}).at(0).as<float>()[0], 2.0f);  // an even number of negations
}

}  // namespace
}  // namespace kiln
