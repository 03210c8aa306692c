#include "ops/reduce_util.hpp"

#include <algorithm>

namespace kiln::ops {

std::vector<dynamic_dim> reduced_dims(const shape& s, std::span<const std::size_t> axes, bool keepdims) {
    auto dims = s.dims();
    std::vector<dynamic_dim> out;
    for (std::size_t d = 0; d < dims.size(); ++d) {
        bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
        if (!reduced) out.push_back(dims[d]);
        else if (keepdims) out.push_back({1, 1, {}, {}});
    }
    return out;
}

element_groups group_offsets(const shape& s, std::span<const std::size_t> axes) {
    std::vector<std::size_t> outer = s.lens(), inner(s.ndim(), 1);
    for (auto a : axes) {
        inner[a] = outer[a];
        outer[a] = 1;
    }
    // shape::index is linear in the multi-index, so every offset splits into base + rel.
    element_groups g;
    for_each_index(outer, [&](std::span<const std::size_t> idx) { g.bases.push_back(s.index(idx)); });
    for_each_index(inner, [&](std::span<const std::size_t> idx) { g.rel.push_back(s.index(idx)); });
    return g;
}

std::vector<std::size_t> trailing_axes(std::size_t first, std::size_t ndim) {
    std::vector<std::size_t> axes;
    for (std::size_t d = first; d < ndim; ++d) axes.push_back(d);
    return axes;
}

void check_broadcasts_to(std::span<const shape> in, std::size_t i, std::span<const std::size_t> lens,
                         const char* what) {
    const auto& l = in[i].lens();
    bool ok = l.size() <= lens.size();
    for (std::size_t d = 0; ok && d < l.size(); ++d) {
        std::size_t target = lens[lens.size() - l.size() + d];
        ok = l[d] == target || l[d] == 1;
    }
    if (!ok)
        fail("input ", i, " (", what, ") has lens ", lens_to_string(l), "; expected lens that broadcast to ",
             lens_to_string(lens));
}

shape along_axis_shape(std::span<const shape> in, std::int64_t axis, bool (*accepts)(dtype), const char* what) {
    check_input_count(in, 1);
    check_type(in, 0, accepts, what);
    normalize_axis(axis, in[0].ndim());
    return {in[0].type(), in[0].dims()};
}

}  // namespace kiln::ops
