// Ops that rearrange elements into a new buffer: concat, tile, reverse, pad, depth/space
// rearrangements and trilu; split (views of its input, one per piece) and get_tuple_elem.
// Each output element is read from one input element (copy_mapped), so every dtype works alike.
#include "ops/data_movement.hpp"

#include <algorithm>
#include <numeric>

#include "ops/movement.hpp"

namespace kiln::ops {
shape concat::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1, std::numeric_limits<std::size_t>::max());
    check_static(in);
    check_same_type(in);
    std::size_t a = normalize_axis(axis, in[0].ndim());
    std::vector<std::size_t> lens = in[0].lens();
    for (std::size_t i = 1; i < in.size(); ++i) {
        const auto& l = in[i].lens();
        bool match = l.size() == lens.size();
        for (std::size_t d = 0; match && d < l.size(); ++d) match = d == a || l[d] == lens[d];
        if (!match)
            fail("input ", i, " has lens ", lens_to_string(l), " but input 0 has ", lens_to_string(in[0].lens()),
                 "; they must agree except on axis ", a);
        lens[a] += l[a];
    }
    return {in[0].type(), lens};
}

argument concat::compute(const shape& out, std::span<const argument> args) const {
    argument r(out);
    std::size_t a = normalize_axis(axis, out.ndim());
    std::size_t start = 0;
    for (const auto& x : args) {
        // The block of the output this input fills, as a view with the output's strides.
        shape block(out.type(), x.get_shape().lens(), out.strides());
        copy_mapped(r.view(block, start * out.strides()[a]), x,
                    [&](std::span<const std::size_t> idx) { return x.get_shape().index(idx); });
        start += x.get_shape().lens()[a];
    }
    return r;
}
KILN_REGISTER_OP(concat)

std::vector<std::size_t> split::piece_lens(std::size_t dim) const {
    if (sizes.empty() == (num_outputs == 0)) fail("give either sizes or num_outputs");
    if (!sizes.empty()) {
        auto lens = to_lens(sizes, "sizes");
        std::size_t total = std::accumulate(lens.begin(), lens.end(), std::size_t{0});
        if (total != dim) fail("sizes ", lens_to_string(lens), " add up to ", total, ", not to the dim's ", dim);
        return lens;
    }
    if (num_outputs < 0) fail("num_outputs=", num_outputs, " is negative");
    auto n = static_cast<std::size_t>(num_outputs);
    std::size_t chunk = (dim + n - 1) / n;
    if (dim > 0 && chunk * (n - 1) >= dim)
        fail("cannot split a dim of ", dim, " into ", n, " pieces of ", chunk, " and a smaller last one");
    std::vector<std::size_t> lens(n, chunk);
    lens.back() = dim - chunk * (n - 1);
    return lens;
}

shape split::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    const shape& x = in[0];
    std::size_t a = normalize_axis(axis, x.ndim());
    std::vector<shape> pieces;
    for (auto len : piece_lens(x.lens()[a])) {
        auto lens = x.lens();
        lens[a] = len;
        pieces.emplace_back(x.type(), lens, x.strides());
    }
    return shape(pieces);
}

argument split::compute(const shape& out, std::span<const argument> args) const {
    const shape& xs = args[0].get_shape();
    std::size_t a = normalize_axis(axis, xs.ndim());
    std::vector<argument> pieces;
    std::size_t start = 0;
    for (const auto& p : out.sub_shapes()) {
        pieces.push_back(args[0].view(p, p.elements() > 0 ? start * xs.strides()[a] : 0));
        start += p.lens()[a];
    }
    return argument(std::move(pieces));
}
KILN_REGISTER_OP(split)

shape get_tuple_elem::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    if (!in[0].is_tuple()) fail("input 0 is ", to_string(in[0]), "; expected a tuple");
    auto n = static_cast<std::int64_t>(in[0].sub_shapes().size());
    if (index < 0 || index >= n) fail("index=", index, " is out of range for a tuple of ", n);
    return in[0].sub_shapes()[static_cast<std::size_t>(index)];
}

argument get_tuple_elem::compute(const shape&, std::span<const argument> args) const {
    return args[0].sub_arguments()[static_cast<std::size_t>(index)];
}
KILN_REGISTER_OP(get_tuple_elem)

