// recognize_patterns: finds the decomposed forms that ONNX exporters emit for layer norm, RMS
// norm, GELU, SiLU, hard swish, softmax and scaled dot-product attention, and replaces each by the single op
// that targets implement directly (or expand back). See recognize_rules.hpp for the rule families.
#pragma once
#include <string_view>

#include "core/module.hpp"

namespace kiln {

struct recognize_patterns {
    static constexpr std::string_view name = "recognize_patterns";
    void apply(module& m) const;
};

}  // namespace kiln
