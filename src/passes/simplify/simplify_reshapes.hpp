// simplify_reshapes: view chains collapse (transposes compose and cancel, reshape / flatten /
// squeeze / unsqueeze chains become one reshape or none), views of literals become literals,
// transposes move through pointwise ops where a pair then cancels, explicit broadcasts into
// pointwise ops go, and contiguous copies go wherever the reader accepts the strided value.
// Program outputs keep their layout: a contiguous feeding @return stays. Exact: only element
// positions change, never values. Rules live in rules_reshape.cpp and rules_layout.cpp.
#pragma once
#include <string_view>

#include "core/module.hpp"

namespace kiln {

struct simplify_reshapes {
    static constexpr std::string_view name = "simplify_reshapes";
    void apply(module& m) const;
};

}  // namespace kiln
