// ScatterElements and ScatterND (scatter.hpp).
#include "ops/scatter.hpp"

#include <algorithm>

#include "ops/indexing.hpp"

namespace kiln::ops {
namespace {

enum class reduce_kind { none, add, mul, max, min };

reduce_kind parse_reduction(const std::string& r) {
    if (r == "none") return reduce_kind::none;
    if (r == "add") return reduce_kind::add;
    if (r == "mul") return reduce_kind::mul;
    if (r == "max") return reduce_kind::max;
    if (r == "min") return reduce_kind::min;
    fail("reduction='", r, "'; expected none, add, mul, max or min");
}

// Checks shared by both scatters: (data, indices, updates), updates of data's type, a known
// reduction that suits the type.
void check_scatter_inputs(std::span<const shape> in, const std::string& reduction) {
    check_data_and_indices(in, 3);
    if (in[2].type() != in[0].type())
        fail("input 2 (updates) is ", dtype_name(in[2].type()), " but input 0 (data) is ", dtype_name(in[0].type()),
             "; they must have the same type");
    if (parse_reduction(reduction) != reduce_kind::none)
        check_type(in, 0, numeric_type, "a numeric type for a reduction");
    check_rank(in, 0, 1, true);
}

// Combines update u into element d (both storage type T) in T's compute type.
template <class T>
T combine(reduce_kind k, T d, T u) {
    using C = compute_t<T>;
    if constexpr (std::is_same_v<C, bool>) {
        return u;  // bool data only takes reduction none (checked in compute_shape)
    } else {
        C a = cast<C>(d), b = cast<C>(u);
        switch (k) {
            case reduce_kind::add:
                return cast<T>(a + b);
            case reduce_kind::mul:
                return cast<T>(a * b);
            case reduce_kind::max:
                return cast<T>(std::max(a, b));
            case reduce_kind::min:
                return cast<T>(std::min(a, b));
            default:
                return u;
        }
    }
}

// Copies data into a standard output, then for every element of updates (row-major) combines it
// into the output element at dst_offset(update multi-index, update linear position).
template <class F>
argument scatter(const shape& out, std::span<const argument> args, reduce_kind k, F&& dst_offset) {
    argument r = args[0].copy();
    const shape& us = args[2].get_shape();
    visit_type(out.type(), [&](auto t) {
        using T = decltype(t);
        T* y = r.as<T>();
        const T* u = args[2].as<T>();
        std::size_t n = 0;
        for_each_index(us.lens(), [&](std::span<const std::size_t> idx) {
            T& d = y[dst_offset(idx, n++)];
            d = combine(k, d, u[us.index(idx)]);
        });
    });
    return r;
}

}  // namespace

shape scatter_elements::compute_shape(std::span<const shape> in) const {
    check_scatter_inputs(in, reduction);
    check_indices_within_data(in, normalize_axis(axis, in[0].ndim()));
    if (in[2].lens() != in[1].lens())
        fail("input 2 (updates) has lens ", lens_to_string(in[2].lens()), "; expected the indices' lens ",
             lens_to_string(in[1].lens()));
    return in[0].as_standard();
}

argument scatter_elements::compute(const shape& out, std::span<const argument> args) const {
    std::size_t a = normalize_axis(axis, out.ndim());
    auto indices = to_int64s(args[1]);
    std::vector<std::size_t> dst(out.ndim());
    return scatter(out, args, parse_reduction(reduction), [&](std::span<const std::size_t> idx, std::size_t n) {
        std::copy(idx.begin(), idx.end(), dst.begin());
        dst[a] = wrap_index(indices[n], out.lens()[a], a, n);
        return out.index(dst);
    });
}
KILN_REGISTER_OP(scatter_elements)

shape scatternd::compute_shape(std::span<const shape> in) const {
    check_scatter_inputs(in, reduction);
    check_rank(in, 1, 1, true);
    const auto& dl = in[0].lens();
    const auto& il = in[1].lens();
    std::size_t k = il.back();
    if (k < 1 || k > dl.size())
        fail("the last indices dim is ", k, "; expected 1 to ", dl.size(), " (the data rank)");
    auto want = lens_range(in[1], 0, il.size() - 1);
    auto rest = lens_range(in[0], k, dl.size());
    want.insert(want.end(), rest.begin(), rest.end());
    if (in[2].lens() != want)
        fail("input 2 (updates) has lens ", lens_to_string(in[2].lens()), "; expected ", lens_to_string(want),
             " (indices lens without the last, then data lens from dim ", k, ")");
    return in[0].as_standard();
}

argument scatternd::compute(const shape& out, std::span<const argument> args) const {
    const auto& il = args[1].get_shape().lens();
    std::size_t q = il.size() - 1;  // dims of updates that enumerate index tuples
    std::size_t k = il.back();
    auto indices = to_int64s(args[1]);
    std::vector<std::size_t> dst(out.ndim());
    return scatter(out, args, parse_reduction(reduction), [&](std::span<const std::size_t> idx, std::size_t) {
        std::size_t tuple = linear_index(std::span(il).first(q), idx.first(q)) * k;
        for (std::size_t j = 0; j < k; ++j) dst[j] = wrap_index(indices[tuple + j], out.lens()[j], j, tuple + j);
        std::copy(idx.begin() + q, idx.end(), dst.begin() + k);
        return out.index(dst);
    });
}
KILN_REGISTER_OP(scatternd)

}  // namespace kiln::ops
