#include "passes/analysis/kernel_count.hpp"

namespace kiln {

std::size_t kernel_count(const module& m) {
    std::size_t n = 0;
    for (const auto& ins : m) {
        if (ins.get_operator().traits().builtin) continue;
        std::vector<shape> in;
        for (auto i : ins.inputs()) in.push_back(i->get_shape());
        if (ins.get_operator().output_alias(in) >= 0) continue;
        ++n;
    }
    return n;
}

}  // namespace kiln
