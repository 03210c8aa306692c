// Shape ops that relabel elements without moving them: each returns a view of its input (new
// lens and strides, maybe an element offset) and says so with output_alias. reshape and flatten of
// a strided input (view_shape says when) and negative-step slices cannot always be expressed as
// strides; they copy then.
#include "ops/views.hpp"

#include <algorithm>
#include <optional>

#include "ops/movement.hpp"

namespace kiln::ops {
namespace {

// x's elements (row-major order) under new lens, as a view where strides can express it: x's
// dims, length-1 dims left out, are matched with the new ones group by group (each group the
// fewest consecutive dims of equal element count on both sides); a group of several of x's dims
// merges only where they are contiguous with each other (stride[i] = stride[i+1] * len[i+1]),
// and its new dims split the innermost stride. Standard strides for a standard x; none when a
// group is not contiguous (a transpose merged across its permuted dims) or x is dynamic.
std::optional<shape> view_shape(const shape& x, const std::vector<std::size_t>& lens) {
    if (x.dynamic() || !x.is_tensor()) return std::nullopt;
    if (x.standard() || x.elements() == 0) return shape(x.type(), lens);
    std::vector<std::size_t> olens, ostrides;
    for (std::size_t d = 0; d < x.ndim(); ++d)
        if (x.lens()[d] != 1) olens.push_back(x.lens()[d]), ostrides.push_back(x.strides()[d]);
    std::vector<std::size_t> strides(lens.size(), 1);
    std::size_t oi = 0, ni = 0;
    while (oi < olens.size() && ni < lens.size()) {
        std::size_t oj = oi + 1, nj = ni + 1, op = olens[oi], np = lens[ni];
        while (op != np) {
            if (np < op) np *= lens[nj++];
            else op *= olens[oj++];
        }
        for (std::size_t k = oi; k + 1 < oj; ++k)
            if (ostrides[k] != ostrides[k + 1] * olens[k + 1]) return std::nullopt;
        strides[nj - 1] = ostrides[oj - 1];
        for (std::size_t k = nj - 1; k > ni; --k) strides[k - 1] = strides[k] * lens[k];
        oi = oj, ni = nj;
    }
    shape r(x.type(), lens, strides);   // dims past the last group have length 1: any stride
    return r.standard() ? shape(x.type(), lens) : r;
}

// Output 0 of reshape/flatten: a view of x where view_shape finds strides, else a copy.
int alias_if_viewable(std::span<const shape> in, const shape& out) {
    return !in.empty() && view_shape(in[0], out.lens()) ? 0 : -1;
}

// Reshape/flatten's compute: strides from the input as it is (a target may hand it another
// layout than compute_shape saw), else a standard copy.
argument relabel(const shape& out, const argument& x) {
    if (auto v = view_shape(x.get_shape(), out.lens())) return x.view(*v);
    return x.copy().view(out.as_standard());
}

// x under new lens: a view's strides where possible, else standard (what the copy will be).
shape relabeled_shape(const shape& x, std::vector<std::size_t> lens) {
    if (auto v = view_shape(x, lens)) return *v;
    return {x.type(), std::move(lens)};
}

}  // namespace

int reshape::output_alias(std::span<const shape> in) const { return alias_if_viewable(in, compute_shape(in)); }

shape reshape::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    const shape& x = in[0];
    std::vector<std::size_t> lens;
    std::size_t infer = dims.size();
    bool has_zero = false;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        std::int64_t d = dims[i];
        if (d < -1) fail("dims[", i, "]=", d, " is negative; expected -1, 0 or a size");
        if (d == -1) {
            if (infer != dims.size()) fail("dims has more than one -1 (at ", infer, " and ", i, ")");
            infer = i;
            lens.push_back(1);
        } else if (d == 0 && !allowzero) {
            if (i >= x.ndim())
                fail("dims[", i, "]=0 copies input dim ", i, ", but input 0 has ", x.ndim(), " dims");
            lens.push_back(x.lens()[i]);
        } else {
            has_zero = has_zero || d == 0;
            lens.push_back(static_cast<std::size_t>(d));
        }
    }
    if (infer != dims.size()) {
        if (has_zero) fail("dims has both -1 and a 0 size (allowzero); the -1 cannot be inferred");
        std::size_t known = elements_of(lens);
        if (known == 0) fail("cannot infer the -1 in dims: the other dims have 0 elements");
        if (x.elements() % known != 0)
            fail("cannot infer the -1 in dims: ", x.elements(), " elements of input 0 (", to_string(x),
                 ") are not a multiple of ", known);
        lens[infer] = x.elements() / known;
    }
    if (elements_of(lens) != x.elements())
        fail("dims give ", lens_to_string(lens), " = ", elements_of(lens), " elements, but input 0 (", to_string(x),
             ") has ", x.elements());
    return relabeled_shape(x, std::move(lens));
}