shape tile::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    const shape& x = in[0];
    if (repeats.size() != x.ndim())
        fail("repeats has ", repeats.size(), " entries; input 0 has ", x.ndim(), " dims");
    auto lens = to_lens(repeats, "repeats");
    for (std::size_t d = 0; d < lens.size(); ++d) lens[d] *= x.lens()[d];
    return {x.type(), lens};
}

argument tile::compute(const shape& out, std::span<const argument> args) const {
    argument r(out);
    const shape& xs = args[0].get_shape();
    std::vector<std::size_t> src(xs.ndim());
    copy_mapped(r, args[0], [&](std::span<const std::size_t> idx) {
        for (std::size_t d = 0; d < idx.size(); ++d) src[d] = idx[d] % xs.lens()[d];
        return xs.index(src);
    });
    return r;
}
KILN_REGISTER_OP(tile)

shape reverse::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    normalize_axes(axes, in[0].ndim());
    return in[0].as_standard();
}

argument reverse::compute(const shape& out, std::span<const argument> args) const {
    argument r(out);
    const shape& xs = args[0].get_shape();
    std::vector<bool> flip(xs.ndim(), false);
    for (auto a : normalize_axes(axes, xs.ndim())) flip[a] = true;
    std::vector<std::size_t> src(xs.ndim());
    copy_mapped(r, args[0], [&](std::span<const std::size_t> idx) {
        for (std::size_t d = 0; d < idx.size(); ++d) src[d] = flip[d] ? xs.lens()[d] - 1 - idx[d] : idx[d];
        return xs.index(src);
    });
    return r;
}
KILN_REGISTER_OP(reverse)

shape trilu::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    check_rank(in, 0, 2, true);
    return in[0].as_standard();
}

argument trilu::compute(const shape& out, std::span<const argument> args) const {
    argument r(out);  // zero-filled
    const shape& xs = args[0].get_shape();
    std::size_t n = xs.ndim();
    copy_mapped(r, args[0], [&](std::span<const std::size_t> idx) {
        auto diag = static_cast<std::int64_t>(idx[n - 1]) - static_cast<std::int64_t>(idx[n - 2]);
        bool keep = upper ? diag >= k : diag <= k;
        return keep ? xs.index(idx) : no_element;
    });
    return r;
}
KILN_REGISTER_OP(trilu)

namespace {

// Where output element j of one padded dim reads from, in the kept (uncropped) range [0, kept).
std::size_t pad_source(std::int64_t j, std::int64_t kept, std::string_view mode) {
    if (j >= 0 && j < kept) return static_cast<std::size_t>(j);
    if (mode == "constant") return no_element;
    if (mode == "edge") return j < 0 ? 0 : static_cast<std::size_t>(kept - 1);
    if (mode == "wrap") return static_cast<std::size_t>((j % kept + kept) % kept);
    // reflect mirrors around the edge element without repeating it; far pads keep bouncing (numpy).
    if (kept == 1) return 0;
    std::int64_t period = 2 * (kept - 1);
    std::int64_t m = (j % period + period) % period;
    return static_cast<std::size_t>(m < kept ? m : period - m);
}

}  // namespace

std::vector<pad::dim_plan> pad::plan(const shape& x) const {
    std::size_t n = x.ndim();
    if (pads.size() != 2 * n) fail("pads has ", pads.size(), " entries; expected 2 * ", n, " (begins, then ends)");
    if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
        fail("mode='", mode, "'; expected constant, edge, reflect or wrap");
    std::vector<dim_plan> ps;
    for (std::size_t d = 0; d < n; ++d) {
        std::int64_t b = pads[d], e = pads[n + d];
        auto crop_b = static_cast<std::size_t>(std::max<std::int64_t>(-b, 0));
        auto crop_e = static_cast<std::size_t>(std::max<std::int64_t>(-e, 0));
        if (crop_b + crop_e > x.lens()[d])
            fail("pads crop ", crop_b + crop_e, " elements from dim ", d, " of size ", x.lens()[d]);
        std::size_t kept = x.lens()[d] - crop_b - crop_e;
        auto before = static_cast<std::size_t>(std::max<std::int64_t>(b, 0));
        auto after = static_cast<std::size_t>(std::max<std::int64_t>(e, 0));
        if (mode != "constant" && kept == 0 && before + after > 0)
            fail("mode=", mode, " cannot pad dim ", d, ": it has no elements to repeat");
        ps.push_back({crop_b, kept, before, kept + before + after});
    }
    return ps;
}

