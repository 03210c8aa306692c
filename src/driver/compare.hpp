// Comparing outputs with expected values (`kiln run --test-data`), as numpy's allclose does:
// an element passes when |got - expected| <= atol + rtol * |expected| (NaN matches only NaN).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "core/argument.hpp"

namespace kiln::driver {

struct tolerance {
    double rtol = 1e-3;
    double atol = 1e-5;
};

struct named_value {
    std::string label;   // "#output_0 (y)"
    argument arg;
};

// Prints "LABEL: max abs error A, max rel error R: PASS" (or FAIL, with the reason when the
// types or shapes differ) for each output; returns how many failed. The relative error is taken
// over the elements whose expected value is not 0.
std::size_t compare_outputs(const std::vector<named_value>& got, const std::vector<argument>& expected, tolerance tol,
                            std::ostream& os);

}  // namespace kiln::driver
