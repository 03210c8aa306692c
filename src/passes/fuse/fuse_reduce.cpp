#include "passes/fuse/fuse_reduce.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <unordered_set>

#include "core/reflect.hpp"
#include "passes/fuse/fusion_region.hpp"

namespace kiln {

namespace {

// What a reduction reduces: the rank of its input and its sorted, non-negative axes.
struct reduced {
    std::size_t rank = 0;
    std::vector<std::int64_t> axes;
    bool operator==(const reduced&) const = default;
};

std::optional<reduced> fusible_reduction(const instruction& ins) {
    if (!ins.get_operator().traits().reduction || ins.inputs().size() != 1) return std::nullopt;
    value attrs = ins.get_operator().attributes();
    if (!attrs.contains("axes")) return std::nullopt;
    const shape& in = ins.inputs().front()->get_shape();
    if (in.is_tuple() || in.dynamic() || is_packed(in.type()) || !ins.get_shape().standard()) return std::nullopt;
    reduced r{in.ndim(), {}};
    from_value(attrs.at("axes"), r.axes);
    if (r.axes.empty()) {
        if (attrs.contains("noop_with_empty_axes") && attrs.at("noop_with_empty_axes").as_bool()) return std::nullopt;
        r.axes.resize(r.rank);
        std::iota(r.axes.begin(), r.axes.end(), 0);
    }
    // A rank-0 input has no axis to reduce: the reduction is a pointwise copy, not a region root.
    if (r.axes.empty()) return std::nullopt;
    for (auto& a : r.axes) {
        if (a < 0) a += static_cast<std::int64_t>(r.rank);
        if (a < 0 || a >= static_cast<std::int64_t>(r.rank)) return std::nullopt;
    }
    std::sort(r.axes.begin(), r.axes.end());
    return r;
}

// Grows the region at `root`; its reductions all reduce `axes`, which the first one sets.
std::vector<instruction_ref> reduce_region(const region_grower& grower, instruction_ref root,
                                           std::optional<reduced>& axes) {
    axes = fusible_reduction(*root);
    auto can_join = [&](instruction_ref in) {
        if (is_fusible_pointwise(*in) || is_broadcast_view(*in)) return true;
        auto r = fusible_reduction(*in);
        if (!r || (axes && *axes != *r)) return false;
        axes = r;
        return true;
    };
    return grower.grow(root, can_join);
}

}  // namespace

void fuse_reduce::apply(program& p, module& m) const {
    m.remove_dead_code();   // see fusion_region.hpp
    region_grower grower(m);
    module_namer names(p, "fused_reduce");
    // Members of regions dropped for want of a reduction: a region rooted at one of them is a
    // subset of the dropped one, so it has none either (and trying it again would be quadratic).
    std::unordered_set<const instruction*> without_reduction;
    for (auto ins = m.end(); ins != m.begin();) {
        --ins;
        if (without_reduction.contains(&*ins) || (!is_fusible_pointwise(*ins) && !fusible_reduction(*ins))) continue;
        std::optional<reduced> axes;
        auto members = reduce_region(grower, ins, axes);
        if (!axes) {
            for (auto mem : members) without_reduction.insert(&*mem);
            continue;
        }
        auto op = make_op("fused_reduce", value_object{{"axes", to_value(axes->axes)}});
        grower.forget(members);
        ins = fuse_region(p, m, members, op, names);
    }
}

}  // namespace kiln
