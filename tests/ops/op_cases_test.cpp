// Runs every case in tests/ops/cases/*.json on the ref interpreter: each op's output against
// values computed independently (see gen/caselib.py), each invalid input against its error.
// Every compute case runs twice: with standard inputs and with inputs stored in reversed-dim
// (column-major) layout, so that every op's strided access is exercised.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/eval.hpp"
#include "core/module.hpp"
#include "core/text_parser.hpp"
#include "ops_test_util.hpp"

namespace kiln {
namespace {

std::vector<test_case> all_cases() {
    std::vector<test_case> cases;
    for (const auto& entry : std::filesystem::directory_iterator(KILN_TEST_DATA_DIR "/ops/cases")) {
        if (entry.path().extension() != ".json") continue;
        std::ifstream f(entry.path());
        std::stringstream ss;
        ss << f.rdbuf();
        value doc = parse_json(ss.str());
        for (const auto& c : doc.at("cases").as_array()) cases.push_back({doc.at("family").as_string(), c});
    }
    std::sort(cases.begin(), cases.end(), [](auto& a, auto& b) { return a.name() < b.name(); });
    return cases;
}

class op_case : public ::testing::TestWithParam<test_case> {};

TEST_P(op_case, ref) {
    const test_case& tc = GetParam();
    if (tc.is_error_case()) {
        expect_error(tc);
        return;
    }
    for (bool strided : {false, true}) {
        SCOPED_TRACE(strided ? "inputs in column-major layout" : "standard inputs");
        auto outs = tc.run(strided);
        tc.check_outputs(outs);
    }
}

// The same on the cpu target (oneDNN and generated kernels compute in float, not double, so float
// tolerances are 10x wider there). Error cases are ref's: the op rejects them before any target.
TEST_P(op_case, cpu) {
    const test_case& tc = GetParam();
    if (tc.is_error_case()) return;
    for (bool strided : {false, true}) {
        SCOPED_TRACE(strided ? "inputs in column-major layout" : "standard inputs");
        tc.check_outputs(tc.run_on("cpu", strided), 10);
    }
}

// The case's program prints, parses back and prints the same text: every op's attributes and
// result shapes survive the text IR.
TEST_P(op_case, text_round_trip) {
    const test_case& tc = GetParam();
    program p;
    try {
        p = tc.build();
    } catch (const error&) {
        if (tc.is_error_case()) return;   // rejected while building: there is nothing to print
        throw;
    }
    std::string text = to_string(p);
    EXPECT_EQ(to_string(parse_text(text)), text);
}

INSTANTIATE_TEST_SUITE_P(cases, op_case, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) { return info.param.name(); });

// Every registered op has at least one case that runs its compute: a compute case, or an error
// case with input data (an op whose compute fails by design, like unknown_onnx_op, has only those).
TEST(op_coverage, every_op_has_a_case) {
    std::set<std::string> covered;
    for (const auto& c : all_cases()) {
        const auto& ins = c.data.at("inputs");
        bool runs = !c.is_error_case() || (ins.is_array() && !ins.as_array().empty() && ins.as_array()[0].contains("data"));
        if (runs) covered.insert(c.op_name());
    }
    std::string missing;
    for (const auto& name : registered_ops())
        if (name[0] != '@' && !covered.count(name)) missing += " " + name;
    EXPECT_TRUE(missing.empty()) << "ops without a compute case:" << missing;
}

}  // namespace
}  // namespace kiln
