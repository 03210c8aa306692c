// tensor_scatter, as ONNX TensorScatter: a KV cache update. The result is `past` with `update`
// written along `axis` from write_indices[b] (0 when the input is absent) for each batch entry b;
// "circular" mode wraps the position modulo the cache length, "linear" requires it to fit.
#include <cstring>

#include "ops/tensor_scatter.hpp"

namespace kiln::ops {

shape tensor_scatter::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 2, 3);
    check_static(in);
    check_rank(in, 0, 2, true);
    const auto& p = in[0].lens();
    std::size_t a = normalize_axis(axis, p.size());
    if (a == 0) fail("axis=", axis, " is the batch dim; expected a sequence dim after it");
    if (mode != "linear" && mode != "circular") fail("mode='", mode, "'; expected 'linear' or 'circular'");
    if (in[1].type() != in[0].type())
        fail("input 1 (update) is ", dtype_name(in[1].type()), "; expected ", dtype_name(in[0].type()));
    const auto& u = in[1].lens();
    bool fits = u.size() == p.size() && u[a] <= p[a];
    for (std::size_t d = 0; fits && d < p.size(); ++d) fits = d == a || u[d] == p[d];
    if (!fits)
        fail("input 1 (update) is ", lens_to_string(u), "; expected ", lens_to_string(p), " with dim ", a,
             " at most ", p[a]);
    if (in.size() == 3 && (in[2].type() != dtype::int64 || in[2].lens() != std::vector<std::size_t>{p[0]}))
        fail("input 2 (write_indices) is ", to_string(in[2]), "; expected int64 {", p[0], "}");
    return in[0].as_standard();
}

argument tensor_scatter::compute(const shape& out, std::span<const argument> args) const {
    const auto& lens = out.lens();
    std::size_t a = normalize_axis(axis, lens.size());
    std::size_t esize = out.type_bits() / 8, seq = args[1].get_shape().lens()[a], max_seq = lens[a];
    std::size_t inner = elements_of(std::span(lens).subspan(a + 1)) * esize;
    std::size_t outer = elements_of(std::span(lens).subspan(1, a - 1));
    argument r(out);  // first: the result is the allocation the memory plan places
    std::vector<std::int64_t> at = args.size() == 3 ? to_int64s(args[2]) : std::vector<std::int64_t>(lens[0], 0);
    argument past = args[0].copy(), update = args[1].copy();
    std::memcpy(r.data(), past.data(), out.bytes());
    for (std::size_t b = 0; b < lens[0]; ++b) {
        std::int64_t start = at[b];
        if (start < 0 || (mode == "linear" && std::size_t(start) + seq > max_seq))
            fail("write_indices[", b, "] = ", start, ": ", seq, " positions from it do not fit in ", max_seq,
                 mode == "linear" ? " (mode 'linear')" : "");
        for (std::size_t o = 0; o < outer; ++o)
            for (std::size_t s = 0; s < seq; ++s) {
                std::size_t pos = (std::size_t(start) + s) % max_seq;
                std::size_t dst = ((b * outer + o) * max_seq + pos) * inner;
                std::size_t src = ((b * outer + o) * seq + s) * inner;
                std::memcpy(r.data() + dst, update.data() + src, inner);
            }
    }
    return r;
}
KILN_REGISTER_OP(tensor_scatter)

}  // namespace kiln::ops
