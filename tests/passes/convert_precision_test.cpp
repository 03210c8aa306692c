// Precision conversion: fp16/bf16 programs agree with the float32 program within the low type's
// tolerance; reductions and softmax compute in float32 by construction, so inputs whose sums
// overflow float16 still give finite, correct results; layer norms compute in the low type with
// float32 statistics (checked on a BERT-like block on ref and cpu); the interface, integer and
// float64 tensors keep their types.
#include <cmath>
#include <random>
#include <utility>
#include <gtest/gtest.h>

#include "../core/expect_error.hpp"
#include "../frontends/onnx_test_util.hpp"
#include "core/random.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "pass_check.hpp"
#include "passes/convert_precision.hpp"
#include "passes/pipeline.hpp"

namespace kiln {
namespace {

// Relative L2 tolerances: a few roundings of 2^-11 (float16) or 2^-8 (bfloat16) each.
constexpr double fp16_tol = 2e-3;
constexpr double bf16_tol = 1e-2;

void check_both_precisions(std::string_view text) {
    run_and_check(text, {convert_precision{dtype::float16}}, fp16_tol, 3);
    run_and_check(text, {convert_precision{dtype::bfloat16}}, bf16_tol, 3);
}

const instruction& only_in(const module& m, std::string_view op) {
    for (const auto& ins : m)
        if (ins.name() == op) return ins;
    throw std::runtime_error(cat("no ", op, " in\n", to_string(m)));
}

const instruction& only(const program& p, std::string_view op) { return only_in(p.main(), op); }

dtype input_type(const program& p, std::string_view op) { return only(p, op).inputs().front()->get_shape().type(); }

const char* const mlp =
    "x = @param:x -> float_type, {8, 32}\n"
    "w1 = @param:w1 -> float_type, {32, 64}\n"
    "w2 = @param:w2 -> float_type, {64, 16}\n"
    "@0 = @literal{0.5, -0.25, 0.125, 1.0} -> float_type, {4}\n"
    "@1 = dot(x,w1)\n"
    "@2 = tile[repeats={16}](@0)\n"
    "@3 = multibroadcast[out_lens={8, 64}](@2)\n"
    "@4 = add(@1,@3)\n"
    "@5 = relu(@4)\n"
    "@6 = dot(@5,w2)\n"
    "@7 = @return(@6)\n";

TEST(convert_precision, mlp_within_tolerance) {
    check_both_precisions(mlp);
    program p = run_and_check(mlp, {convert_precision{dtype::float16}}, fp16_tol);
    EXPECT_EQ(input_type(p, "dot"), dtype::float16);
    EXPECT_EQ(only(p, "tile").inputs()[0]->get_literal().get_shape().type(), dtype::float16);
    EXPECT_EQ(p.main().get_parameter("x")->get_shape().type(), dtype::float32);
    EXPECT_EQ(p.main().output_shapes().front().type(), dtype::float32);
}

TEST(convert_precision, conv_batchnorm_relu_within_tolerance) {
    const char* text =
        "x = @param:x -> float_type, {2, 3, 10, 10}\n"
        "w = @param:w -> float_type, {8, 3, 3, 3}\n"
        "scale = @param:scale -> float_type, {8}\n"
        "bias = @param:bias -> float_type, {8}\n"
        "mean = @param:mean -> float_type, {8}\n"
        "@0 = @literal{0.5, 1.5, 2.0, 0.75, 1.0, 3.0, 0.25, 1.25} -> float_type, {8}\n"
        "@1 = convolution[padding={1, 1},stride={1, 1}](x,w)\n"
        "@2 = batch_norm_inference[epsilon=1e-05](@1,scale,bias,mean,@0)\n"
        "@3 = relu(@2)\n"
        "@4 = @return(@3)\n";
    check_both_precisions(text);
    program p = run_and_check(text, {convert_precision{dtype::bfloat16}}, bf16_tol);
    EXPECT_EQ(input_type(p, "convolution"), dtype::bfloat16);
    EXPECT_EQ(input_type(p, "batch_norm_inference"), dtype::float32);
    // Its variance literal is read in float32: the original stays.
    EXPECT_EQ(only(p, "batch_norm_inference").inputs()[4]->get_shape().type(), dtype::float32);
    EXPECT_EQ(input_type(p, "relu"), dtype::bfloat16);
}

// Softmax reads float32; layernorm reads and returns the low type (scale and bias too), its
// statistics in float32 inside.
TEST(convert_precision, softmax_and_layernorm_within_tolerance) {
    const char* text =
        "x = @param:x -> float_type, {4, 64}\n"
        "s = @param:s -> float_type, {64}\n"
        "b = @param:b -> float_type, {64}\n"
        "@0 = mul(x,x)\n"
        "@1 = softmax[axis=1](@0)\n"
        "@2 = layernorm[axis=-1,epsilon=1e-05](x,s,b)\n"
        "@3 = add(@1,@2)\n"
        "@4 = @return(@3,@1)\n";
    check_both_precisions(text);
    program p = run_and_check(text, {convert_precision{dtype::float16}}, fp16_tol);
    EXPECT_EQ(input_type(p, "mul"), dtype::float16);
    EXPECT_EQ(input_type(p, "softmax"), dtype::float32);
    EXPECT_EQ(only(p, "softmax").get_shape().type(), dtype::float32);
    const instruction& ln = only(p, "layernorm");
    for (auto in : ln.inputs()) EXPECT_EQ(in->get_shape().type(), dtype::float16);
    EXPECT_EQ(ln.get_shape().type(), dtype::float16);
    EXPECT_EQ(input_type(p, "add"), dtype::float16);
}

// A BERT-like block (hidden 768): y = layernorm(x @ w + bias + x) on a residual stream x of mean 4
// and spread 8, with two outlier features near 40, as BERT's hidden states have. Run in fp16 and
// bf16 on ref (statistics in double) and on cpu (oneDNN, float32 statistics) against float32 ref
// on fresh random inputs. The sum of squares of a row is ~4e4 (float16's ulp there is 32): an
// fp16 accumulation of it or of the sum would miss the tolerance, or overflow past 65504.
TEST(convert_precision, bert_like_layernorm_in_low_type_within_tolerance) {
    const char* text =
        "x = @param:x -> float_type, {32, 768}\n"
        "w = @param:w -> float_type, {768, 768}\n"
        "bias = @param:bias -> float_type, {768}\n"
        "s = @param:s -> float_type, {768}\n"
        "b = @param:b -> float_type, {768}\n"
        "@0 = dot(x,w)\n"
        "@1 = multibroadcast[out_lens={32, 768}](bias)\n"
        "@2 = add(@0,@1)\n"
        "@3 = add(@2,x)\n"
        "@4 = layernorm[axis=-1,epsilon=1e-12](@3,s,b)\n"
        "@5 = @return(@4)\n";
    auto ref32 = make_target("ref")->compile(parse_text(text), {.optimize = false});
    for (auto [precision, tol] : {std::pair{compute_precision::fp16, fp16_tol}, std::pair{compute_precision::bf16, bf16_tol}}) {
        program converted = parse_text(text);
        run_passes(converted, {convert_precision{low_type(precision)}}, {.dump_dir = ""});
        EXPECT_EQ(input_type(converted, "layernorm"), low_type(precision));
        EXPECT_EQ(count_ops(converted, "convert"), 6u) << to_string(converted);   // 5 parameters in, 1 output out
        for (const char* target : {"ref", "cpu"}) {
            auto exe = make_target(target)->compile(parse_text(text), {.precision = precision});
            for (std::uint64_t seed : {std::random_device{}(), std::random_device{}()}) {   // fresh, printed on failure
                param_map in = random_inputs(parse_text(text).main(), seed);
                auto scaled = [&](const char* name, double mul, double add) {
                    auto v = to_doubles(in[name]);
                    for (double& e : v) e = e * mul + add;
                    in[name] = from_doubles(in[name].get_shape(), v);
                };
                scaled("x", 8, 4);
                auto x = to_doubles(in["x"]);
                for (std::size_t r = 0; r < 32; ++r) x[r * 768 + 17] = 40 + x[r * 768 + 17], x[r * 768 + 300] = -40 + x[r * 768 + 300];
                in["x"] = from_doubles(in["x"].get_shape(), x);
                scaled("w", 0.05, 0);
                scaled("s", 0.2, 1);
                scaled("b", 0.1, 0);
                auto got = exe->run(in)[0];
                for (double v : to_doubles(got)) ASSERT_TRUE(std::isfinite(v)) << target << " seed " << seed;
                EXPECT_LE(relative_l2(got, ref32->run(in)[0]), tol)
                    << target << " in " << dtype_name(low_type(precision)) << ", seed " << seed;
            }
        }
    }
}

// Values around 300: a row of 1024 sums to ~3e5, past float16's largest finite value (65504).
const char* const large_values =
    "x = @param:x -> float_type, {4, 1024}\n"
    "@0 = reduce_sum[axes={1}](x)\n"
    "@1 = reduce_mean[axes={1}](x)\n"
    "@2 = softmax[axis=1](x)\n"
    "@3 = relu(@2)\n"
    "@4 = @return(@0,@1,@2,@3)\n";

param_map inputs_around_300(const module& m) {
    param_map in = random_inputs(m, 7);
    auto x = to_doubles(in["x"]);
    for (double& v : x) v = 300 + 8 * v;
    in["x"] = from_doubles(in["x"].get_shape(), x);
    return in;
}

TEST(convert_precision, sums_past_float16_range_stay_finite_by_construction) {
    for (dtype low : {dtype::float16, dtype::bfloat16}) {
        program before = parse_text(large_values);
        program after = before.clone();
        run_passes(after, {convert_precision{low}}, {.dump_dir = ""});
        EXPECT_EQ(input_type(after, "reduce_sum"), dtype::float32);
        EXPECT_EQ(only(after, "reduce_sum").get_shape().type(), dtype::float32);
        EXPECT_EQ(input_type(after, "reduce_mean"), dtype::float32);
        EXPECT_EQ(input_type(after, "relu"), low);
        auto in = inputs_around_300(before.main());
        auto want = evaluate(before, in);
        auto got = evaluate(after, in);
        ASSERT_EQ(got.size(), want.size());
        EXPECT_GT(to_doubles(want[0]).front(), 65504.0);   // the sums really are out of float16's range
        for (std::size_t i = 0; i < got.size(); ++i) {
            for (double v : to_doubles(got[i])) ASSERT_TRUE(std::isfinite(v)) << "output " << i << "\n" << to_string(after);
            EXPECT_LE(relative_l2(got[i], want[i]), low == dtype::float16 ? fp16_tol : bf16_tol)
                << "output " << i << " in " << dtype_name(low);
        }
    }
}

// The same sum computed in float16 overflows: what the construction above avoids.
TEST(convert_precision, the_same_sum_in_float16_overflows) {
    program p = parse_text(
        "x = @param:x -> float_type, {4, 1024}\n"
        "@0 = convert[target_type=half_type](x)\n"
        "@1 = reduce_sum[axes={1}](@0)\n"
        "@2 = @return(@1)\n");
    auto out = evaluate(p, inputs_around_300(p.main()));
    EXPECT_TRUE(std::isinf(to_doubles(out[0]).front()));
}

TEST(convert_precision, integer_bool_and_double_tensors_are_untouched) {
    program p = run_and_check(
        "x = @param:x -> float_type, {3, 4}\n"
        "i = @param:i -> int64_type, {3, 4}\n"
        "d = @param:d -> double_type, {3, 4}\n"
        "@0 = add(i,i)\n"
        "@1 = mul(d,d)\n"
        "@2 = convert[target_type=float_type](i)\n"
        "@3 = add(x,@2)\n"
        "@4 = greater(x,@2)\n"
        "@5 = argmax[axis=1](x)\n"
        "@6 = @return(@0,@1,@3,@4,@5)\n",
        {convert_precision{dtype::float16}}, fp16_tol);
    EXPECT_EQ(input_type(p, "mul"), dtype::float64);
    EXPECT_EQ(only(p, "mul").get_shape().type(), dtype::float64);
    EXPECT_EQ(only(p, "greater").get_shape().type(), dtype::bool_);
    EXPECT_EQ(input_type(p, "argmax"), dtype::float32);
    auto outs = p.main().output_shapes();
    std::vector<dtype> types;
    for (const auto& s : outs) types.push_back(s.type());
    EXPECT_EQ(types, (std::vector<dtype>{dtype::int64, dtype::float64, dtype::float32, dtype::bool_, dtype::int64}));
    // int64 -> float32 became int64 -> float16.
    bool found = false;
    for (const auto& ins : p.main())
        if (ins.name() == "convert" && ins.inputs()[0]->get_shape().type() == dtype::int64) {
            EXPECT_EQ(ins.get_shape().type(), dtype::float16);
            found = true;
        }
    EXPECT_TRUE(found);
}

// A returned view of a converted value comes back as a standard float32 copy.
TEST(convert_precision, returned_views_come_back_in_float32) {
    program p = run_and_check(
        "x = @param:x -> float_type, {2, 3}\n"
        "@0 = transpose[permutation={1, 0}](x)\n"
        "@1 = neg(x)\n"
        "@2 = transpose[permutation={1, 0}](@1)\n"
        "@3 = @return(@0,@2)\n",
        {convert_precision{dtype::float16}}, fp16_tol);
    for (const auto& s : p.main().output_shapes()) EXPECT_EQ(s.type(), dtype::float32);
    EXPECT_EQ(input_type(p, "neg"), dtype::float16);
}

// A Reshape to a shape known only at run time stays an onnx_node that declares float32 results:
// it reads float32 (its consumers still compute in the low type).
TEST(convert_precision, deferred_onnx_nodes_keep_their_declared_types) {
    auto model = onnx_test::make_model(17);
    onnx_test::add_input(model, "x", {4, 6});
    onnx_test::add_input(model, "s", {2}, onnx::TensorProto::INT64);
    onnx_test::add_node(model, "Reshape", "reshape", {"x", "s"}, {"y"});
    onnx_test::add_node(model, "Neg", "neg", {"y"}, {"z"});
    onnx_test::add_output(model, "z", {"?", "?"});
    auto* y = model.mutable_graph()->add_value_info();
    y->set_name("y");
    onnx_test::set_type(y, onnx_test::onnx_float, {"?", "?"});
    program before = onnx_test::parse(model);
    ASSERT_EQ(count_ops(before, "onnx_node"), 1u);
    program after = before.clone();
    run_passes(after, {convert_precision{dtype::float16}}, {.dump_dir = ""});
    EXPECT_EQ(input_type(after, "onnx_node"), dtype::float32);
    EXPECT_EQ(input_type(after, "neg"), dtype::float16);
    param_map in = random_inputs(before.main(), 5);   // static x; s is set below
    std::vector<std::int64_t> dims = {6, 4};
    in["s"] = from_int64s(shape(dtype::int64, std::vector<std::size_t>{2}), dims);
    auto want = evaluate(before, in), got = evaluate(after, in);
    EXPECT_EQ(got[0].get_shape().lens(), (std::vector<std::size_t>{6, 4}));
    EXPECT_LE(relative_l2(got[0], want[0]), fp16_tol);
}

TEST(convert_precision, control_flow_bodies_keep_their_interface) {
    const char* text =
        "module: \"main\"\n"
        "c = @param:c -> bool_type, {}\n"
        "x = @param:x -> float_type, {2, 3}\n"
        "y = @param:y -> float_type, {2, 3}\n"
        "@0 = if(c,x,y), [then_b, else_b]\n"
        "@1 = get_tuple_elem[index=0](@0)\n"
        "@2 = @return(@1)\n"
        "\n"
        "module: \"then_b\"\n"
        "a = @param:a -> float_type, {2, 3}\n"
        "b = @param:b -> float_type, {2, 3}\n"
        "@0 = add(a,b)\n"
        "@1 = @return(@0)\n"
        "\n"
        "module: \"else_b\"\n"
        "a = @param:a -> float_type, {2, 3}\n"
        "b = @param:b -> float_type, {2, 3}\n"
        "@0 = mul(a,b)\n"
        "@1 = @return(@0)\n";
    program p = run_and_check(text, {convert_precision{dtype::float16}}, fp16_tol, 4);
    EXPECT_EQ(p.find_module("then_b")->parameters()[0]->get_shape().type(), dtype::float32);
    EXPECT_EQ(only_in(*p.find_module("then_b"), "add").get_shape().type(), dtype::float16);
}

TEST(convert_precision, generic_pipeline_runs_it_with_or_without_optimize) {
    for (bool optimize : {false, true}) {
        auto names = [](const std::vector<pass>& ps) {
            std::vector<std::string> n;
            for (const auto& p : ps) n.push_back(p.name());
            return n;
        };
        auto fp16 = names(generic_passes({.optimize = optimize, .precision = compute_precision::fp16}));
        auto fp32 = names(generic_passes({.optimize = optimize}));
        EXPECT_EQ(std::count(fp16.begin(), fp16.end(), "convert_precision"), 1);
        EXPECT_EQ(std::count(fp32.begin(), fp32.end(), "convert_precision"), 0);
    }
    program p = parse_text(mlp);
    lower(p, *make_target("ref"), {.optimize = false, .precision = compute_precision::bf16});
    EXPECT_EQ(input_type(p, "dot"), dtype::bfloat16);
}

TEST(convert_precision, rejects_a_low_type_that_is_not_16_bit_float) {
    program p = parse_text(mlp);
    expect_error([&] { run_passes(p, {convert_precision{dtype::float32}}, {.dump_dir = ""}); },
                 "low type is float_type; expected half_type or bf16_type");
    expect_error([] { low_type(compute_precision::fp32); }, "precision fp32 has no low type");
}

}  // namespace
}  // namespace kiln
