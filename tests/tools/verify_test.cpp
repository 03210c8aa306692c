// verify, bisect and reduce against a target that breaks one op on purpose; the comparison's
// rules (RMS and allclose both required, tolerances by dtype, NaN/Inf counts).
#include <gtest/gtest.h>

#include <cmath>

#include "../core/expect_error.hpp"
#include "core/random.hpp"
#include "core/text_parser.hpp"
#include "tools/program_tools.hpp"
#include "tools/verify.hpp"

namespace kiln {
namespace {

// Runs `mul` as `sub`: a deliberately broken kernel.
class broken_mul_target final : public target {
public:
    std::string name() const override { return "verify_test_broken_mul"; }
    std::vector<pass> passes(const compile_options&) const override { return {}; }
    std::vector<std::string> ignored_options(const compile_options&) const override { return {}; }
    // It shows the program it was given but runs one with every mul made a sub.
    struct broken_executable final : executable {
        program shown;
        std::unique_ptr<executable> runs;
        const program& get_program() const override { return shown; }
        const executable_stats& stats() const override { return runs->stats(); }
        std::vector<argument> run(const param_map& in) override { return runs->run(in); }
        std::vector<argument> run_observed(const param_map& in, const instruction_observer& o) override {
            return runs->run_observed(in, o);
        }
    };
    std::unique_ptr<executable> load(program p, const compile_options& opts) const override {
        program c = p.clone();
        for (auto it = c.main().begin(); it != c.main().end(); ++it)
            if (it->name() == "mul") c.main().replace_instruction(it, make_op("sub"), std::vector(it->inputs()));
        auto e = std::make_unique<broken_executable>();
        e->shown = std::move(p);
        e->runs = make_target("ref")->load(std::move(c), opts);
        return e;
    }
};

const char* chain =
    "x = @param:x -> float_type, {4, 8}\n"
    "y = @param:y -> float_type, {4, 8}\n"
    "z = @param:z -> float_type, {4, 8}\n"
    "@0 = add(x,y)\n"
    "@1 = exp(z)\n"
    "@2 = mul(@0,@1)\n"
    "@3 = relu(@2)\n"
    "@4 = tanh(@3)\n"
    "@5 = add(@4,@1)\n"
    "@6 = @return(@5,@1)\n";

struct verify_fixture : ::testing::Test {
    program p = parse_text(chain);
    param_map in = random_inputs(p.main(), 5);
    broken_mul_target broken;
    std::unique_ptr<target> ref = make_target("ref");
};

TEST_F(verify_fixture, ref_with_passes_passes) {
    verify_options o;
    o.options.optimize = true;
    verify_result r = verify_program(p, *ref, in, o);
    EXPECT_TRUE(r.pass);
    ASSERT_EQ(r.outputs.size(), 2u);
    EXPECT_EQ(r.outputs[0].cmp.rms_error, 0);
}

TEST_F(verify_fixture, broken_target_fails_and_reports_the_worst_element) {
    verify_result r = verify_program(p, broken, in, {});
    EXPECT_FALSE(r.pass);
    EXPECT_FALSE(r.outputs[0].cmp.pass);
    EXPECT_TRUE(r.outputs[1].cmp.pass);   // exp(z) does not go through mul
    const comparison& c = r.outputs[0].cmp;
    EXPECT_GT(c.not_close, 0u);
    EXPECT_EQ(c.worst_index.front(), '[');
    EXPECT_EQ(c.max_abs, std::abs(c.worst_got - c.worst_ref));
    std::string d = describe(c);
    EXPECT_NE(d.find("worst element " + c.worst_index), std::string::npos) << d;
    EXPECT_NE(d.find("rms_tol 0.001"), std::string::npos) << d;
}

TEST_F(verify_fixture, bisect_finds_the_broken_kernel) {
    std::next(p.main().begin(), 5)->set_source_name("Mul_7");
    bisect_result b = bisect_program(p, broken, in, {});
    EXPECT_EQ(b.node, "Mul_7");
    ASSERT_TRUE(b.found);
    EXPECT_EQ(b.instruction.rfind("@2 = mul(@0,@1)", 0), 0u) << b.instruction;
    ASSERT_EQ(b.inputs.size(), 2u);
    EXPECT_EQ(b.inputs[0], "@0: float_type, {4, 8}, {8, 1}");
    EXPECT_NE(b.kernel.find("mul"), std::string::npos) << b.kernel;
    EXPECT_FALSE(b.cmp.pass);
    EXPECT_GT(b.checks, 1u);
    // Nothing to find when the target is right.
    EXPECT_FALSE(bisect_program(p, *ref, in, {}).found);
}

TEST_F(verify_fixture, reduce_keeps_a_smaller_failing_program) {
    bisect_result b = bisect_program(p, broken, in, {});
    program small = reduce_program(p, b);
    EXPECT_LT(small.main().size(), p.main().size());
    auto last = std::prev(small.main().get_return());
    EXPECT_EQ(last->name(), "mul");
    EXPECT_EQ(small.main().parameter_names().size(), 3u);
    EXPECT_FALSE(verify_program(small, broken, in, {}).pass);
    expect_error([&] { reduce_program(p, bisect_program(p, *ref, in, {})); }, "the program passes");
}

TEST_F(verify_fixture, per_instruction_flags_only_the_broken_op) {
    verify_result r = verify_instructions(p, broken, in, {});
    EXPECT_FALSE(r.pass);
    ASSERT_EQ(r.outputs.size(), 6u);
    for (const auto& c : r.outputs)
        EXPECT_EQ(c.cmp.pass, c.label.find("mul(") == std::string::npos) << c.label;
}

TEST(compare, rms_and_allclose_are_both_required) {
    shape s(dtype::float32, std::vector<std::size_t>{10000});
    std::vector<double> ref(10000, 1.0), one_off(ref), all_off(ref);
    one_off[7] = 1.01;                        // RMS 1e-4, but one element not close
    for (auto& v : all_off) v = 1.1;          // close with atol 1, but RMS 0.1
    argument r = from_doubles(s, ref);
    comparison a = compare_results(from_doubles(s, one_off), r, default_tolerances(dtype::float32));
    EXPECT_LT(a.rms_error, 1e-3);
    EXPECT_EQ(a.not_close, 1u);
    EXPECT_FALSE(a.pass);
    EXPECT_EQ(a.worst_index, "[7]");
    EXPECT_EQ(a.worst_position, std::vector<std::size_t>{7});
    tolerance_overrides loose;
    loose.atol = 1.0;
    comparison b = compare_results(from_doubles(s, all_off), r, loose.apply(default_tolerances(dtype::float32)));
    EXPECT_EQ(b.not_close, 0u);
    EXPECT_FALSE(b.pass);
    EXPECT_TRUE(compare_results(r, r, default_tolerances(dtype::float32)).pass);
}

TEST(compare, nan_and_inf_are_counted_and_only_match_themselves) {
    shape s(dtype::float32, std::vector<std::size_t>{2, 2});
    argument ref = from_doubles(s, std::vector<double>{NAN, INFINITY, 1, 2});
    comparison same = compare_results(ref, ref, {});
    EXPECT_TRUE(same.pass);
    EXPECT_EQ(same.nan_got, 1u);
    EXPECT_EQ(same.inf_ref, 1u);
    comparison c = compare_results(from_doubles(s, std::vector<double>{1, INFINITY, NAN, 2}), ref, {});
    EXPECT_FALSE(c.pass);
    EXPECT_EQ(c.nan_got, 1u);
    EXPECT_EQ(c.not_close, 2u);
    EXPECT_NE(describe(c).find("NaN: 1 got, 1 ref; Inf: 1 got, 1 ref"), std::string::npos) << describe(c);
}

TEST(compare, tolerances_by_dtype_and_precision) {
    EXPECT_EQ(default_tolerances(dtype::float32).rms_tol, 1e-3);
    EXPECT_EQ(default_tolerances(dtype::float16).rms_tol, 8e-2);
    EXPECT_EQ(default_tolerances(dtype::float32, compute_precision::bf16).atol, 4e-2);
    EXPECT_EQ(default_tolerances(dtype::fp8e4m3fn).rms_tol, 0.8);
    EXPECT_EQ(default_tolerances(dtype::int32).atol, 0);
    comparison c = compare_results(from_doubles(shape(dtype::float32, std::vector<std::size_t>{2}), std::vector<double>{1, 2}),
                                   from_doubles(shape(dtype::float32, std::vector<std::size_t>{3}), std::vector<double>{1, 2, 3}), {});
    EXPECT_FALSE(c.pass);
    EXPECT_NE(c.mismatch.find("but ref gives"), std::string::npos);
}

TEST(program_tools, isolate_takes_distinct_inputs_as_parameters) {
    program p = parse_text(chain);
    isolated_instruction iso = isolate_instruction(p, 5);   // @2 = mul(@0,@1)
    ASSERT_EQ(iso.inputs.size(), 2u);
    EXPECT_EQ(iso.inputs[0], (std::pair<std::string, std::size_t>("in0", 3)));
    EXPECT_EQ(iso.inputs[1], (std::pair<std::string, std::size_t>("in1", 4)));
    EXPECT_EQ(iso.prog.main().size(), 4u);   // in0, in1, mul, return
    program prefix = program_prefix(p, 4);   // @1 = exp(z)
    EXPECT_EQ(prefix.main().parameter_names(), std::vector<std::string>{"z"});
}

}  // namespace
}  // namespace kiln
