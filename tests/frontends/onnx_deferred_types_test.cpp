// A node deferred to run time whose output the model does not declare takes its dtype and rank
// from its inputs where the op allows (deferred_types.cpp; any rank where only the dtype follows),
// and still runs; for other ops parsing fails naming the output. What it computes must hold its
// type. An If whose branch does not apply to the shapes is deferred and checked when taken. A deferred node's expander (core/expand.hpp) reads only the inputs
// that decide its shapes.
#include <algorithm>
#include <cmath>

#include "core/eval.hpp"
#include "core/expand.hpp"
#include "core/random.hpp"
#include "onnx_test_util.hpp"

namespace kiln::onnx_test {
namespace {

constexpr int onnx_int64 = onnx::TensorProto::INT64;

// Y = Sqrt(ReduceSum(X, axes, keepdims=0)), axes a graph input; R is undeclared.
onnx::ModelProto reduce_model() {
    auto m = make_model(18);
    add_input(m, "X", {2, 3, 4});
    add_input(m, "axes", {1}, onnx_int64);
    add_output(m, "Y", {"?", "?"});
    auto* n = add_node(m, "ReduceSum", "sum", {"X", "axes"}, {"R"});
    auto* a = n->add_attribute();
    a->set_name("keepdims");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(0);
    add_node(m, "Sqrt", "root", {"R"}, {"Y"});
    return m;
}

TEST(onnx_deferred_types, reduce_with_runtime_axes_gets_its_type_from_its_inputs) {
    auto p = parse(reduce_model());
    std::vector<double> x(24);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = double(i) * 0.5;
    param_map in{
        {"X", literal(shape(dtype::float32, {2, 3, 4}), x).get_argument()},
        {"axes", literal(shape(dtype::int64, std::vector<std::size_t>{1}), std::vector<double>{1}).get_argument()}};
    auto out = evaluate(p, in);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].get_shape().lens(), (std::vector<std::size_t>{2, 4}));
    auto y = to_doubles(out[0]);
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t k = 0; k < 4; ++k) {
            double s = 0;
            for (std::size_t j = 0; j < 3; ++j) s += x[b * 12 + j * 4 + k];
            EXPECT_NEAR(y[b * 4 + k], std::sqrt(s), 1e-5);
        }
}

// A target running the deferred node on its device asks its expander (core/expand.hpp) for the
// node's program: only the input that decides the shapes (axes) is read, X stays a parameter, and
// the program computes what the node's reference compute does, on fresh random inputs.
TEST(onnx_deferred_types, the_expander_reads_only_the_inputs_that_decide_shapes) {
    auto p = parse(reduce_model());
    const instruction* node = nullptr;
    for (const auto& ins : p.main())
        if (ins.name() == "onnx_node") node = &ins;
    ASSERT_NE(node, nullptr);
    const op_expander* expand = find_op_expander("onnx_node");
    ASSERT_NE(expand, nullptr);
    for (std::int64_t axis : {0, 2}) {
        argument x = random_argument(shape(dtype::float32, {2, 3, 4}), 7, static_cast<std::size_t>(axis));
        argument axes = from_int64s(shape(dtype::int64, std::vector<std::size_t>{1}), std::vector<std::int64_t>{axis});
        std::vector<shape> shapes{x.get_shape(), axes.get_shape()};
        std::vector<std::size_t> reads;
        program q;
        (*expand)(node->get_operator(), shapes, [&](std::size_t k) { reads.push_back(k); return k == 0 ? x : axes; }, q);
        EXPECT_EQ(reads, std::vector<std::size_t>{1});
        EXPECT_EQ(q.main().parameter_names(), std::vector<std::string>{"x0"});
        auto got = evaluate(q.main(), param_map{{"x0", x}});
        std::vector<argument> args{x, axes};
        argument want = node->get_operator().compute(node->get_shape(), args);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0].get_shape().lens(), want.get_shape().lens());
        EXPECT_EQ(to_doubles(got[0]), to_doubles(want));
    }
}

// OneHot with a run-time depth is not among the ops whose type follows from their inputs.
TEST(onnx_deferred_types, other_ops_still_need_a_declared_type) {
    auto m = make_model(11);
    add_input(m, "I", {3}, onnx_int64);
    add_input(m, "depth", {}, onnx_int64);
    add_input(m, "values", {2});
    add_output(m, "Y", {"?", "?"});
    add_node(m, "OneHot", "hot", {"I", "depth", "values"}, {"H"});
    add_node(m, "Sqrt", "root", {"H"}, {"Y"});
    auto msg = error_of([&] { parse(m); });
    expect_has(msg, {"node 'hot' (OneHot", "output 'H' depends on values known only at run time",
                     "does not declare its type"});
}

