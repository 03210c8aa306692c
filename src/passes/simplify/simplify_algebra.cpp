#include "passes/simplify/simplify_algebra.hpp"

#include "passes/simplify/simplify_rules.hpp"

namespace kiln {

void simplify_algebra::apply(module& m) const {
    static const std::vector<rule> rules = [] {
        std::vector<rule> all = arith_rules();
        for (auto& family : {convert_rules(), conv_gemm_rules()}) all.insert(all.end(), family.begin(), family.end());
        return all;
    }();
    apply_rules(m, rules);
}

}  // namespace kiln
