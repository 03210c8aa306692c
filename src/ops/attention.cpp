// Scaled dot-product attention, the primitive that GPU targets implement directly (flash
// attention, cuDNN SDPA). Frontends reshape to [batch, heads, seq, head_size] and concatenate
// KV caches; this op only computes softmax(softcap(scale * q k^T) + bias) v.
#include "ops/attention.hpp"

#include <cmath>
#include <limits>

#include "ops/common.hpp"

namespace kiln::ops {

shape attention::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 3, 4);
    check_static(in);
    check_same_type(in.first(3));
    check_type(in, 0, float_type, "a float type");
    for (std::size_t i = 0; i < 3; ++i) check_rank(in, i, 4);
    if (softcap < 0) fail("softcap=", softcap, "; expected 0 (none) or a positive cap");
    const auto& q = in[0].lens();
    const auto& k = in[1].lens();
    const auto& v = in[2].lens();
    if (k[0] != q[0] || v[0] != q[0])
        fail("batch sizes differ: q ", lens_to_string(q), ", k ", lens_to_string(k), ", v ", lens_to_string(v));
    if (v[1] != k[1]) fail("k has ", k[1], " heads but v has ", v[1], "; expected the same");
    if (k[1] == 0 || q[1] % k[1] != 0) fail("q has ", q[1], " heads, not a multiple of k's ", k[1], " heads");
    if (k[3] != q[3]) fail("q head size is ", q[3], " but k head size is ", k[3], "; expected the same");
    if (v[2] != k[2]) fail("k has ", k[2], " keys but v has ", v[2], "; expected the same");
    shape out(in[0].type(), {q[0], q[1], q[2], v[3]});
    if (in.size() == 4) check_mask(in[3], in[0].type(), {q[0], q[1], q[2], k[2]});
    return out;
}

void attention::check_mask(const shape& m, dtype t, const std::vector<std::size_t>& scores) {
    if (m.type() != dtype::bool_ && m.type() != t)
        fail("input 3 (mask) is ", dtype_name(m.type()), "; expected bool or ", dtype_name(t), " (the type of q)");
    if (m.ndim() > 4) fail("input 3 (mask) has ", m.ndim(), " dims; expected at most 4");
    std::size_t off = 4 - m.ndim();
    for (std::size_t i = 0; i < m.ndim(); ++i)
        if (m.lens()[i] != 1 && m.lens()[i] != scores[off + i])
            fail("input 3 (mask) ", lens_to_string(m.lens()), " does not broadcast to the scores ",
                 lens_to_string(scores));
}

argument attention::compute(const shape& out, std::span<const argument> args) const {
    argument r(out);
    visit_type(out.type(), [&](auto t) {
        using T = decltype(t);
        if constexpr (is_float_v<T>) run<T>(r, args);
    });
    return r;
}

std::vector<double> attention::row_bias(std::span<const argument> args, const shape& ms, std::size_t b, std::size_t h,
                                        std::size_t i, std::size_t keys) const {
    constexpr double neg_inf = -std::numeric_limits<double>::infinity();
    std::vector<double> bias(keys, 0.0);
    if (args.size() == 4) {
        visit_type(ms.type(), [&](auto mt) {
            using M = decltype(mt);
            const M* m = args[3].as<M>();
            for (std::size_t j = 0; j < keys; ++j) {
                std::size_t idx[4] = {b, h, i, j};
                M x = m[ms.index(idx)];
                if constexpr (std::is_same_v<M, bool>)
                    bias[j] = x ? 0.0 : neg_inf;
                else
                    bias[j] = cast<double>(x);
            }
        });
    }
    if (is_causal)
        for (std::size_t j = 0; j < keys; ++j)
            if (static_cast<std::int64_t>(j) > static_cast<std::int64_t>(i) + causal_offset) bias[j] = neg_inf;
    return bias;
}

template <class T>
std::vector<double> attention::row_weights(std::span<const argument> args, const shape& ms, std::size_t b,
                                           std::size_t h, std::size_t kv_head, std::size_t i) const {
    constexpr double neg_inf = -std::numeric_limits<double>::infinity();
    const shape &qs = args[0].get_shape(), &ks = args[1].get_shape();
    std::size_t keys = ks.lens()[2], d = qs.lens()[3];
    double s = scale != 0 ? scale : 1 / std::sqrt(static_cast<double>(d));
    const T *q = args[0].as<T>(), *k = args[1].as<T>();
    std::vector<double> logits = row_bias(args, ms, b, h, i, keys);
    bool any_key = false;
    double top = neg_inf;
    for (std::size_t j = 0; j < keys; ++j) {
        any_key = any_key || logits[j] != neg_inf;
        double dot = 0;
        for (std::size_t c = 0; c < d; ++c) {
            std::size_t qi[4] = {b, h, i, c}, ki[4] = {b, kv_head, j, c};
            dot += cast<double>(q[qs.index(qi)]) * cast<double>(k[ks.index(ki)]);
        }
        double sc = s * dot;
        if (softcap > 0) sc = softcap * std::tanh(sc / softcap);
        logits[j] += sc;
        top = std::max(top, logits[j]);
    }
    if (!any_key || top == neg_inf) return {};
    for (double& x : logits) x = std::exp(x - top);
    return logits;
}

template <class T>
void attention::run(const argument& r, std::span<const argument> args) const {
    const shape& vs = args[2].get_shape();
    const auto& ol = r.get_shape().lens();
    std::size_t batch = ol[0], heads = ol[1], queries = ol[2], dv = ol[3];
    std::size_t group = heads / vs.lens()[1], keys = vs.lens()[2];
    shape ms = args.size() == 4
                   ? broadcast_to(args[3].get_shape(), std::vector<std::size_t>{batch, heads, queries, keys})
                   : shape();
    const T* v = args[2].as<T>();
    T* y = r.as<T>();
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t h = 0; h < heads; ++h)
            for (std::size_t i = 0; i < queries; ++i, y += dv) {
                std::vector<double> w = row_weights<T>(args, ms, b, h, h / group, i);
                double sum = 0;
                for (double x : w) sum += x;
                for (std::size_t c = 0; c < dv; ++c) {
                    double acc = 0;
                    for (std::size_t j = 0; j < w.size(); ++j) {
                        std::size_t vi[4] = {b, h / group, j, c};
                        acc += w[j] * cast<double>(v[vs.index(vi)]);
                    }
                    y[c] = cast<T>(w.empty() ? 0.0 : acc / sum);
                }
            }
}
KILN_REGISTER_OP(attention)

}  // namespace kiln::ops
