// Gathers, as ONNX Gather, GatherElements and GatherND. Negative indices count from the end of
// their dim; an index outside [-len, len) is an error at compute naming the index and the dim.
// Elements are copied as bytes, so every dtype is accepted as data.
#include "ops/gather.hpp"

#include "ops/indexing.hpp"

namespace kiln::ops {
shape gather::compute_shape(std::span<const shape> in) const {
    check_data_and_indices(in, 2);
    check_rank(in, 0, 1, true);
    const shape& data = in[0];
    std::size_t a = normalize_axis(axis, data.ndim());
    auto lens = lens_range(data, 0, a);
    lens.insert(lens.end(), in[1].lens().begin(), in[1].lens().end());
    auto after = lens_range(data, a + 1, data.ndim());
    lens.insert(lens.end(), after.begin(), after.end());
    return {data.type(), lens};
}

argument gather::compute(const shape& out, std::span<const argument> args) const {
    const shape& ds = args[0].get_shape();
    const auto& ilens = args[1].get_shape().lens();
    std::size_t a = normalize_axis(axis, ds.ndim());
    std::size_t q = ilens.size();
    auto indices = to_int64s(args[1]);
    argument r(out);
    std::vector<std::size_t> src(ds.ndim());
    std::size_t k = 0;
    for_each_index(out.lens(), [&](std::span<const std::size_t> o) {
        std::size_t pos = linear_index(ilens, o.subspan(a, q));
        std::copy(o.begin(), o.begin() + a, src.begin());
        src[a] = wrap_index(indices[pos], ds.lens()[a], a, pos);
        std::copy(o.begin() + a + q, o.end(), src.begin() + a + 1);
        copy_element(r, k++, args[0], ds.index(src));
    });
    return r;
}
KILN_REGISTER_OP(gather)

shape gather_elements::compute_shape(std::span<const shape> in) const {
    check_data_and_indices(in, 2);
    check_rank(in, 0, 1, true);
    std::size_t a = normalize_axis(axis, in[0].ndim());
    check_indices_within_data(in, a);
    return {in[0].type(), in[1].lens()};
}

argument gather_elements::compute(const shape& out, std::span<const argument> args) const {
    const shape& ds = args[0].get_shape();
    std::size_t a = normalize_axis(axis, ds.ndim());
    auto indices = to_int64s(args[1]);
    argument r(out);
    std::vector<std::size_t> src(ds.ndim());
    std::size_t k = 0;
    for_each_index(out.lens(), [&](std::span<const std::size_t> o) {
        std::copy(o.begin(), o.end(), src.begin());
        src[a] = wrap_index(indices[k], ds.lens()[a], a, k);
        copy_element(r, k++, args[0], ds.index(src));
    });
    return r;
}
KILN_REGISTER_OP(gather_elements)

shape gathernd::compute_shape(std::span<const shape> in) const {
    check_data_and_indices(in, 2);
    check_rank(in, 0, 1, true);
    check_rank(in, 1, 1, true);
    const auto& dl = in[0].lens();
    const auto& il = in[1].lens();
    auto b = static_cast<std::size_t>(batch_dims);
    if (batch_dims < 0 || b >= std::min(dl.size(), il.size()))
        fail("batch_dims=", batch_dims, "; expected 0 to ", std::min(dl.size(), il.size()) - 1,
             " (less than the rank of data and of indices)");
    for (std::size_t d = 0; d < b; ++d)
        if (dl[d] != il[d]) fail("batch dim ", d, " is ", dl[d], " in data but ", il[d], " in indices");
    std::size_t m = il.back();
    if (m < 1 || m > dl.size() - b)
        fail("the last indices dim is ", m, "; expected 1 to ", dl.size() - b, " (data rank minus batch_dims)");
    auto lens = lens_range(in[1], 0, il.size() - 1);
    auto rest = lens_range(in[0], b + m, dl.size());
    lens.insert(lens.end(), rest.begin(), rest.end());
    return {in[0].type(), lens};
}

argument gathernd::compute(const shape& out, std::span<const argument> args) const {
    const shape& ds = args[0].get_shape();
    const auto& il = args[1].get_shape().lens();
    auto b = static_cast<std::size_t>(batch_dims);
    std::size_t q = il.size() - 1;  // dims that enumerate index tuples
    std::size_t m = il.back();
    auto indices = to_int64s(args[1]);
    argument r(out);
    std::vector<std::size_t> src(ds.ndim());
    std::size_t k = 0;
    for_each_index(out.lens(), [&](std::span<const std::size_t> o) {
        std::size_t tuple = linear_index(std::span(il).first(q), o.first(q)) * m;
        std::copy(o.begin(), o.begin() + b, src.begin());
        for (std::size_t j = 0; j < m; ++j)
            src[b + j] = wrap_index(indices[tuple + j], ds.lens()[b + j], b + j, tuple + j);
        std::copy(o.begin() + q, o.end(), src.begin() + b + m);
        copy_element(r, k++, args[0], ds.index(src));
    });
    return r;
}
KILN_REGISTER_OP(gathernd)

}  // namespace kiln::ops
