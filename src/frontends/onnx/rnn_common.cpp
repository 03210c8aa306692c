// The shared half of the RNN, GRU and LSTM mappings: attributes, activations and the unrolling
// over time (see rnn_common.hpp).
#include "frontends/onnx/rnn_common.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/error.hpp"
#include "core/reflect.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;
using ints = std::vector<std::int64_t>;

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// ONNX's activations for RNNs and how many of (alpha, beta) each takes, with their defaults.
struct activation_info {
    int params;
    float alpha, beta;
};
const std::map<std::string, activation_info>& known_activations() {
    static const std::map<std::string, activation_info> m{{"relu", {0, 0, 0}},
                                                          {"tanh", {0, 0, 0}},
                                                          {"sigmoid", {0, 0, 0}},
                                                          {"softsign", {0, 0, 0}},
                                                          {"softplus", {0, 0, 0}},
                                                          {"affine", {2, 1.0f, 0.0f}},
                                                          {"leakyrelu", {1, 0.01f, 0}},
                                                          {"thresholdedrelu", {1, 1.0f, 0}},
                                                          {"scaledtanh", {2, 1.0f, 1.0f}},
                                                          {"hardsigmoid", {2, 0.2f, 0.5f}},
                                                          {"elu", {1, 1.0f, 0}}};
    return m;
}

// The activations per direction. activation_alpha and activation_beta are consumed in order by
// the activations that take them (as ONNX Runtime reads them); missing values take the defaults.
// A bidirectional node that lists one direction's activations uses them for both.
std::vector<std::vector<rnn_activation>> read_activations(const node_info& n, std::size_t dirs,
                                                          const std::vector<std::string>& defaults) {
    auto names = n.attr_strings("activations");
    if (names.empty()) names = defaults;
    auto alphas = n.attr_floats("activation_alpha"), betas = n.attr_floats("activation_beta");
    std::size_t next_alpha = 0, next_beta = 0;
    std::vector<rnn_activation> all;
    for (const auto& name : names) {
        auto it = known_activations().find(lower(name));
        if (it == known_activations().end())
            fail("activation '", name, "' is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ",
                 "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus");
        rnn_activation a{it->first, it->second.alpha, it->second.beta};
        if (it->second.params >= 1 && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
        if (it->second.params >= 2 && next_beta < betas.size()) a.beta = betas[next_beta++];
        all.push_back(a);
    }
    const std::size_t per = defaults.size();
    if (dirs == 2 && all.size() == per) {
        auto first = all;
        all.insert(all.end(), first.begin(), first.end());
    }
    if (all.size() != per * dirs)
        fail("activations has ", names.size(), " entries; expected ", per * dirs, " (", per, " per direction)");
    std::vector<std::vector<rnn_activation>> r;
    for (std::size_t d = 0; d < dirs; ++d)
        r.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(d * per),
                       all.begin() + static_cast<std::ptrdiff_t>((d + 1) * per));
    return r;
}

const shape& static_input(context& ctx, const inputs_t& in, std::size_t i, const char* what, std::size_t rank) {
    if (!has_input(ctx, in, i)) fail("input ", i, " (", what, ") is required");
    const shape& s = in[i]->get_shape();
    if (s.dynamic() || s.ndim() != rank)
        fail("input ", i, " (", what, ") is ", to_string(s), "; expected a static shape of ", rank, " dims");
    return s;
}

// A [batch, dirs, hidden] state input (layout=1) as [dirs, batch, hidden], checked.
instruction_ref state_input(context& ctx, const inputs_t& in, std::size_t i, const char* what, const rnn_node& r) {
    if (!has_input(ctx, in, i)) return ctx.none();
    const shape& s = static_input(ctx, in, i, what, 3);
    std::vector<std::size_t> want{r.dirs, r.batch, r.hidden};
    if (r.batch_first) std::swap(want[0], want[1]);
    if (s.lens() != want)
        fail("input ", i, " (", what, ") has lens ", lens_to_string(s.lens()), "; expected ", lens_to_string(want));
    if (!r.batch_first) return in[i];
    return ctx.add("transpose", value{{"permutation", to_value(ints{1, 0, 2})}}, {in[i]});
}

// sequence_lens when some sequence is shorter than the input; none when all are full.
instruction_ref sequence_lens(context& ctx, const inputs_t& in, const rnn_node& r) {
    if (!has_input(ctx, in, 4)) return ctx.none();
    const shape& s = static_input(ctx, in, 4, "sequence_lens", 1);
    if (s.lens()[0] != r.batch) fail("input 4 (sequence_lens) has ", s.lens()[0], " entries; expected ", r.batch);
    if (!ctx.is_constant(in[4])) return in[4];
    auto lens = ctx.constant_ints(in[4], "input 4 (sequence_lens)");
    for (auto l : lens)
        if (l < 0 || static_cast<std::size_t>(l) > r.seq)
            fail("sequence_lens has ", l, "; expected 0 to the sequence length ", r.seq);
    bool full =
        std::all_of(lens.begin(), lens.end(), [&](std::int64_t l) { return static_cast<std::size_t>(l) == r.seq; });
    return full ? ctx.none() : in[4];
}

}  // namespace

