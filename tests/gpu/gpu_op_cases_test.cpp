// The differential harness: every op case of tests/ops/cases on the gpu target against ref,
// compiled in fp32, fp16 and bf16, on fresh random float inputs (the seed is printed; KILN_SEED
// repeats a run), with tolerances by dtype and precision (tools/compare.hpp). A case whose op
// has no GPU implementation is skipped and counted; the summary lists those ops.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/target.hpp"
#include "ops_test_util.hpp"
#include "tools/compare.hpp"

namespace kiln {
namespace {


struct tally {
    std::size_t passed = 0, failed = 0, unsupported = 0;
    std::set<std::string> unsupported_ops;
};
tally& counts() {
    static tally t;
    return t;
}

std::vector<test_case> compute_cases() {
    std::vector<test_case> cases;
    // KILN_GPU_TEST_DATA: where gpu-test.sh unpacked tests/ on the GPU machine.
    const char* data = std::getenv("KILN_GPU_TEST_DATA");
    std::string dir = std::string(data ? data : KILN_TEST_DATA_DIR) + "/ops/cases";
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".json") continue;
        std::ifstream f(entry.path());
        std::stringstream ss;
        ss << f.rdbuf();
        value doc = parse_json(ss.str());
        for (const auto& c : doc.at("cases").as_array()) {
            test_case tc{doc.at("family").as_string(), c};
            if (!tc.is_error_case()) cases.push_back(tc);
        }
    }
    std::sort(cases.begin(), cases.end(), [](auto& a, auto& b) { return a.name() < b.name(); });
    return cases;
}

// The case's inputs with every float tensor replaced by fresh random values.
param_map inputs_of(const test_case& tc, bool random) {
    param_map in;
    const auto& ins = tc.data.at("inputs");
    std::size_t i = 0;
    auto add = [&](const std::string& name, const value& t) {
        argument a = make_tensor(t, false);
        if (random && is_float(a.get_shape().type())) a = random_argument(a.get_shape(), run_seed(), i);
        in[name] = a;
        ++i;
    };
    if (ins.is_object())
        for (const auto& [name, t] : ins.as_object()) add(name, t);
    else
        for (const auto& t : ins.as_array()) add("x" + std::to_string(i), t);
    return in;
}

const char* precision_name(compute_precision p) {
    return p == compute_precision::fp32 ? "fp32" : p == compute_precision::fp16 ? "fp16" : "bf16";
}

class gpu_op_case : public ::testing::TestWithParam<std::tuple<test_case, compute_precision>> {};

TEST_P(gpu_op_case, matches_ref) {
    const auto& [tc, precision] = GetParam();
    SCOPED_TRACE(cat("seed ", run_seed(), ", ", precision_name(precision)));
    compile_options opts;
    opts.precision = precision;
    program p = tc.build();
    std::unique_ptr<executable> gpu;
    try {
        gpu = make_target("gpu")->compile(p.clone(), opts);
    } catch (const error& e) {
        if (std::string(e.what()).find("no GPU implementation") == std::string::npos) {
            ++counts().failed;
            FAIL() << e.what();
        }
        ++counts().unsupported;
        counts().unsupported_ops.insert(tc.op_name());
        GTEST_SKIP() << "no GPU implementation";
    }
    auto ref = make_target("ref")->compile(p.clone(), opts);
    // Random floats, unless the op rejects them (float indices, say): then the case's own.
    param_map in = inputs_of(tc, true);
    std::vector<argument> want;
    try {
        want = ref->run(in);
    } catch (const error&) {
        in = inputs_of(tc, false);
        want = ref->run(in);
    }
    std::vector<argument> copies;
    for (const auto& w : want) copies.push_back(w.copy());
    std::vector<argument> got;
    try {   // a run that throws is a failure the summary counts too
        got = gpu->run(in);
    } catch (const error& e) {
        ++counts().failed;
        FAIL() << e.what();
    }
    ASSERT_EQ(got.size(), copies.size());
    // A tuple, sequence or optional output (topk, loop, split_to_sequence) is compared value by
    // value, each in its own type's tolerance; one whose kind or count differs fails as a whole.
    std::vector<argument> got_tensors, want_tensors;
    std::function<void(const argument&, const argument&)> flatten = [&](const argument& g, const argument& w) {
        if (!g.get_shape().is_tensor() && g.get_shape().type() == w.get_shape().type() &&
            g.sub_arguments().size() == w.sub_arguments().size()) {
            for (std::size_t k = 0; k < g.sub_arguments().size(); ++k) flatten(g.sub_arguments()[k], w.sub_arguments()[k]);
            return;
        }
        got_tensors.push_back(g);
        want_tensors.push_back(w);
    };
    for (std::size_t i = 0; i < got.size(); ++i) flatten(got[i], copies[i]);
    bool ok = true;
    for (std::size_t i = 0; i < got_tensors.size(); ++i) {
        auto c = compare_results(got_tensors[i], want_tensors[i],
                                 default_tolerances(want_tensors[i].get_shape().type(), precision));
        if (!c.pass) {
            ok = false;
            ADD_FAILURE() << "output " << i << ":\n" << describe(c);
        }
    }
    ++(ok ? counts().passed : counts().failed);
}

INSTANTIATE_TEST_SUITE_P(cases, gpu_op_case,
                         ::testing::Combine(::testing::ValuesIn(compute_cases()),
                                            ::testing::Values(compute_precision::fp32, compute_precision::fp16,
                                                              compute_precision::bf16)),
                         [](const auto& info) {
                             return std::get<0>(info.param).name() + "_" + precision_name(std::get<1>(info.param));
                         });

// Prints the totals once all cases ran.
class summary : public ::testing::Environment {
public:
    void TearDown() override {
        const auto& t = counts();
        if (t.passed + t.failed + t.unsupported == 0) return;
        std::string ops;
        for (const auto& o : t.unsupported_ops) ops += (ops.empty() ? "" : ", ") + o;
        std::printf("gpu op cases (seed %llu): %zu passed, %zu failed, %zu without a GPU implementation (%zu ops: %s)\n",
                    static_cast<unsigned long long>(run_seed()), t.passed, t.failed, t.unsupported,
                    t.unsupported_ops.size(), ops.c_str());
    }
};
const auto* registered_summary = ::testing::AddGlobalTestEnvironment(new summary);

}  // namespace
}  // namespace kiln
