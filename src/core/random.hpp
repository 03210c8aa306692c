// Seeded random inputs, the same on every machine: the driver's default inputs, pass checks and
// verify all draw from here, so a printed seed reproduces a run anywhere.
#pragma once
#include <cstdint>
#include <string>

#include "core/eval.hpp"

namespace kiln {

// Floats uniform in [-1, 1]; bools 0/1; integers uniform in [-4, 4] (signed) or [0, 8], small so
// that integer inputs used as indices or counts are mostly valid. `index` picks an independent
// stream per input, so filling one input does not change the others.
argument random_argument(const shape& s, std::uint64_t seed, std::size_t index = 0);
// How random_argument fills a type: "uniform in [-1, 1]", ...
std::string random_description(dtype t);
// One random argument per parameter of `m` (which must have static shapes).
param_map random_inputs(const module& m, std::uint64_t seed);

}  // namespace kiln
