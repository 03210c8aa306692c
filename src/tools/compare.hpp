// Comparing a target's result with ref's (verify). A result passes only when both hold:
//   relative RMS error  sqrt(sum (got - ref)^2 / sum ref^2) <= rms_tol  (absolute RMS when ref is all 0)
//   allclose            |got - ref| <= atol + rtol * |ref| for every element
// NaN matches only NaN and an infinity only the same infinity.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/argument.hpp"
#include "core/target.hpp"

namespace kiln {

struct tolerances {
    double rms_tol = 1e-3;
    double atol = 1e-3;
    double rtol = 1e-3;
};

// Defaults by the compared type and the precision the target computed in: 1e-3 for float32 and
// wider, 8e-2/4e-2/4e-2 for fp16/bf16 (or a program compiled with --fp16/--bf16), 0.8/0.4/0.4 for
// fp8 types, 0 for integers and bool (exact).
tolerances default_tolerances(dtype t, compute_precision p = compute_precision::fp32);

// Overrides of some tolerances (--rms-tol, --atol, --rtol).
struct tolerance_overrides {
    std::optional<double> rms_tol, atol, rtol;
    tolerances apply(tolerances t) const;
};

struct comparison {
    bool pass = false;
    std::string mismatch;            // set when types or lens differ (then nothing else is)
    tolerances tol;
    double rms_error = 0;
    std::size_t elements = 0;
    std::size_t not_close = 0;       // elements failing allclose
    // The element with the largest |got - ref| (NaN or inf against a number counts as largest).
    std::size_t worst = 0;
    std::vector<std::size_t> worst_position;   // its index per dimension
    std::string worst_index;         // the same printed: "[1, 2]"
    double worst_got = 0, worst_ref = 0, max_abs = 0;
    std::size_t nan_got = 0, nan_ref = 0, inf_got = 0, inf_ref = 0;
};

// Tuples, sequences and optionals are compared value by value (the first failing one is reported).
comparison compare_results(const argument& got, const argument& ref, const tolerances& tol);
// Several lines describing the comparison, each starting with `indent`.
std::string describe(const comparison& c, const std::string& indent = "  ");

}  // namespace kiln
