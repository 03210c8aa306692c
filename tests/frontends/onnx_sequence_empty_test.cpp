// SequenceEmpty gives a sequence a dtype but no shape; a tensor inserted into it gives the element
// type (map_sequence.cpp), so SequenceAt and ConcatFromSequence can read the result.
#include "core/eval.hpp"
#include "onnx_test_util.hpp"

namespace kiln::onnx_test {
namespace {

// A Constant node making the int64 scalar 0.
void add_zero(onnx::ModelProto& m, const std::string& name, const std::string& out) {
    auto* a = add_node(m, "Constant", name, {}, {out})->add_attribute();
    a->set_name("value_int");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(0);
}

// Y = ConcatFromSequence(SequenceInsert(SequenceInsert(SequenceEmpty(), X), X)), Z = SequenceAt(.., 0).
onnx::ModelProto grow_model(bool position) {
    auto m = make_model(17);
    add_input(m, "X", {2, 3});
    add_output(m, "Y", {"?", 3});
    add_output(m, "Z", {2, 3});
    add_node(m, "SequenceEmpty", "empty", {}, {"S0"});
    if (position) {
        add_zero(m, "zero", "P");
        add_node(m, "SequenceInsert", "first", {"S0", "X", "P"}, {"S1"});
    } else {
        add_node(m, "SequenceInsert", "first", {"S0", "X"}, {"S1"});
    }
    add_node(m, "SequenceInsert", "second", {"S1", "X"}, {"S2"});
    auto* axis = add_node(m, "ConcatFromSequence", "cat", {"S2"}, {"Y"})->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(0);
    add_zero(m, "pos", "I");
    add_node(m, "SequenceAt", "at", {"S2", "I"}, {"Z"});
    return m;
}

TEST(onnx_sequence_empty, element_type_comes_from_the_first_insert) {
    for (bool position : {false, true}) {
        SCOPED_TRACE(position ? "position 0 given" : "no position");
        auto p = parse(grow_model(position));
        std::vector<double> x{0.5, -1, 2, 3.25, -4, 5};
        auto out = evaluate(p, {{"X", literal(shape(dtype::float32, {2, 3}), x).get_argument()}});
        ASSERT_EQ(out.size(), 2u);
        EXPECT_EQ(out[0].get_shape().lens(), (std::vector<std::size_t>{4, 3}));
        auto y = to_doubles(out[0]), z = to_doubles(out[1]);
        for (std::size_t i = 0; i < 12; ++i) EXPECT_EQ(y[i], x[i % 6]);
        EXPECT_EQ(z, x);
    }
}

// The dtype stays SequenceEmpty's (float by default): an int64 tensor is refused, naming the node.
TEST(onnx_sequence_empty, a_tensor_of_another_dtype_is_refused) {
    auto m = make_model(17);
    add_input(m, "X", {2}, onnx::TensorProto::INT64);
    add_output(m, "Z", {2}, onnx::TensorProto::INT64);
    add_node(m, "SequenceEmpty", "empty", {}, {"S0"});
    add_node(m, "SequenceInsert", "first", {"S0", "X"}, {"S1"});
    add_zero(m, "pos", "I");
    add_node(m, "SequenceAt", "at", {"S1", "I"}, {"Z"});
    expect_has(error_of([&] { parse(m); }), {"'first'", "input 1 is int64_type but the sequence holds float_type"});
}

}  // namespace
}  // namespace kiln::onnx_test
