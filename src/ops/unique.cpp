// unique and compress: selections whose output length depends on the input values.
// unique, as ONNX Unique with axis given (ONNX's flattened form is unique of the input
// reshaped to 1-D): the distinct slices along axis, as a tuple (values, indices of each first
// occurrence, inverse indices giving each input slice's place in values, counts). sorted orders
// the slices ascending (lexicographically, NaN above numbers and equal to NaN); otherwise they
// keep the order of first occurrence.
// compress, as ONNX Compress with axis given: the slices along axis where the 1-D bool
// condition is true; a condition shorter than the dim drops the slices past its end.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/compress.hpp"
#include "ops/indexing.hpp"

namespace kiln::ops {
namespace {

// Copies slice `from` along axis a of src into slice `to` of dst (same lens off the axis).
void copy_slice(const argument& dst, std::size_t to, const argument& src, std::size_t from, std::size_t a) {
    const shape& ds = dst.get_shape();
    const shape& ss = src.get_shape();
    auto lens = ss.lens();
    lens[a] = 1;
    std::vector<std::size_t> si, di;
    for_each_index(lens, [&](std::span<const std::size_t> idx) {
        si.assign(idx.begin(), idx.end());
        di = si;
        si[a] = from;
        di[a] = to;
        copy_element(dst, ds.index(di), src, ss.index(si));
    });
}

// Three-way comparison with NaN above every number and equal to itself.
template <class C>
int compare(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) - std::isnan(b);
    }
    return a < b ? -1 : b < a ? 1 : 0;
}

struct unique {
    std::int64_t axis = 0;
    bool sorted = true;
    static constexpr std::string_view name = "unique";
    auto attributes() { return fields(field("axis", axis), field("sorted", sorted)); }
    op_traits traits() const { return {.data_dependent = true}; }

    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1);
        check_static(in);
        check_rank(in, 0, 1, true);
        std::size_t a = normalize_axis(axis, in[0].ndim());
        std::size_t len = in[0].lens()[a];
        auto dims = in[0].dims();
        dims[a] = {.min = std::min<std::size_t>(len, 1), .max = len};
        dynamic_dim found{.min = dims[a].min, .max = len};
        return shape({shape(in[0].type(), dims), shape(dtype::int64, std::vector<dynamic_dim>{found}),
                      shape(dtype::int64, std::vector<std::size_t>{len}),
                      shape(dtype::int64, std::vector<dynamic_dim>{found})});
    }

    // Each slice's elements in row-major order, in compute type.
    template <class T>
    static std::vector<std::vector<compute_t<T>>> slices(const argument& x, std::size_t a) {
        const shape& xs = x.get_shape();
        std::vector<std::vector<compute_t<T>>> out(xs.lens()[a]);
        for_each_index(xs.lens(), [&](std::span<const std::size_t> idx) {
            out[idx[a]].push_back(cast<compute_t<T>>(x.as<T>()[xs.index(idx)]));
        });
        return out;
    }

    // Groups of equal slices, each listed by its slice positions in increasing order, the groups
    // ordered as the output lists them.
    template <class C>
    std::vector<std::vector<std::size_t>> groups(const std::vector<std::vector<C>>& keys) const {
        auto less = [&](std::size_t i, std::size_t j) {
            for (std::size_t k = 0; k < keys[i].size(); ++k)
                if (int c = compare(keys[i][k], keys[j][k])) return c < 0;
            return false;
        };
        std::vector<std::size_t> order(keys.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), less);
        std::vector<std::vector<std::size_t>> gs;
        for (std::size_t k = 0; k < order.size(); ++k) {
            if (k == 0 || less(order[k - 1], order[k])) gs.emplace_back();
            gs.back().push_back(order[k]);
        }
        if (!sorted) std::sort(gs.begin(), gs.end(), [](const auto& g, const auto& h) { return g[0] < h[0]; });
        return gs;
    }

    argument compute(const shape&, std::span<const argument> args) const {
        const shape& xs = args[0].get_shape();
        std::size_t a = normalize_axis(axis, xs.ndim());
        std::vector<std::vector<std::size_t>> gs;
        visit_type(xs.type(), [&](auto t) { gs = groups(slices<decltype(t)>(args[0], a)); });
        auto lens = xs.lens();
        lens[a] = gs.size();
        argument values(shape(xs.type(), lens));
        std::vector<std::int64_t> first, inverse(xs.lens()[a]), counts;
        for (std::size_t g = 0; g < gs.size(); ++g) {
            copy_slice(values, g, args[0], gs[g][0], a);
            first.push_back(static_cast<std::int64_t>(gs[g][0]));
            counts.push_back(static_cast<std::int64_t>(gs[g].size()));
            for (std::size_t i : gs[g]) inverse[i] = static_cast<std::int64_t>(g);
        }
        auto ints = [](const std::vector<std::int64_t>& v) {
            return from_int64s(shape(dtype::int64, std::vector<std::size_t>{v.size()}), v);
        };
        return argument(std::vector<argument>{values, ints(first), ints(inverse), ints(counts)});
    }
};
KILN_REGISTER_OP(unique)

}  // namespace

shape compress::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 2);
    check_static(in);
    check_type(in, 1, bool_type, "bool (the condition)");
    check_rank(in, 0, 1, true);
    check_rank(in, 1, 1);
    std::size_t a = normalize_axis(axis, in[0].ndim());
    std::size_t len = in[0].lens()[a];
    if (in[1].lens()[0] > len)
        fail("the condition has ", in[1].lens()[0], " values but dim ", a, " has ", len, "; expected at most ",
             len);
    auto dims = in[0].dims();
    dims[a] = {.min = 0, .max = in[1].lens()[0]};
    return {in[0].type(), dims};
}

argument compress::compute(const shape&, std::span<const argument> args) const {
    std::size_t a = normalize_axis(axis, args[0].get_shape().ndim());
    const shape& cs = args[1].get_shape();
    std::vector<std::size_t> kept;
    for (std::size_t i = 0; i < cs.lens()[0]; ++i)
        if (args[1].as<bool>()[cs.index(i)]) kept.push_back(i);
    auto lens = args[0].get_shape().lens();
    lens[a] = kept.size();
    argument y(shape(args[0].get_shape().type(), lens));
    for (std::size_t k = 0; k < kept.size(); ++k) copy_slice(y, k, args[0], kept[k], a);
    return y;
}
KILN_REGISTER_OP(compress)

}  // namespace kiln::ops
