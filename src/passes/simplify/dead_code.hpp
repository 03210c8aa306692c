// eliminate_dead_code: removes instructions whose results nobody uses and that have no side
// effects (the pass manager also does this after every pass; a pipeline names it where a reader
// should see it).
#pragma once
#include <string_view>

#include "core/module.hpp"

namespace kiln {

struct eliminate_dead_code {
    static constexpr std::string_view name = "eliminate_dead_code";
    void apply(module& m) const { m.remove_dead_code(); }
};

}  // namespace kiln
