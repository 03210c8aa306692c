// eliminate_common_subexpression: instructions with the same operation, the same inputs and the
// same submodules compute the same value, so the later one is replaced by the earlier one.
// Literals with the same shape and values are merged the same way (exporters repeat constants).
// Assumes ops are pure unless they declare side effects; those are never merged.
#pragma once
#include <string_view>

#include "core/module.hpp"

namespace kiln {

struct eliminate_common_subexpression {
    static constexpr std::string_view name = "eliminate_common_subexpression";
    void apply(module& m) const;
};

}  // namespace kiln
