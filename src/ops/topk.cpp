// topk (ops/topk.hpp): a stable sort of each row along the axis, whose first k elements are kept.
#include "ops/topk.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kiln::ops {
namespace {

// a > b with NaN above every number (as numpy sorts), so that sorting has a strict weak order.
template <class C>
bool greater(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(a)) return !std::isnan(b);
        if (std::isnan(b)) return false;
    }
    return a > b;
}

// Sorts the elements of one row along the axis and writes the first k.
template <class T>
void select_row(const topk& op, const argument& x, std::span<const std::size_t> row, std::size_t a,
                const argument& values, const argument& indices) {
    using C = compute_t<T>;
    const shape& xs = x.get_shape();
    std::vector<std::size_t> idx(row.begin(), row.end());
    std::vector<C> elems(xs.lens()[a]);
    for (std::size_t j = 0; j < elems.size(); ++j) {
        idx[a] = j;
        elems[j] = cast<C>(x.as<T>()[xs.index(idx)]);
    }
    std::vector<std::size_t> order(elems.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) {
        return op.largest ? greater(elems[i], elems[j]) : greater(elems[j], elems[i]);
    });
    const shape& vs = values.get_shape();
    for (std::size_t j = 0; j < static_cast<std::size_t>(op.k); ++j) {
        idx[a] = j;
        std::size_t off = vs.index(idx);
        values.as<T>()[off] = cast<T>(elems[order[j]]);
        indices.as<std::int64_t>()[off] = static_cast<std::int64_t>(order[j]);
    }
}

}  // namespace

shape topk::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    check_static(in);
    check_type(in, 0, numeric_type, "a numeric type");
    check_rank(in, 0, 1, true);
    std::size_t a = normalize_axis(axis, in[0].ndim());
    std::size_t len = in[0].lens()[a];
    if (k < 0) fail("k=", k, "; expected k >= 0");
    if (static_cast<std::size_t>(k) > len) fail("k=", k, " is larger than dim ", a, " of size ", len);
    auto lens = in[0].lens();
    lens[a] = static_cast<std::size_t>(k);
    return shape({shape(in[0].type(), lens), shape(dtype::int64, lens)});
}

argument topk::compute(const shape& out, std::span<const argument> args) const {
    const shape& xs = args[0].get_shape();
    std::size_t a = normalize_axis(axis, xs.ndim());
    argument values(out.sub_shapes()[0]);
    argument indices(out.sub_shapes()[1]);
    auto rows = xs.lens();
    rows[a] = 1;
    visit_type(xs.type(), [&](auto t) {
        using T = decltype(t);
        for_each_index(rows, [&](std::span<const std::size_t> row) { select_row<T>(*this, args[0], row, a, values, indices); });
    });
    return argument(std::vector<argument>{values, indices});
}
KILN_REGISTER_OP(topk)

}  // namespace kiln::ops