argument reshape::compute(const shape& out, std::span<const argument> args) const { return relabel(out, args[0]); }
KILN_REGISTER_OP(reshape)

int flatten::output_alias(std::span<const shape> in) const { return alias_if_viewable(in, compute_shape(in)); }

shape flatten::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    const auto& lens = in[0].lens();
    // axis may equal the rank (every dim becomes a row), unlike most axis attributes.
    auto r = static_cast<std::int64_t>(lens.size());
    if (axis < -r || axis > r)
        fail("axis=", axis, " is out of range for ", r, " dims (valid: ", -r, " to ", r, ")");
    auto a = static_cast<std::size_t>(axis < 0 ? axis + r : axis);
    std::size_t rows = elements_of(std::span(lens).first(a));
    std::size_t cols = elements_of(std::span(lens).subspan(a));
    return relabeled_shape(in[0], {rows, cols});
}

argument flatten::compute(const shape& out, std::span<const argument> args) const { return relabel(out, args[0]); }
KILN_REGISTER_OP(flatten)

shape transpose::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    const shape& x = in[0];
    std::size_t n = x.ndim();
    std::vector<std::size_t> perm(n);
    for (std::size_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
    if (!permutation.empty()) {
        if (permutation.size() != n)
            fail("permutation has ", permutation.size(), " entries; input 0 has ", n, " dims");
        std::vector<bool> seen(n, false);
        for (std::size_t i = 0; i < n; ++i) {
            std::int64_t p = permutation[i];
            if (p < 0 || p >= static_cast<std::int64_t>(n) || seen[p])
                fail("permutation ", ints_to_string(permutation), " is not a permutation of 0..", n - 1);
            seen[p] = true;
            perm[i] = static_cast<std::size_t>(p);
        }
    }
    std::vector<std::size_t> lens(n), strides(n);
    for (std::size_t i = 0; i < n; ++i) {
        lens[i] = x.lens()[perm[i]];
        strides[i] = x.strides()[perm[i]];
    }
    return {x.type(), lens, strides};
}

argument transpose::compute(const shape& out, std::span<const argument> args) const { return args[0].view(out); }
KILN_REGISTER_OP(transpose)

shape broadcast::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    const shape& x = in[0];
    auto lens = to_lens(out_lens, "out_lens");
    if (axis < 0 || static_cast<std::size_t>(axis) + x.ndim() > lens.size())
        fail("axis=", axis, " does not place input 0's ", x.ndim(), " dims inside out_lens ", lens_to_string(lens));
    auto a = static_cast<std::size_t>(axis);
    std::vector<std::size_t> strides(lens.size(), 0);
    for (std::size_t i = 0; i < x.ndim(); ++i) {
        std::size_t l = x.lens()[i];
        if (l != lens[a + i] && l != 1)
            fail("input 0 dim ", i, " is ", l, " but out_lens[", a + i, "] is ", lens[a + i],
                 "; expected equal or 1");
        strides[a + i] = l == lens[a + i] ? x.strides()[i] : 0;
    }
    return {x.type(), lens, strides};
}

