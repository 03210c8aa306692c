// A deliberately wrong pass, for testing the tools that find wrong passes and kernels
// (kiln verify --bisect): with KILN_DEBUG_REPLACE_OP=A:B in the environment, the ref target's
// -O pipeline ends by turning every op A into op B, fused regions' bodies included (same inputs;
// B must compute the same shape).
// Documented in docs/driver.md; never set it outside such tests.
#pragma once
#include <optional>

#include "core/pass.hpp"

namespace kiln {

// The pass, when KILN_DEBUG_REPLACE_OP is set (an error names a malformed value).
std::optional<pass> debug_replace_op_pass();

}  // namespace kiln
