// Ops that make new tensors from values or shapes: range (ONNX Range), nonzero (ONNX NonZero),
// one_hot (ONNX OneHot, declared in one_hot.hpp) and shape_of (ONNX Shape, declared in generate.hpp).
// range and nonzero are data-dependent: their output length is known only at compute, so
// compute_shape gives a dynamic dim and compute returns the actual lens.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/limits.hpp"
#include "ops/generate.hpp"
#include "ops/indexing.hpp"
#include "ops/one_hot.hpp"

namespace kiln::ops {
namespace {

std::size_t range_count(double start, double limit, double delta) {
    double n = std::ceil((limit - start) / delta);
    if (std::isnan(n) || n >= 0x1p63) fail("range(", start, ", ", limit, ", ", delta, ") would have ", n, " elements");
    return n > 0 ? static_cast<std::size_t>(n) : 0;
}

std::size_t range_count(std::int64_t start, std::int64_t limit, std::int64_t delta) {
    __int128 span = static_cast<__int128>(limit) - start;   // int64 could overflow (INT64_MIN to INT64_MAX)
    if ((span > 0) != (delta > 0) || span == 0) return 0;
    return static_cast<std::size_t>((span + delta + (delta > 0 ? -1 : 1)) / delta);  // ceil of span / delta
}

template <class V>
argument range_fill(dtype t, V start, V limit, V delta) {
    std::size_t n = range::length(start, limit, delta);
    shape s(t, std::vector<std::size_t>{n});
    check_tensor_bytes(s);   // before the values are made: the count comes from the data
    std::vector<V> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = start + static_cast<V>(i) * delta;
    if constexpr (std::is_same_v<V, double>)
        return from_doubles(s, values);
    else
        return from_int64s(s, values);
}

}  // namespace

shape range::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 3);
    check_static(in);
    check_same_type(in);
    check_type(in, 0, numeric_type, "a numeric type");
    for (std::size_t i = 0; i < 3; ++i) check_rank(in, i, 0);
    return {in[0].type(), std::vector<dynamic_dim>{{.min = 0, .max = unbounded_dim}}};
}

argument range::compute(const shape& out, std::span<const argument> args) const {
    if (is_float(out.type()))
        return range_fill(out.type(), to_doubles(args[0])[0], to_doubles(args[1])[0], to_doubles(args[2])[0]);
    return range_fill(out.type(), to_int64s(args[0])[0], to_int64s(args[1])[0], to_int64s(args[2])[0]);
}

std::size_t range::length(double start, double limit, double delta) {
    if (delta == 0) fail("delta is 0; expected a nonzero step");
    return range_count(start, limit, delta);
}

std::size_t range::length(std::int64_t start, std::int64_t limit, std::int64_t delta) {
    if (delta == 0) fail("delta is 0; expected a nonzero step");
    return range_count(start, limit, delta);
}
KILN_REGISTER_OP(range)

shape nonzero::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    check_static(in);
    std::size_t rank = in[0].ndim();
    return {dtype::int64, std::vector<dynamic_dim>{{.min = rank, .max = rank}, {.min = 0, .max = in[0].elements()}}};
}

argument nonzero::compute(const shape&, std::span<const argument> args) const {
    const shape& xs = args[0].get_shape();
    std::vector<std::vector<std::size_t>> found;
    visit_type(xs.type(), [&](auto t) {
        using T = decltype(t);
        const T* x = args[0].as<T>();
        for_each_index(xs.lens(), [&](std::span<const std::size_t> idx) {
            if (cast<bool>(x[xs.index(idx)])) found.emplace_back(idx.begin(), idx.end());
        });
    });
    std::size_t rank = xs.ndim();
    argument r(shape(dtype::int64, std::vector<std::size_t>{rank, found.size()}));
    auto* y = r.as<std::int64_t>();
    for (std::size_t j = 0; j < found.size(); ++j)
        for (std::size_t d = 0; d < rank; ++d) y[d * found.size() + j] = static_cast<std::int64_t>(found[j][d]);
    return r;
}
KILN_REGISTER_OP(nonzero)

shape shape_of::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    if (in[0].is_tuple()) fail("input 0 is a tuple");
    auto [s, e] = bounds(in[0].ndim());
    return {dtype::int64, std::vector<std::size_t>{e - s}};
}

argument shape_of::compute(const shape& out, std::span<const argument> args) const {
    const auto& lens = args[0].get_shape().lens();
    auto [s, e] = bounds(lens.size());
    std::vector<std::int64_t> values(lens.begin() + static_cast<std::ptrdiff_t>(s),
                                     lens.begin() + static_cast<std::ptrdiff_t>(e));
    return from_int64s(out, values);
}
KILN_REGISTER_OP(shape_of)

shape one_hot::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 2);
    check_static(in);
    check_type(in, 0, numeric_type, "a numeric type");
    check_rank(in, 1, 1);
    if (in[1].lens()[0] != 2) fail("input 1 (values) has ", in[1].lens()[0], " elements; expected 2 (off, on)");
    if (depth < 1) fail("depth=", depth, "; expected a positive depth");
    auto lens = in[0].lens();
    std::size_t a = normalize_axis(axis, lens.size() + 1);
    lens.insert(lens.begin() + static_cast<std::ptrdiff_t>(a), static_cast<std::size_t>(depth));
    return {in[1].type(), lens};
}

argument one_hot::compute(const shape& out, std::span<const argument> args) const {
    std::size_t a = normalize_axis(axis, out.ndim());
    auto indices = to_int64s(args[0]);
    const auto& il = args[0].get_shape().lens();
    const shape& vs = args[1].get_shape();
    argument r(out);
    std::vector<std::size_t> at(il.size());
    std::size_t k = 0;
    for_each_index(out.lens(), [&](std::span<const std::size_t> o) {
        std::copy(o.begin(), o.begin() + a, at.begin());
        std::copy(o.begin() + a + 1, o.end(), at.begin() + a);
        std::int64_t i = indices[linear_index(il, at)];
        bool on = (i < 0 ? i + depth : i) == static_cast<std::int64_t>(o[a]);
        copy_element(r, k++, args[1], vs.index(on ? 1 : 0));
    });
    return r;
}
KILN_REGISTER_OP(one_hot)

}  // namespace kiln::ops