argument broadcast::compute(const shape& out, std::span<const argument> args) const { return args[0].view(out); }
KILN_REGISTER_OP(broadcast)

shape multibroadcast::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    const shape& x = in[0];
    auto lens = to_lens(out_lens, "out_lens");
    if (x.ndim() > lens.size()) fail("input 0 has ", x.ndim(), " dims, more than out_lens ", lens_to_string(lens));
    std::size_t off = lens.size() - x.ndim();
    for (std::size_t i = 0; i < x.ndim(); ++i)
        if (x.lens()[i] != 1 && x.lens()[i] != lens[off + i])
            fail("cannot broadcast input 0 ", lens_to_string(x.lens()), " to ", lens_to_string(lens), ": dim ", i,
                 " is ", x.lens()[i]);
    return broadcast_to(x, lens);
}

argument multibroadcast::compute(const shape& out, std::span<const argument> args) const { return args[0].view(out); }
KILN_REGISTER_OP(multibroadcast)

shape expand::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    shape target(in[0].type(), to_lens(dims, "dims"));
    std::vector<shape> both = {in[0], target};
    return broadcast_to(in[0], broadcast_lens(both));
}

argument expand::compute(const shape& out, std::span<const argument> args) const { return args[0].view(out); }
KILN_REGISTER_OP(expand)

shape squeeze::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    const shape& x = in[0];
    std::vector<bool> drop(x.ndim(), false);
    if (axes.empty())
        for (std::size_t i = 0; i < x.ndim(); ++i) drop[i] = x.lens()[i] == 1;
    for (auto a : normalize_axes(axes, x.ndim())) {
        if (x.lens()[a] != 1)
            fail("cannot squeeze dim ", a, " of input 0 ", lens_to_string(x.lens()), ": it is not 1");
        drop[a] = true;
    }
    std::vector<std::size_t> lens, strides;
    for (std::size_t i = 0; i < x.ndim(); ++i) {
        if (drop[i]) continue;
        lens.push_back(x.lens()[i]);
        strides.push_back(x.strides()[i]);
    }
    return {x.type(), lens, strides};
}

argument squeeze::compute(const shape& out, std::span<const argument> args) const { return args[0].view(out); }
KILN_REGISTER_OP(squeeze)

shape unsqueeze::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    const shape& x = in[0];
    std::size_t rank = x.ndim() + axes.size();
    std::vector<bool> inserted(rank, false);
    for (auto a : normalize_axes(axes, rank)) inserted[a] = true;
    std::vector<std::size_t> lens(rank), strides(rank);
    // Walk from the innermost dim so an inserted dim can take the stride a standard layout gives it.
    std::size_t next = x.ndim(), stride = 1;
    for (std::size_t i = rank; i-- > 0;) {
        if (inserted[i]) {
            lens[i] = 1;
        } else {
            --next;
            lens[i] = x.lens()[next];
            stride = x.strides()[next];
        }
        strides[i] = stride;
        if (!inserted[i]) stride *= std::max<std::size_t>(lens[i], 1);
    }
    return {x.type(), lens, strides};
}

argument unsqueeze::compute(const shape& out, std::span<const argument> args) const { return args[0].view(out); }
KILN_REGISTER_OP(unsqueeze)

namespace {

// ONNX Slice clamping: negative starts/ends count from the end, then starts and ends clamp to
// the dim ([0, dim] for positive steps, [0, dim-1] and [-1, dim-1] for negative ones).
slice_range clamp_range(std::int64_t start, std::int64_t end, std::int64_t step, std::size_t dim_len) {
    auto dim = static_cast<std::int64_t>(dim_len);
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    std::int64_t len = 0;
    if (step > 0) {
        start = std::clamp<std::int64_t>(start, 0, dim);
        end = std::clamp<std::int64_t>(end, 0, dim);
        len = end > start ? (end - start + step - 1) / step : 0;
    } else if (dim > 0) {
        start = std::clamp<std::int64_t>(start, 0, dim - 1);
        end = std::clamp<std::int64_t>(end, -1, dim - 1);
        len = start > end ? (start - end - step - 1) / -step : 0;
    }
    // One element or none: the step never applies, so a negative one need not force a copy.
    if (len <= 1) step = 1;
    return {start, step, static_cast<std::size_t>(len)};
}

}  // namespace

