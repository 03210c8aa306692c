#include "passes/fuse/fuse_pointwise.hpp"

#include "passes/fuse/fusion_region.hpp"

namespace kiln {

void fuse_pointwise::apply(program& p, module& m) const {
    m.remove_dead_code();   // see fusion_region.hpp
    region_grower grower(m);
    module_namer names(p, "pointwise");
    const operation op = make_op("pointwise");
    auto can_join = [](instruction_ref in) { return is_fusible_pointwise(*in); };
    // From the last instruction back, so a region starts at its latest op and takes its producers.
    for (auto ins = m.end(); ins != m.begin();) {
        --ins;
        if (!is_fusible_pointwise(*ins)) continue;
        auto members = grower.grow(ins, can_join);
        grower.forget(members);
        ins = fuse_region(p, m, members, op, names);
    }
}

}  // namespace kiln