bool has_input(context& ctx, const inputs_t& in, std::size_t i) { return i < in.size() && !ctx.is_none(in[i]); }

rnn_node read_rnn(const node_info& n, context& ctx, const inputs_t& in, std::size_t gates,
                  const std::vector<std::string>& default_acts) {
    rnn_node r;
    const shape& xs = static_input(ctx, in, 0, "X", 3);
    const shape& ws = static_input(ctx, in, 1, "W", 3);
    const shape& rs = static_input(ctx, in, 2, "R", 3);
    r.type = xs.type();
    r.batch_first = n.attr_int("layout", 0) != 0;
    r.seq = xs.lens()[r.batch_first ? 1 : 0];
    r.batch = xs.lens()[r.batch_first ? 0 : 1];
    if (r.seq == 0) fail("input 0 (X) has an empty sequence");
    std::string dir = n.attr_string("direction", "forward");
    if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
        fail("direction '", dir, "' is not one of forward, reverse, bidirectional");
    r.dirs = dir == "bidirectional" ? 2 : 1;
    r.reverse = dir == "bidirectional" ? std::vector<bool>{false, true} : std::vector<bool>{dir == "reverse"};
    r.hidden = rs.lens()[2];
    if (n.has_attr("hidden_size") && n.attr_int("hidden_size", 0) != static_cast<std::int64_t>(r.hidden))
        fail("hidden_size=", n.attr_int("hidden_size", 0), " but input 2 (R) has lens ", lens_to_string(rs.lens()));
    std::vector<std::size_t> want_w{r.dirs, gates * r.hidden, xs.lens()[2]}, want_r{r.dirs, gates * r.hidden, r.hidden};
    if (ws.lens() != want_w)
        fail("input 1 (W) has lens ", lens_to_string(ws.lens()), "; expected ", lens_to_string(want_w));
    if (rs.lens() != want_r)
        fail("input 2 (R) has lens ", lens_to_string(rs.lens()), "; expected ", lens_to_string(want_r));
    if (has_input(ctx, in, 3)) {
        const shape& bs = static_input(ctx, in, 3, "B", 2);
        std::vector<std::size_t> want_b{r.dirs, 2 * gates * r.hidden};
        if (bs.lens() != want_b)
            fail("input 3 (B) has lens ", lens_to_string(bs.lens()), "; expected ", lens_to_string(want_b));
    }
    r.acts = read_activations(n, r.dirs, default_acts);
    if (n.has_attr("clip")) r.clip = n.attr_float("clip", 0);
    if (r.clip && !(*r.clip > 0)) fail("clip=", *r.clip, "; expected a positive threshold");
    r.x = r.batch_first ? ctx.add("transpose", value{{"permutation", to_value(ints{1, 0, 2})}}, {in[0]}) : in[0];
    r.lens = sequence_lens(ctx, in, r);
    r.h0 = state_input(ctx, in, 5, "initial_h", r);
    r.c0 = gates == 4 ? state_input(ctx, in, 6, "initial_c", r) : ctx.none();
    return r;
}

instruction_ref direction_of(context& ctx, instruction_ref w, std::size_t d) { return at_time(ctx, w, d); }

instruction_ref gates_of(context& ctx, instruction_ref v, std::int64_t axis, std::size_t first, std::size_t count,
                         std::size_t hidden) {
    auto start = static_cast<std::int64_t>(first * hidden), end = static_cast<std::int64_t>((first + count) * hidden);
    return ctx.add(
        "slice",
        value{{"axes", to_value(ints{axis})}, {"starts", to_value(ints{start})}, {"ends", to_value(ints{end})}}, {v});
}

instruction_ref at_time(context& ctx, instruction_ref v, std::size_t t) {
    auto i = static_cast<std::int64_t>(t);
    auto s = ctx.add("slice",
                     value{{"axes", to_value(ints{0})}, {"starts", to_value(ints{i})}, {"ends", to_value(ints{i + 1})}},
                     {v});
    return ctx.add("squeeze", value{{"axes", to_value(ints{0})}}, {s});
}

instruction_ref input_projection(context& ctx, const rnn_node& r, instruction_ref w, instruction_ref bias) {
    auto wt = ctx.add("transpose", value{{"permutation", to_value(ints{1, 0})}}, {w});
    auto xw = ctx.add("dot", {r.x, wt});
    return ctx.is_none(bias) ? xw : ctx.add("add", {xw, bias});
}

