// perf's numbers and trace, the per-instruction observer and per-pass callback they rest on, the
// DOT picture (fused regions as clusters) and compile progress.
#include <gtest/gtest.h>

#include <sstream>

#include "core/op.hpp"
#include "core/random.hpp"
#include "core/text_parser.hpp"
#include "passes/pipeline.hpp"
#include "tools/graphviz.hpp"
#include "tools/perf.hpp"
#include "tools/progress.hpp"

namespace kiln {

// A fused region as the fusion pass makes them: an op with the fusion trait whose one submodule
// is the kernel's body (here run by the interpreter). Not registered: op_coverage expects a case
// for every registered op.
struct perf_test_fused {
    static constexpr std::string_view name = "perf_test_fused";
    op_traits traits() const {
        op_traits t;
        t.fusion = true;
        return t;
    }
    shape compute_shape(std::span<const shape>, std::span<module* const> mods) const {
        if (mods.empty()) fail("expects its body");
        return mods[0]->output_shapes().at(0);
    }
    argument compute(const shape&, std::span<const argument> args, std::span<module* const> mods,
                     const module_runner& run) const {
        return run(*mods[0], args).at(0);
    }
};

namespace {

const char* mlp =
    "x = @param:x -> float_type, {2, 16}\n"
    "@0 = @literal{0.5, -1.0, 0.25, 2.0, 1.5, -0.5, 0.75, -2.0, 1.0, 0.5, -0.25, 1.25, -1.5, 0.5, 2.0, -1.0} -> float_type, {16}\n"
    "@1 = add(x,@0)\n"
    "@2 = relu(@1)\n"
    "@3 = add(@2,x)\n"
    "@4 = @return(@3)\n";

TEST(perf, report_is_consistent) {
    program p = parse_text(mlp);
    auto in = random_inputs(p.main(), 1);
    auto exe = make_target("ref")->compile(std::move(p), {.optimize = false});
    perf_report r = measure_program(*exe, in, 20);
    EXPECT_GT(r.first_run_ms, 0);
    EXPECT_EQ(r.iterations, 20u);
    EXPECT_EQ(r.run_ms.size(), 20u);
    ASSERT_EQ(r.instructions.size(), 5u);   // x, the literal, add, relu, add
    EXPECT_EQ(r.instructions[2].line, "@1 = add(x,@0) -> float_type, {2, 16}, {16, 1}");
    EXPECT_LE(r.min, r.median);
    EXPECT_LE(r.median, r.p90);
    EXPECT_LE(r.p90, r.p99);
    EXPECT_LE(r.p99, r.max);
    EXPECT_GT(r.mean, 0);
    EXPECT_NEAR(r.rate(), 1000 / r.iq_mean, 1e-9);
    EXPECT_LE(r.min, r.iq_mean);
    EXPECT_LE(r.iq_mean, r.max);
    ASSERT_FALSE(r.by_op.empty());
    for (std::size_t i = 1; i < r.by_op.size(); ++i) EXPECT_GE(r.by_op[i - 1].second, r.by_op[i].second);
    double sum = 0;
    for (const auto& i : r.instructions) sum += i.ms;
    EXPECT_NEAR(sum, r.instructions_ms, 1e-9);
    EXPECT_NEAR(r.overhead_ms, r.iq_mean - r.instructions_ms, 1e-9);
}

TEST(perf, input_sets_warmup_and_whole_runs_only) {
    program p = parse_text(mlp);
    std::vector<param_map> sets{random_inputs(p.main(), 1), random_inputs(p.main(), 2), random_inputs(p.main(), 3)};
    auto exe = make_target("ref")->compile(std::move(p), {.optimize = false});
    perf_report r = measure_program(*exe, sets, perf_options{7, 3, false});
    EXPECT_EQ(r.iterations, 7u);
    EXPECT_EQ(r.warmup, 3u);
    EXPECT_EQ(r.input_sets, 3u);
    EXPECT_EQ(r.run_ms.size(), 7u);
    EXPECT_TRUE(r.instructions.empty());   // whole runs only
    EXPECT_TRUE(r.device_run_ms.empty());  // ref has no device clock
    EXPECT_LE(r.min, r.p10);
    EXPECT_LE(r.p10, r.median);
    EXPECT_EQ(r.p10, percentile(r.run_ms, 0.1));
    EXPECT_THROW(measure_program(*exe, std::span<const param_map>{}, perf_options{}), error);
}

TEST(perf, spread_of_sorted_values) {
    std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    run_spread s = spread_of(v);
    EXPECT_EQ(s.min, 1);
    EXPECT_EQ(s.p10, 1);
    EXPECT_EQ(s.median, 5);
    EXPECT_EQ(s.p90, 9);
    EXPECT_EQ(s.max, 10);
    EXPECT_DOUBLE_EQ(s.mean, 5.5);
    EXPECT_DOUBLE_EQ(s.iq_mean, 5.5);   // 3..8
    EXPECT_EQ(spread_of({}).median, 0);
}

TEST(perf, percentile_is_nearest_rank) {
    std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    EXPECT_EQ(percentile(v, 0), 1);
    EXPECT_EQ(percentile(v, 0.5), 5);
    EXPECT_EQ(percentile(v, 0.9), 9);
    EXPECT_EQ(percentile(v, 0.99), 10);
    EXPECT_EQ(percentile({}, 0.5), 0);
}

TEST(perf, trace_is_chrome_trace_json) {
    program p = parse_text(mlp);
    auto in = random_inputs(p.main(), 1);
    auto exe = make_target("ref")->compile(std::move(p), {.optimize = false});
    value t = parse_json(trace_program(*exe, "ref", in));
    const auto& events = t.at("traceEvents").as_array();
    std::vector<std::string> slices;
    double run_end = 0;
    for (const auto& e : events) {
        if (e.at("ph").as_string() != "X") continue;
        EXPECT_GE(e.at("ts").as_float(), 0);
        EXPECT_GE(e.at("dur").as_float(), 0);
        EXPECT_EQ(e.at("pid").as_int(), 1);
        if (e.at("name").as_string() == "run") run_end = e.at("ts").as_float() + e.at("dur").as_float();
        else slices.push_back(e.at("name").as_string());
        EXPECT_LE(e.at("ts").as_float() + e.at("dur").as_float(), run_end + 1e-3);
    }
    EXPECT_EQ(slices, (std::vector<std::string>{"add", "relu", "add"}));
    EXPECT_EQ(t.at("displayTimeUnit").as_string(), "ms");
}

TEST(eval_observer, sees_every_instruction_once) {
    program p = parse_text(mlp);
    std::vector<std::string> seen;
    auto in = random_inputs(p.main(), 2);
    auto outs = evaluate(p, in, [&](const instruction& ins, const argument& a, double ms) {
        seen.push_back(std::string(ins.name()));
        EXPECT_GE(ms, 0);
        EXPECT_EQ(a.get_shape().lens(), ins.get_shape().lens());
    });
    EXPECT_EQ(seen, (std::vector<std::string>{"@param", "@literal", "add", "relu", "add"}));
    EXPECT_TRUE(outs[0].same_values(evaluate(p, in)[0]));
}

TEST(pass_options, on_pass_reports_each_pass) {
    program p = parse_text(mlp);
    compile_options o;
    std::vector<std::string> names;
    pass_options popts;
    popts.on_pass = [&](const std::string& n, double ms) {
        names.push_back(n);
        EXPECT_GE(ms, 0);
    };
    lower(p, *make_target("ref"), o, popts);
    EXPECT_EQ(names.size(), generic_passes(o).size());
    ASSERT_FALSE(names.empty());
    EXPECT_EQ(names.front(), generic_passes(o).front().name());
}

TEST(graphviz, fused_regions_are_clusters) {
    program p;
    shape s(dtype::float32, std::vector<std::size_t>{4});
    module& body = p.create_module("fused_0");
    auto a = body.add_parameter("a", s), b = body.add_parameter("b", s);
    body.add_return({body.add_instruction(make_op("exp"), {body.add_instruction(make_op("mul"), {a, b})})});
    module& m = p.main();
    auto x = m.add_parameter("x", s), y = m.add_parameter("y", s);
    operation fused(std::make_shared<detail::op_model<perf_test_fused>>(perf_test_fused{}));
    auto f = m.add_instruction(fused, {x, y}, {&body});
    m.add_return({m.add_instruction(make_op("neg"), {f})});
    p.validate();
    std::string dot = program_to_dot(p);
    EXPECT_EQ(dot.rfind("digraph kiln {", 0), 0u);
    EXPECT_NE(dot.find("subgraph cluster_0 {"), std::string::npos) << dot;
    EXPECT_NE(dot.find("label=\"@0 = perf_test_fused [fused_0]\""), std::string::npos) << dot;
    EXPECT_NE(dot.find("@0 mul\\nfloat_type, {4}"), std::string::npos) << dot;
    EXPECT_NE(dot.find("[style=dashed]"), std::string::npos) << dot;   // x -> a, y -> b
    EXPECT_EQ(dot.find("subgraph cluster_1"), std::string::npos);
    // A control-flow op's submodules are calls, not fused regions: no cluster.
    program q = parse_text(
        "module: \"main\"\n"
        "c = @param:c -> bool_type, {}\n"
        "x = @param:x -> float_type, {2}\n"
        "@0 = if(c,x), [then_b, else_b]\n"
        "@1 = @return(@0)\n"
        "module: \"then_b\"\n"
        "a = @param:a -> float_type, {2}\n"
        "@0 = neg(a)\n"
        "@1 = @return(@0)\n"
        "module: \"else_b\"\n"
        "a = @param:a -> float_type, {2}\n"
        "@0 = @return(a)\n");
    EXPECT_EQ(program_to_dot(q).find("cluster"), std::string::npos);
}

TEST(progress, shown_only_when_enabled_and_slow) {
    std::ostringstream quiet, slow, fast;
    {
        compile_progress off(quiet, false, 2, 0);
        off.pass_done("simplify");
    }
    EXPECT_EQ(quiet.str(), "");
    {
        compile_progress late(fast, true, 2, 3600);
        late.pass_done("simplify");
        EXPECT_FALSE(late.shown());
    }
    EXPECT_EQ(fast.str(), "");
    {
        compile_progress on(slow, true, 2, 0);
        on.pass_done("simplify");
        on.kernel_done(3, true);
        EXPECT_TRUE(on.shown());
    }
    EXPECT_NE(slow.str().find("compiling: pass 1/2 simplify"), std::string::npos);
    EXPECT_NE(slow.str().find("kernels 1/3 (1 cache hits)"), std::string::npos);
}

}  // namespace
}  // namespace kiln
