// The ops that move elements without reading them (trait `strings`: views, concat, gather) move
// strings as they move numbers: every op case of theirs runs again with its data input (input 0,
// or every input of concat) and its output written as text, on ref and cpu, in standard and
// column-major layouts, and must give the text of the numeric result.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/operation.hpp"
#include "core/target.hpp"
#include "ops_test_util.hpp"

namespace kiln {
namespace {

// A tensor description with its values as strings: the same text for the same number.
value as_strings(const value& t) {
    value r = t;
    r.set("type", "string");
    value_array data;
    for (const auto& v : t.at("data").as_array()) data.emplace_back(v.is_string() ? v.as_string() : to_string(v));
    r.set("data", value(std::move(data)));
    return r;
}

bool numeric(const value& t) {
    std::string type = t.at("type").as_string();
    return t.contains("data") && type != "string" && type.find("int4") == std::string::npos &&
           type.find("int2") == std::string::npos && type != "float4e2m1";
}

// The cases of the string-moving ops whose data and output are of one type, rewritten to strings.
std::vector<test_case> string_cases() {
    std::vector<test_case> out;
    for (const auto& entry : std::filesystem::directory_iterator(KILN_TEST_DATA_DIR "/ops/cases")) {
        if (entry.path().extension() != ".json") continue;
        std::ifstream f(entry.path());
        std::stringstream ss;
        ss << f.rdbuf();
        value doc = parse_json(ss.str());
        for (const auto& c : doc.at("cases").as_array()) {
            test_case tc{doc.at("family").as_string(), c};
            if (tc.is_error_case() || c.contains("ir") || !c.at("inputs").is_array()) continue;
            std::string op = tc.op_name();
            if (op.rfind("string", 0) == 0 || op == "get_tuple_elem" || op == "label_encoder" ||
                op == "regex_full_match" || op == "tfidf_vectorizer" || !make_op(op).traits().strings)
                continue;
            auto ins = c.at("inputs").as_array();
            const auto& outs = c.at("outputs").as_array();
            if (ins.empty() || outs.size() != 1 || !numeric(ins[0]) ||
                outs[0].at("type").as_string() != ins[0].at("type").as_string())
                continue;
            std::size_t data_inputs = op == "concat" ? ins.size() : 1;
            bool same_type = true;
            for (std::size_t i = 0; i < data_inputs; ++i) same_type = same_type && ins[i].at("type") == ins[0].at("type");
            if (!same_type) continue;
            for (std::size_t i = 0; i < data_inputs; ++i) ins[i] = as_strings(ins[i]);
            value sc = c;
            sc.set("inputs", value(ins));
            sc.set("outputs", value(value_array{as_strings(outs[0])}));
            sc.set("name", c.at("name").as_string() + "_strings");
            out.push_back({tc.family, sc});
        }
    }
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name() < b.name(); });
    return out;
}

class string_movement : public ::testing::TestWithParam<test_case> {};

TEST_P(string_movement, ref_and_cpu) {
    const test_case& tc = GetParam();
    auto built = built_targets();
    bool cpu = std::find(built.begin(), built.end(), "cpu") != built.end();
    for (bool strided : {false, true}) {
        SCOPED_TRACE(strided ? "inputs in column-major layout" : "standard inputs");
        tc.check_outputs(tc.run(strided));
        if (cpu) tc.check_outputs(tc.run_on("cpu", strided));
    }
}

INSTANTIATE_TEST_SUITE_P(cases, string_movement, ::testing::ValuesIn(string_cases()),
                         [](const auto& info) { return info.param.name(); });

// Every string-moving op has at least one case here, so none is marked without a check.
TEST(string_movement, every_string_moving_op_is_covered) {
    std::set<std::string> covered;
    for (const auto& c : string_cases()) covered.insert(c.op_name());
    for (const char* op : {"broadcast", "concat", "contiguous", "expand", "flatten", "gather", "identity",
                           "multibroadcast", "reshape", "slice", "squeeze", "transpose", "unsqueeze"})
        EXPECT_TRUE(covered.count(op)) << op << " has no case with strings";
}

}  // namespace
}  // namespace kiln