// Y = Relu(Squeeze(X)) with X [n, 1, 3]: without axes, Squeeze drops dim 0 too when n is 1, so S
// has any rank until it runs, and Relu, which reads it, is deferred as well. Y declared without a
// shape has any rank too; declared with two dims, a run that makes one is an error naming Relu.
onnx::ModelProto squeeze_model(bool declare_rank) {
    auto m = make_model(13);
    add_input(m, "X", {"n", 1, 3});
    if (declare_rank) {
        add_output(m, "Y", {"?", "?"});
    } else {
        auto* y = m.mutable_graph()->add_output();
        y->set_name("Y");
        y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx_float);
    }
    add_node(m, "Squeeze", "squeeze", {"X"}, {"S"});
    add_node(m, "Relu", "relu", {"S"}, {"Y"});
    return m;
}

TEST(onnx_deferred_types, squeeze_without_axes_of_a_dim_that_may_be_1_has_any_rank) {
    onnx_options opts;
    opts.dim_params["n"] = {1, 4, {}, "n"};
    auto p = parse(squeeze_model(false), opts);
    for (std::size_t n : {2, 1}) {
        argument x = random_argument(shape(dtype::float32, {n, 1, 3}), 5, n);
        auto out = evaluate(p, param_map{{"X", x}});
        ASSERT_EQ(out.size(), 1u);
        std::vector<std::size_t> want = n == 1 ? std::vector<std::size_t>{3} : std::vector<std::size_t>{n, 3};
        EXPECT_EQ(out[0].get_shape().lens(), want);
        auto xs = to_doubles(x), ys = to_doubles(out[0]);
        for (std::size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(ys[i], std::max(xs[i], 0.0));
    }
    auto declared = parse(squeeze_model(true), opts);
    argument x1 = random_argument(shape(dtype::float32, {1, 1, 3}), 5, 0);
    expect_has(error_of([&] { evaluate(declared, param_map{{"X", x1}}); }),
               {"node 'relu'", "output 0 is float_type, {3}", "its type is float_type, {?[0..inf], ?[0..inf]}"});
}

// An If on an input whose else branch reshapes x's 6 elements to [2, 4]: it does not apply to x,
// so it is checked only when taken, and then fails naming the If and the Reshape.
onnx::ModelProto if_with_ill_shaped_branch() {
    auto m = make_model(13);
    add_input(m, "c", {}, onnx::TensorProto::BOOL);
    add_input(m, "x", {6});
    add_output(m, "y", {2, 3});
    auto* iff = add_node(m, "If", "switch", {"c"}, {"y"});
    for (const char* branch : {"then_branch", "else_branch"}) {
        auto* a = iff->add_attribute();
        a->set_name(branch);
        a->set_type(onnx::AttributeProto::GRAPH);
        auto* g = a->mutable_g();
        g->set_name(branch);
        bool then = std::string(branch) == "then_branch";
        set_ints(add_node(*g, "Constant", cat(branch, "_shape"), {}, {cat(branch, "_s")}), "value_ints",
                 then ? std::vector<std::int64_t>{2, 3} : std::vector<std::int64_t>{2, 4});
        add_node(*g, "Reshape", cat(branch, "_reshape"), {"x", cat(branch, "_s")}, {cat(branch, "_y")});
        auto* o = g->add_output();
        o->set_name(cat(branch, "_y"));
        set_type(o, onnx_float, {2, then ? 3 : 4});
    }
    return m;
}

TEST(onnx_deferred_types, an_if_branch_that_does_not_apply_is_checked_when_taken) {
    auto p = parse(if_with_ill_shaped_branch());
    argument x = random_argument(shape(dtype::float32, std::vector<std::size_t>{6}), 9, 0);
    auto cond = [](bool c) { return from_int64s(shape(dtype::bool_), std::vector<std::int64_t>{c}); };
    auto out = evaluate(p, param_map{{"c", cond(true)}, {"x", x}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].get_shape().lens(), (std::vector<std::size_t>{2, 3}));
    EXPECT_EQ(to_doubles(out[0]), to_doubles(x));
    auto msg = error_of([&] { evaluate(p, param_map{{"c", cond(false)}, {"x", x}}); });
    expect_has(msg, {"node 'switch'", "else_branch_reshape", "Reshape"});
}

}  // namespace
}  // namespace kiln::onnx_test
