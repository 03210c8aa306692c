// Helpers of the cpu target tests: programs in text IR compiled for cpu and ref and compared on
// random inputs, and the compile report's placement lines.
#pragma once
#include <string>
#include <vector>

#include "core/argument.hpp"
#include "core/module.hpp"
#include "core/target.hpp"

namespace kiln::cpu_test {

// Every element within 1e-4 + 1e-4 |want|.
void expect_close(const argument& got, const argument& want);
// Compiles `text` for cpu (-O) and ref (no passes) and compares on the same random inputs (seed 0;
// column_major: 4-byte inputs of rank > 1 given in column-major layout); returns cpu's placement.
std::vector<std::string> check_against_ref(const std::string& text, bool column_major = false);
// The same, returning cpu's whole compile report.
executable_stats check_stats_against_ref(const std::string& text, bool column_major = false);
// `text` with every float_type made `type` (half_type, bf16_type), compared within that type's
// tolerance on seeds 0 and 1; returns cpu's placement.
std::vector<std::string> check_low_against_ref(std::string text, const std::string& type);
// Random values for every parameter of `p`'s main (random_argument with `seed`, by position).
param_map random_inputs(const program& p, std::uint64_t seed);
// Whether a placement line contains `what`.
bool placed(const std::vector<std::string>& placement, const std::string& what);
// A literal of `n` values in [-1, 1] (seeded), in text IR.
std::string literal_text(std::size_t n, unsigned seed);

}  // namespace kiln::cpu_test
