// The pass manager: a pass that throws or breaks the IR is named and its input program dumped;
// dead code goes after every pass; disabled passes are skipped; timings and traces are printed;
// every module is visited, callees first.
#include "core/pass.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/text_parser.hpp"

namespace kiln {
namespace {

const std::string source =
    "module: \"main\"\n"
    "x = @param:x -> float_type, {2}, {1}\n"
    "@0 = relu(x), [sub] -> float_type, {2}, {1}\n"
    "@1 = neg(@0) -> float_type, {2}, {1}\n"
    "@2 = @return(@1)\n"
    "\n"
    "module: \"sub\"\n"
    "y = @param:y -> float_type, {2}, {1}\n"
    "@0 = @return(y)\n";

instruction_ref find(module& m, std::string_view op) {
    return std::find_if(m.begin(), m.end(), [&](const instruction& i) { return i.name() == op; });
}

// Replaces neg(v) by v: the relu feeding it stays used, the neg becomes dead.
struct drop_neg {
    static constexpr std::string_view name = "drop_neg";
    void apply(module& m) const {
        auto neg = find(m, "neg");
        if (neg != m.end()) m.replace_uses(neg, neg->inputs()[0]);
    }
};

// Moves the return before the instruction it returns, which validate rejects.
struct break_order {
    static constexpr std::string_view name = "break_order";
    void apply(module& m) const {
        if (m.name() == "main") m.move_instruction(m.get_return(), m.begin());
    }
};

class pass_manager : public ::testing::Test {
protected:
    // One folder per process: ctest runs tests in parallel and TearDown removes it.
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("kiln_pass_manager_test_" + std::to_string(::getpid()));
    void TearDown() override { std::filesystem::remove_all(dir); }

    pass_options options() const {
        pass_options o;
        o.dump_dir = dir.string();
        return o;
    }
    // Runs the pipeline expecting an error containing each of `wants`; returns the message.
    std::string expect_failure(program& p, const std::vector<pass>& pipeline, std::vector<std::string> wants) {
        try {
            run_passes(p, pipeline, options());
        } catch (const error& e) {
            for (const auto& w : wants) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
            return e.what();
        }
        ADD_FAILURE() << "no error";
        return "";
    }
};

TEST_F(pass_manager, dead_code_goes_after_each_pass) {
    program p = parse_text(source);
    run_passes(p, {drop_neg{}}, options());
    EXPECT_EQ(find(p.main(), "neg"), p.main().end());
    EXPECT_EQ(to_string(p.main()),
              "x = @param:x -> float_type, {2}, {1}\n"
              "@0 = relu(x), [sub] -> float_type, {2}, {1}\n"
              "@1 = @return(@0)\n");
}

TEST_F(pass_manager, a_pass_that_breaks_the_ir_is_named_and_its_input_dumped) {
    program p = parse_text(source);
    std::string dump = (dir / "break_order.kir").string();
    expect_failure(p, {drop_neg{}, break_order{}},
                   {"pass 'break_order' broke the IR: module main: instruction 0 (@return)",
                    "its input program is in " + dump});
    // The dump is the program as the breaking pass received it (after drop_neg), and parses back.
    std::ifstream f(dump);
    std::stringstream text;
    text << f.rdbuf();
    program before = parse_text(source);
    run_passes(before, {drop_neg{}}, options());
    EXPECT_EQ(text.str(), to_string(before));
    EXPECT_EQ(to_string(parse_text(text.str())), text.str());
}

TEST_F(pass_manager, a_pass_that_throws_is_named) {
    program p = parse_text(source);
    pass boom("boom", [](module&) { fail("something went wrong"); });
    expect_failure(p, {boom}, {"pass 'boom' failed: something went wrong", "boom.kir"});
    EXPECT_TRUE(std::filesystem::exists(dir / "boom.kir"));
    pass_options no_dump;
    no_dump.dump_dir.clear();
    try {
        run_passes(p, {boom}, no_dump);
        ADD_FAILURE() << "no error";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("(not saved: no dump directory)"), std::string::npos) << e.what();
    }
}

TEST_F(pass_manager, validation_can_be_turned_off) {
    program p = parse_text(source);
    pass_options o = options();
    o.validate = false;
    run_passes(p, {break_order{}}, o);   // no check, no error
    EXPECT_THROW(p.validate(), error);
}

TEST_F(pass_manager, disabled_passes_are_skipped) {
    program p = parse_text(source);
    pass_options o = options();
    o.disabled = {"break_order", "drop_neg"};
    run_passes(p, {drop_neg{}, break_order{}}, o);
    EXPECT_EQ(to_string(p), source);
}

TEST_F(pass_manager, timings_and_trace) {
    program p = parse_text(source);
    std::ostringstream timings, trace;
    pass_options o = options();
    o.timings = &timings;
    o.trace = &trace;
    run_passes(p, {drop_neg{}, pass("nothing", [](module&) {})}, o);
    std::string t = timings.str();
    EXPECT_EQ(t.rfind("drop_neg: ", 0), 0u) << t;
    EXPECT_NE(t.find(" ms\nnothing: "), std::string::npos) << t;
    EXPECT_EQ(t.substr(t.size() - 4), " ms\n");
    EXPECT_NE(trace.str().find("after drop_neg:\nmodule: \"main\"\n"), std::string::npos) << trace.str();
    EXPECT_NE(trace.str().find("after nothing:\n"), std::string::npos);
}

TEST_F(pass_manager, every_module_is_visited_callees_first) {
    program p = parse_text(source);
    std::vector<std::string> seen;
    run_passes(p, {pass("record", [&](module& m) { seen.push_back(m.name()); })}, options());
    EXPECT_EQ(seen, (std::vector<std::string>{"sub", "main"}));
}

}  // namespace
}  // namespace kiln