shape pad::compute_shape(std::span<const shape> in) const {
    check_one_input(in);
    std::vector<std::size_t> lens;
    for (const auto& p : plan(in[0])) lens.push_back(p.out);
    return {in[0].type(), lens};
}

argument pad::compute(const shape& out, std::span<const argument> args) const {
    argument r(out);
    if (mode == "constant") fill(r, value);
    const shape& xs = args[0].get_shape();
    auto ps = plan(xs);
    std::vector<std::size_t> src(xs.ndim());
    copy_mapped(r, args[0], [&](std::span<const std::size_t> idx) {
        for (std::size_t d = 0; d < idx.size(); ++d) {
            auto j = static_cast<std::int64_t>(idx[d]) - static_cast<std::int64_t>(ps[d].before);
            std::size_t s = pad_source(j, static_cast<std::int64_t>(ps[d].kept), mode);
            if (s == no_element) return no_element;
            src[d] = ps[d].crop + s;
        }
        return xs.index(src);
    });
    return r;
}

void pad::fill(const argument& r, double v) {
    visit_type(r.get_shape().type(), [&](auto t) {
        using T = decltype(t);
        T* p = r.as<T>();
        std::fill(p, p + r.get_shape().elements(), cast<T>(v));
    });
}
KILN_REGISTER_OP(pad)

namespace {

// depth_to_space and space_to_depth take one NCHW input and a positive blocksize.
void check_blocks(std::span<const shape> in, std::int64_t blocksize) {
    check_one_input(in);
    check_rank(in, 0, 4);
    if (blocksize < 1) fail("blocksize=", blocksize, "; expected at least 1");
}

}  // namespace

shape depth_to_space::compute_shape(std::span<const shape> in) const {
    check_blocks(in, blocksize);
    if (mode != "DCR" && mode != "CRD") fail("mode='", mode, "'; expected DCR or CRD");
    auto l = in[0].lens();
    auto b = static_cast<std::size_t>(blocksize);
    if (l[1] % (b * b) != 0) fail("channels (", l[1], ") are not a multiple of blocksize^2 = ", b * b);
    return {in[0].type(), {l[0], l[1] / (b * b), l[2] * b, l[3] * b}};
}

argument depth_to_space::compute(const shape& out, std::span<const argument> args) const {
    argument r(out);
    const shape& xs = args[0].get_shape();
    auto b = static_cast<std::size_t>(blocksize);
    std::size_t c_out = out.lens()[1];
    copy_mapped(r, args[0], [&](std::span<const std::size_t> o) {
        std::size_t block = (o[2] % b) * b + o[3] % b;
        std::size_t c = mode == "DCR" ? block * c_out + o[1] : o[1] * b * b + block;
        std::size_t src[] = {o[0], c, o[2] / b, o[3] / b};
        return xs.index(src);
    });
    return r;
}
KILN_REGISTER_OP(depth_to_space)

shape space_to_depth::compute_shape(std::span<const shape> in) const {
    check_blocks(in, blocksize);
    auto l = in[0].lens();
    auto b = static_cast<std::size_t>(blocksize);
    if (l[2] % b != 0 || l[3] % b != 0)
        fail("height and width (", l[2], ", ", l[3], ") are not multiples of blocksize=", b);
    return {in[0].type(), {l[0], l[1] * b * b, l[2] / b, l[3] / b}};
}

argument space_to_depth::compute(const shape& out, std::span<const argument> args) const {
    argument r(out);
    const shape& xs = args[0].get_shape();
    auto b = static_cast<std::size_t>(blocksize);
    std::size_t c_in = xs.lens()[1];
    copy_mapped(r, args[0], [&](std::span<const std::size_t> o) {
        std::size_t block = o[1] / c_in;
        std::size_t src[] = {o[0], o[1] % c_in, o[2] * b + block / b, o[3] * b + block % b};
        return xs.index(src);
    });
    return r;
}
KILN_REGISTER_OP(space_to_depth)

}  // namespace kiln::ops
