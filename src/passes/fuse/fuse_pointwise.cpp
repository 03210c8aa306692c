#include "passes/fuse/fuse_pointwise.hpp"

#include "passes/fuse/fusion_region.hpp"

namespace kiln {

void fuse_pointwise::apply(program& p, module& m) const {
    m.remove_dead_code();   // see fusion_region.hpp
    region_grower grower(m);
    module_namer names(p, "pointwise");
    const operation op = make_op("pointwise");
    auto can_join = [](instruction_ref in) { return is_fusible_pointwise(*in); };
    auto can_copy = [](instruction_ref in) { return worth_duplicating(*in); };
    // From the last instruction back, so a region starts at its latest op and takes its producers.
    for (auto ins = m.end(); ins != m.begin();) {
        --ins;
        if (!is_fusible_pointwise(*ins)) continue;
        std::vector<instruction_ref> copies;
        auto members = grower.grow(ins, can_join, can_copy, &copies);
        grower.forget(members);
        ins = fuse_region(p, m, members, op, names, copies);
        // A copied producer whose last user was just fused is gone (its users, all pointwise, all
        // copy it); it comes before `ins`, so the walk back never meets it.
        for (auto c : copies)
            if (c->outputs().empty()) {
                grower.forget({c});
                m.remove_instruction(c);
            }
    }
}

}  // namespace kiln
