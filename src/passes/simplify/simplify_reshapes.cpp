#include "passes/simplify/simplify_reshapes.hpp"

#include "passes/simplify/simplify_rules.hpp"

namespace kiln {

void simplify_reshapes::apply(module& m) const {
    static const std::vector<rule> rules = [] {
        std::vector<rule> all = reshape_rules();
        auto layout = layout_rules();
        all.insert(all.end(), layout.begin(), layout.end());
        return all;
    }();
    apply_rules(m, rules);
}

}  // namespace kiln
