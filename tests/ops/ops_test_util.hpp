// Loads and runs the JSON op cases of tests/ops/cases (format in gen/caselib.py).
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/argument.hpp"
#include "core/module.hpp"
#include "core/value.hpp"

namespace kiln {

struct test_case {
    std::string family;
    value data;

    std::string name() const;        // "<family>_<case>", usable as a gtest name
    std::string op_name() const;
    bool is_error_case() const { return data.contains("error"); }
    // Builds the case's program (one op on parameters x0..xn, or its text IR).
    program build() const;
    // Runs it on the ref interpreter; `strided` stores inputs in column-major layout.
    std::vector<argument> run(bool strided) const;
    // Same, compiled for a target (its lowering and kernels; no generic passes); copies of the outputs.
    std::vector<argument> run_on(const std::string& target, bool strided) const;
    // Compares with the expected outputs within the case's (or the dtype's default) tolerance;
    // `float_slack` widens float tolerances for targets that compute in float, not double.
    void check_outputs(const std::vector<argument>& outs, double float_slack = 1) const;
};

// How gtest names a case in its output (instead of dumping the object's bytes).
inline void PrintTo(const test_case& c, std::ostream* os) { *os << c.name(); }

// Expects building or running the case to throw kiln::error whose message contains case.error.
void expect_error(const test_case& tc);

// A tensor description {type, lens, data} as an argument (column-major storage when `strided`).
argument make_tensor(const value& t, bool strided);
shape tensor_shape(const value& t);
// Elementwise |a - b| <= atol + rtol * |b| (NaN == NaN, infinities equal); returns a message or "".
std::string compare(const argument& actual, const value& expected, double rtol, double atol);
void default_tolerance(dtype t, double& rtol, double& atol);

// The seed of this test process's random inputs: KILN_SEED if set (to repeat a run), else a fresh
// one, the same for every call.
std::uint64_t run_seed();

}  // namespace kiln
