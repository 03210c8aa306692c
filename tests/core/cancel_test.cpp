// Cancelling and timing out a run: the interpreter, the executor (ref and cpu executables) and
// Loop iterations check the current run_control before each instruction; the error names where
// the run stopped, and a cancel is taken by the run that sees it.
#include "core/cancel.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "core/eval.hpp"
#include "core/random.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"

namespace kiln {
namespace {

// A Loop of 2^62 iterations (tests/driver/data/endless_loop.kir).
program endless_loop() { return parse_text_file(KILN_TEST_DATA_DIR "/driver/data/endless_loop.kir"); }

param_map loop_inputs() { return {{"acc", random_argument(shape(dtype::float32, std::vector<std::size_t>{3}), 7)}}; }

// Runs f, which must throw `cancelled`; returns its message.
template <class F>
std::string stop_message(F f) {
    try {
        f();
    } catch (const cancelled& e) {
        return e.what();
    }
    ADD_FAILURE() << "the run was not stopped";
    return "";
}

TEST(cancel, a_timeout_stops_an_endless_loop_naming_the_iteration) {
    program p = endless_loop();
    run_control c;
    c.set_timeout(0.2);
    run_control_scope scope(c);
    auto start = std::chrono::steady_clock::now();
    std::string msg = stop_message([&] { evaluate(p, loop_inputs()); });
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    EXPECT_NE(msg.find("module main: @2 = loop"), std::string::npos) << msg;
    EXPECT_NE(msg.find(": iteration "), std::string::npos) << msg;
    EXPECT_NE(msg.find("timed out after 0.2 s"), std::string::npos) << msg;
}

TEST(cancel, another_thread_cancels_a_compiled_run_on_each_target) {
    for (std::string target : built_targets()) {
        if (target == "gpu") continue;   // tests/gpu/gpu_device_test.cpp
        SCOPED_TRACE(target);
        auto exe = make_target(target)->compile(endless_loop(), {});
        run_control c;
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            c.cancel();
        });
        std::string msg = stop_message([&] {
            run_control_scope scope(c);
            exe->run(loop_inputs());
        });
        canceller.join();
        EXPECT_NE(msg.find("iteration "), std::string::npos) << msg;
        EXPECT_NE(msg.find(": cancelled"), std::string::npos) << msg;
    }
}

// A cancel given while nothing runs stops the next run at its first instruction; the run after
// that is not stopped (the first took the cancel), and neither is a run without a control.
TEST(cancel, a_cancel_is_taken_by_one_run) {
    program p = parse_text("x = @param:x -> float_type, {4}\n@0 = relu(x)\n@1 = neg(@0)\n@2 = @return(@1)\n");
    argument x = random_argument(shape(dtype::float32, std::vector<std::size_t>{4}), 3);
    auto exe = make_target("ref")->compile(p.clone(), {});
    run_control c;
    c.cancel();
    {
        run_control_scope scope(c);
        std::string msg = stop_message([&] { exe->run({{"x", x}}); });
        EXPECT_EQ(msg.find("module main: @0 = "), 0u) << msg;   // before the first instruction
        EXPECT_NE(msg.find(": cancelled"), std::string::npos) << msg;
        auto y = exe->run({{"x", x}});
        auto want = evaluate(p, {{"x", x}});
        ASSERT_EQ(y.size(), 1u);
        EXPECT_EQ(0, std::memcmp(y[0].data(), want[0].data(), y[0].get_shape().bytes()));
    }
    c.cancel();
    EXPECT_NO_THROW(evaluate(p, {{"x", x}}));   // not current: no scope
}

}  // namespace
}  // namespace kiln