instruction_ref scalar(context& ctx, dtype t, double v) {
    std::vector<double> one{v};
    return ctx.add_literal(literal(shape(t), one));
}

instruction_ref activate(context& ctx, const rnn_activation& a, instruction_ref x, std::optional<float> clip) {
    dtype t = x->get_shape().type();
    if (clip) x = ctx.add("clip", {x, scalar(ctx, t, -*clip), scalar(ctx, t, *clip)});
    const std::string& f = a.name;
    if (f == "relu" || f == "tanh" || f == "sigmoid" || f == "softsign" || f == "softplus") return ctx.add(f, {x});
    if (f == "affine") return ctx.add("add", {ctx.add("mul", {x, scalar(ctx, t, a.alpha)}), scalar(ctx, t, a.beta)});
    if (f == "scaledtanh")
        return ctx.add("mul",
                       {ctx.add("tanh", {ctx.add("mul", {x, scalar(ctx, t, a.beta)})}), scalar(ctx, t, a.alpha)});
    if (f == "leakyrelu") return ctx.add("leaky_relu", value{{"alpha", a.alpha}}, {x});
    if (f == "thresholdedrelu") return ctx.add("thresholded_relu", value{{"alpha", a.alpha}}, {x});
    if (f == "elu") return ctx.add("elu", value{{"alpha", a.alpha}}, {x});
    return ctx.add("hard_sigmoid", value{{"alpha", a.alpha}, {"beta", a.beta}}, {x});
}

namespace {

// The initial state of direction d: from the input, or zeros.
instruction_ref initial(context& ctx, const rnn_node& r, instruction_ref v, std::size_t d) {
    if (!ctx.is_none(v)) return direction_of(ctx, v, d);
    std::vector<double> zeros(r.batch * r.hidden, 0.0);
    return ctx.add_literal(literal(shape(r.type, {r.batch, r.hidden}), zeros));
}

instruction_ref stack(context& ctx, const inputs_t& parts, std::int64_t axis) {
    inputs_t u;
    for (auto p : parts) u.push_back(ctx.add("unsqueeze", value{{"axes", to_value(ints{axis})}}, {p}));
    return u.size() == 1 ? u[0] : ctx.add("concat", value{{"axis", axis}}, u);
}

// Where batch entry b is past its length at time t (mask [batch, 1] false), `keep` instead of `v`.
instruction_ref masked(context& ctx, instruction_ref mask, instruction_ref v, instruction_ref keep) {
    return ctx.add("where", {mask, v, keep});
}

instruction_ref time_mask(context& ctx, const rnn_node& r, std::size_t t) {
    std::vector<std::int64_t> tv{static_cast<std::int64_t>(t)};
    auto now = ctx.add_literal(literal(shape(r.lens->get_shape().type()), tv));
    auto m = ctx.add("less", {now, r.lens});
    return ctx.add("unsqueeze", value{{"axes", to_value(ints{1})}}, {m});
}

}  // namespace

inputs_t unroll_rnn(context& ctx, const rnn_node& r, const std::function<rnn_step(std::size_t)>& make, bool with_cell) {
    inputs_t ys, hs, cs;
    for (std::size_t d = 0; d < r.dirs; ++d) {
        rnn_step step = make(d);
        rnn_state s{initial(ctx, r, r.h0, d), with_cell ? initial(ctx, r, r.c0, d) : ctx.none()};
        inputs_t y(r.seq);
        for (std::size_t k = 0; k < r.seq; ++k) {
            const std::size_t t = r.reverse[d] ? r.seq - 1 - k : k;
            rnn_state next = step(t, s);
            if (ctx.is_none(r.lens)) {
                y[t] = next.h;
            } else {
                auto mask = time_mask(ctx, r, t);
                y[t] = masked(ctx, mask, next.h, scalar(ctx, r.type, 0));
                next.h = masked(ctx, mask, next.h, s.h);
                if (with_cell) next.c = masked(ctx, mask, next.c, s.c);
            }
            s = next;
        }
        ys.push_back(stack(ctx, y, 0));
        hs.push_back(s.h);
        cs.push_back(s.c);
    }
    inputs_t out{stack(ctx, ys, 1), stack(ctx, hs, 0)};
    if (with_cell) out.push_back(stack(ctx, cs, 0));
    if (r.batch_first) {
        out[0] = ctx.add("transpose", value{{"permutation", to_value(ints{2, 0, 1, 3})}}, {out[0]});
        for (std::size_t i = 1; i < out.size(); ++i)
            out[i] = ctx.add("transpose", value{{"permutation", to_value(ints{1, 0, 2})}}, {out[i]});
    }
    return out;
}

}  // namespace kiln::onnx_fe