int slice::output_alias(std::span<const shape> in) const {
    if (in.size() != 1 || in[0].dynamic() || in[0].is_tuple()) return -1;
    return forward(ranges(in[0])) ? 0 : -1;
}

bool slice::forward(const std::vector<slice_range>& rs) {
    return std::all_of(rs.begin(), rs.end(), [](const slice_range& r) { return r.step > 0; });
}

std::vector<slice_range> slice::ranges(const shape& x) const {
    std::size_t n = starts.size();
    if (ends.size() != n) fail("starts has ", n, " entries but ends has ", ends.size());
    if (!axes.empty() && axes.size() != n) fail("starts has ", n, " entries but axes has ", axes.size());
    if (!steps.empty() && steps.size() != n) fail("starts has ", n, " entries but steps has ", steps.size());
    if (axes.empty() && n > x.ndim()) fail("starts has ", n, " entries but input 0 has ", x.ndim(), " dims");
    std::vector<slice_range> rs;
    for (auto l : x.lens()) rs.push_back({0, 1, l});
    std::vector<std::size_t> ax;
    if (axes.empty())
        for (std::size_t i = 0; i < n; ++i) ax.push_back(i);
    else
        ax = normalize_axes(axes, x.ndim());
    for (std::size_t i = 0; i < n; ++i) {
        std::int64_t step = steps.empty() ? 1 : steps[i];
        if (step == 0) fail("steps[", i, "]=0; a step cannot be 0");
        rs[ax[i]] = clamp_range(starts[i], ends[i], step, x.lens()[ax[i]]);
    }
    return rs;
}

shape slice::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    const shape& x = in[0];
    auto rs = ranges(x);
    std::vector<std::size_t> lens;
    for (const auto& r : rs) lens.push_back(r.len);
    if (!forward(rs)) return {x.type(), lens};  // copied in standard layout
    std::vector<std::size_t> strides;
    for (std::size_t d = 0; d < rs.size(); ++d)
        strides.push_back(x.strides()[d] * static_cast<std::size_t>(rs[d].step));
    return {x.type(), lens, strides};
}

argument slice::compute(const shape& out, std::span<const argument> args) const {
    const shape& xs = args[0].get_shape();
    auto rs = ranges(xs);
    if (forward(rs)) {
        // An empty slice may start one past the end of a dim; it reads nothing, so offset 0.
        std::size_t offset = 0;
        if (out.elements() > 0)
            for (std::size_t d = 0; d < rs.size(); ++d)
                offset += static_cast<std::size_t>(rs[d].start) * xs.strides()[d];
        return args[0].view(out, offset);
    }
    argument r(out);
    copy_mapped(r, args[0], [&](std::span<const std::size_t> idx) {
        std::int64_t off = 0;
        for (std::size_t d = 0; d < idx.size(); ++d)
            off += (rs[d].start + static_cast<std::int64_t>(idx[d]) * rs[d].step) *
                   static_cast<std::int64_t>(xs.strides()[d]);
        return static_cast<std::size_t>(off);
    });
    return r;
}
KILN_REGISTER_OP(slice)

shape contiguous::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    return in[0].as_standard();
}

argument contiguous::compute(const shape&, std::span<const argument> args) const { return args[0].copy(); }
KILN_REGISTER_OP(contiguous)

shape identity::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    return in[0];
}

argument identity::compute(const shape& out, std::span<const argument> args) const { return args[0].view(out); }
KILN_REGISTER_OP(identity)

}  // namespace kiln::ops
