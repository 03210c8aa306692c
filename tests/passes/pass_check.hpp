// Checks that passes preserve results: evaluate on ref before and after, with seeded random
// inputs (the seed is in every failure message).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/pass.hpp"
#include "tools/program_tools.hpp"

namespace kiln {

// sqrt(sum (a - b)^2 / sum b^2), over elements where not both are NaN; infinity when NaNs differ.
double relative_l2(const argument& a, const argument& b);
// Runs the passes (validating after each) on `text`'s program and returns it; expects the result
// to agree with the program before the passes on random inputs (relative L2 within tol for float
// outputs, exact for the rest), for each of `seeds` seeds.
program run_and_check(std::string_view text, const std::vector<pass>& pipeline, double tol = 1e-5,
                      int seeds = 2);
// The same for a program built in code.
void expect_same_results(const program& before, const program& after, std::uint64_t seed, double tol = 1e-5);
// Non-builtin instructions of main, by op name (pass tests count what a pass left).
std::size_t count_ops(const program& p, std::string_view op_name);
std::size_t count_instructions(const program& p);

}  // namespace kiln
