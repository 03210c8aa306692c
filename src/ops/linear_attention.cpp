// linear_attention, as ONNX LinearAttention: a recurrent state S (d_k x d_v per KV head) updated
// token by token and read by the queries. Inputs: query (B, T, Hq*dk), key (B, T, Hkv*dk),
// value (B, T, Hkv*dv), state (B, Hkv, dk, dv), then decay when the rule is gated and beta when
// it is a delta rule. Per token t and KV head:
//   gated rules:  S = exp(g_t) * S      (g per head, or per row of S: (B, T, Hkv) or (B, T, Hkv*dk))
//   delta rules:  v_t = beta_t * (v_t - S^T k_t)      (beta (B, T, Hkv) or (B, T, 1))
//   always:       S = S + k_t v_t^T;    o_t = scale * q_t^T S  for each query head of the group
// Query head h reads KV head h / (Hq / Hkv). scale 0 means 1/sqrt(dk). Output: a tuple of
// (B, T, Hq*dv) and the final state in the state's type. Math in double.
#include <cmath>

#include "ops/linear_attention.hpp"

namespace kiln::ops {

shape linear_attention::compute_shape(std::span<const shape> in) const {
    if (!gated() && !delta() && update_rule != "linear")
        fail("update_rule='", update_rule, "'; expected 'linear', 'gated', 'delta' or 'gated_delta'");
    check_input_count(in, 4 + gated() + delta());
    check_static(in);
    for (std::size_t i = 0; i < 3; ++i) check_rank(in, i, 3);
    check_rank(in, 3, 4);
    check_type(in, 0, float_type, "a float type");
    if (q_num_heads <= 0 || kv_num_heads <= 0 || q_num_heads % kv_num_heads != 0)
        fail("q_num_heads=", q_num_heads, " must be a positive multiple of kv_num_heads=", kv_num_heads);
    std::size_t hq = std::size_t(q_num_heads), hkv = std::size_t(kv_num_heads);
    const auto &q = in[0].lens(), &k = in[1].lens(), &v = in[2].lens();
    std::size_t b = q[0], t = q[1];
    if (q[2] % hq || v[2] % hkv) fail("the last dims of query and value must divide by their head counts");
    std::size_t dk = q[2] / hq, dv = v[2] / hkv;
    if (k != std::vector<std::size_t>{b, t, hkv * dk} || v[0] != b || v[1] != t)
        fail("key is ", lens_to_string(k), " and value ", lens_to_string(v), "; expected {", b, ", ", t, ", ",
             hkv * dk, "} and {", b, ", ", t, ", Hkv*dv}");
    if (in[3].lens() != std::vector<std::size_t>{b, hkv, dk, dv})
        fail("input 3 (state) is ", lens_to_string(in[3].lens()), "; expected {", b, ", ", hkv, ", ", dk, ", ", dv,
             "}");
    std::size_t next = 4;
    if (gated()) {
        std::size_t last = in[next].lens().size() == 3 ? in[next].lens()[2] : 0;
        if (in[next].ndim() != 3 || in[next].lens()[0] != b || in[next].lens()[1] != t ||
            (last != hkv && last != hkv * dk))
            fail("input ", next, " (decay) is ", lens_to_string(in[next].lens()), "; expected {", b, ", ", t, ", ",
                 hkv, "} or {", b, ", ", t, ", ", hkv * dk, "}");
        ++next;
    }
    if (delta()) {
        std::size_t last = in[next].lens().size() == 3 ? in[next].lens()[2] : 0;
        if (in[next].ndim() != 3 || in[next].lens()[0] != b || in[next].lens()[1] != t ||
            (last != hkv && last != 1))
            fail("input ", next, " (beta) is ", lens_to_string(in[next].lens()), "; expected {", b, ", ", t, ", ",
                 hkv, "} or {", b, ", ", t, ", 1}");
    }
    return shape({shape(in[0].type(), {b, t, hq * dv}), shape(in[3].type(), in[3].lens())});
}

argument linear_attention::compute(const shape& out, std::span<const argument> args) const {
    const auto& ql = args[0].get_shape().lens();
    std::size_t b = ql[0], t = ql[1], hq = std::size_t(q_num_heads), hkv = std::size_t(kv_num_heads);
    std::size_t dk = ql[2] / hq, dv = args[2].get_shape().lens()[2] / hkv, group = hq / hkv;
    auto q = to_doubles(args[0]), k = to_doubles(args[1]), v = to_doubles(args[2]), s = to_doubles(args[3]);
    std::vector<double> g, beta;
    std::size_t g_last = 0, beta_last = 0, next = 4;
    if (gated()) g_last = args[next].get_shape().lens()[2], g = to_doubles(args[next++]);
    if (delta()) beta_last = args[next].get_shape().lens()[2], beta = to_doubles(args[next]);
    double sc = scale == 0 ? 1 / std::sqrt(double(dk)) : double(scale);
    std::vector<double> o(b * t * hq * dv), vt(dv);
    for (std::size_t bi = 0; bi < b; ++bi)
        for (std::size_t ti = 0; ti < t; ++ti)
            for (std::size_t h = 0; h < hkv; ++h) {
                double* st = &s[((bi * hkv + h) * dk) * dv];
                const double* kt = &k[(bi * t + ti) * hkv * dk + h * dk];
                for (std::size_t j = 0; j < dv; ++j) vt[j] = v[(bi * t + ti) * hkv * dv + h * dv + j];
                if (gated()) {
                    std::size_t base = (bi * t + ti) * g_last;
                    for (std::size_t i = 0; i < dk; ++i) {
                        double decay = std::exp(g[base + (g_last == hkv ? h : h * dk + i)]);
                        for (std::size_t j = 0; j < dv; ++j) st[i * dv + j] *= decay;
                    }
                }
                if (delta()) {
                    double bt = beta[(bi * t + ti) * beta_last + (beta_last == 1 ? 0 : h)];
                    for (std::size_t j = 0; j < dv; ++j) {
                        double retrieved = 0;
                        for (std::size_t i = 0; i < dk; ++i) retrieved += st[i * dv + j] * kt[i];
                        vt[j] = bt * (vt[j] - retrieved);
                    }
                }
                for (std::size_t i = 0; i < dk; ++i)
                    for (std::size_t j = 0; j < dv; ++j) st[i * dv + j] += kt[i] * vt[j];
                for (std::size_t hg = h * group; hg < (h + 1) * group; ++hg) {
                    const double* qt = &q[(bi * t + ti) * hq * dk + hg * dk];
                    for (std::size_t j = 0; j < dv; ++j) {
                        double acc = 0;
                        for (std::size_t i = 0; i < dk; ++i) acc += qt[i] * st[i * dv + j];
                        o[(bi * t + ti) * hq * dv + hg * dv + j] = sc * acc;
                    }
                }
            }
    return argument(
        std::vector<argument>{from_doubles(out.sub_shapes()[0], o), from_doubles(out.sub_shapes()[1], s)});
}

KILN_REGISTER_OP(linear_attention)

}  // namespace kiln::ops
