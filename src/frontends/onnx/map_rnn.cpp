// ONNX RNN, GRU and LSTM (opset 7 on; layout from 14), unrolled over time into kiln ops by
// rnn_common. Each mapping states its cell's equations once; the biases that only add to the
// input projection (Wb, and Rb where the equations allow) are folded into it.
#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/rnn_common.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;
using ints = std::vector<std::int64_t>;

struct ops {
    context& ctx;
    instruction_ref add(instruction_ref a, instruction_ref b) const { return ctx.add("add", {a, b}); }
    instruction_ref sub(instruction_ref a, instruction_ref b) const { return ctx.add("sub", {a, b}); }
    instruction_ref mul(instruction_ref a, instruction_ref b) const { return ctx.add("mul", {a, b}); }
    instruction_ref dot(instruction_ref a, instruction_ref b) const { return ctx.add("dot", {a, b}); }
    instruction_ref transposed(instruction_ref w) const {
        return ctx.add("transpose", value{{"permutation", to_value(ints{1, 0})}}, {w});
    }
    // Gate k (of `hidden` columns) of a [batch, gates * hidden] value.
    instruction_ref gate(instruction_ref v, std::size_t k, std::size_t hidden, std::size_t count = 1) const {
        return gates_of(ctx, v, 1, k, count, hidden);
    }
};

// Wb + Rb of direction d (B holds [Wb, Rb], `gates` gates each); none when B is absent.
instruction_ref both_biases(context& ctx, const inputs_t& in, const rnn_node& r, std::size_t d, std::size_t gates) {
    if (!has_input(ctx, in, 3)) return ctx.none();
    auto b = direction_of(ctx, in[3], d);
    return ctx.add("add", {gates_of(ctx, b, 0, 0, gates, r.hidden), gates_of(ctx, b, 0, gates, gates, r.hidden)});
}

// Ht = f(Xt·Wi^T + Ht-1·Ri^T + Wbi + Rbi)
inputs_t map_rnn(const node_info& n, context& ctx, const inputs_t& in) {
    rnn_node r = read_rnn(n, ctx, in, 1, {"Tanh"});
    ops o{ctx};
    auto make = [&](std::size_t d) -> rnn_step {
        auto xw = input_projection(ctx, r, direction_of(ctx, in[1], d), both_biases(ctx, in, r, d, 1));
        auto rt = o.transposed(direction_of(ctx, in[2], d));
        const rnn_activation f = r.acts[d][0];
        return [&ctx, &r, o, xw, rt, f](std::size_t t, const rnn_state& prev) -> rnn_state {
            return {activate(ctx, f, o.add(at_time(ctx, xw, t), o.dot(prev.h, rt)), r.clip), ctx.none()};
        };
    };
    return unroll_rnn(ctx, r, make, false);
}
KILN_ONNX_OP("", "RNN", 7, map_rnn)

// zt = f(Xt·Wz^T + Ht-1·Rz^T + Wbz + Rbz), rt the same with the r weights
// ht = g(Xt·Wh^T + (rt ⊙ Ht-1)·Rh^T + Rbh + Wbh)          linear_before_reset = 0
// ht = g(Xt·Wh^T + rt ⊙ (Ht-1·Rh^T + Rbh) + Wbh)          linear_before_reset != 0
// Ht = (1 - zt) ⊙ ht + zt ⊙ Ht-1
inputs_t map_gru(const node_info& n, context& ctx, const inputs_t& in) {
    rnn_node r = read_rnn(n, ctx, in, 3, {"Sigmoid", "Tanh"});
    const bool before_reset = n.attr_int("linear_before_reset", 0) != 0;
    const std::size_t h = r.hidden;
    ops o{ctx};
    auto make = [&](std::size_t d) -> rnn_step {
        instruction_ref bias = ctx.none(), rbh = ctx.none();
        if (has_input(ctx, in, 3) && before_reset) {
            auto b = direction_of(ctx, in[3], d);
            rbh = gates_of(ctx, b, 0, 5, 1, h);
            auto zr = o.add(gates_of(ctx, b, 0, 0, 2, h), gates_of(ctx, b, 0, 3, 2, h));
            bias = ctx.add("concat", value{{"axis", 0}}, {zr, gates_of(ctx, b, 0, 2, 1, h)});
        } else {
            bias = both_biases(ctx, in, r, d, 3);
        }
        auto xw = input_projection(ctx, r, direction_of(ctx, in[1], d), bias);
        auto rd = direction_of(ctx, in[2], d);
        auto r_zr = o.transposed(gates_of(ctx, rd, 0, 0, 2, h)), r_h = o.transposed(gates_of(ctx, rd, 0, 2, 1, h));
        auto one = scalar(ctx, r.type, 1);
        const rnn_activation f = r.acts[d][0], g = r.acts[d][1];
        return [=, &ctx, &r](std::size_t t, const rnn_state& prev) -> rnn_state {
            auto x = at_time(ctx, xw, t);
            auto zr = activate(ctx, f, o.add(o.gate(x, 0, h, 2), o.dot(prev.h, r_zr)), r.clip);
            auto z = o.gate(zr, 0, h), reset = o.gate(zr, 1, h);
            instruction_ref recurrent;
            if (before_reset) {
                auto hr = o.dot(prev.h, r_h);
                recurrent = o.mul(reset, ctx.is_none(rbh) ? hr : o.add(hr, rbh));
            } else {
                recurrent = o.dot(o.mul(reset, prev.h), r_h);
            }
            auto candidate = activate(ctx, g, o.add(o.gate(x, 2, h), recurrent), r.clip);
            return {o.add(o.mul(o.sub(one, z), candidate), o.mul(z, prev.h)), ctx.none()};
        };
    };
    return unroll_rnn(ctx, r, make, false);
}
KILN_ONNX_OP("", "GRU", 7, map_gru)

// Peephole weights [Pi, Po, Pf] of direction d, each [hidden]; none when P is absent.
std::vector<instruction_ref> peepholes(context& ctx, const inputs_t& in, const rnn_node& r, std::size_t d) {
    if (!has_input(ctx, in, 7)) return {ctx.none(), ctx.none(), ctx.none()};
    const shape& s = in[7]->get_shape();
    std::vector<std::size_t> want{r.dirs, 3 * r.hidden};
    if (s.dynamic() || s.lens() != want)
        fail("input 7 (P) is ", to_string(s), "; expected lens ", lens_to_string(want));
    auto p = direction_of(ctx, in[7], d);
    return {gates_of(ctx, p, 0, 0, 1, r.hidden), gates_of(ctx, p, 0, 1, 1, r.hidden),
            gates_of(ctx, p, 0, 2, 1, r.hidden)};
}

// it = f(Xt·Wi^T + Ht-1·Ri^T + Pi ⊙ Ct-1 + Wbi + Rbi)
// ft = f(Xt·Wf^T + Ht-1·Rf^T + Pf ⊙ Ct-1 + Wbf + Rbf)      1 - it when input_forget
// ct = g(Xt·Wc^T + Ht-1·Rc^T + Wbc + Rbc)
// Ct = ft ⊙ Ct-1 + it ⊙ ct
// ot = f(Xt·Wo^T + Ht-1·Ro^T + Po ⊙ Ct + Wbo + Rbo)
// Ht = ot ⊙ h(Ct)
// The gates are stacked i, o, f, c. clip bounds the inputs of f and g; like ONNX Runtime, h's
// input (the cell state) is not clipped.
inputs_t map_lstm(const node_info& n, context& ctx, const inputs_t& in) {
    rnn_node r = read_rnn(n, ctx, in, 4, {"Sigmoid", "Tanh", "Tanh"});
    const bool input_forget = n.attr_int("input_forget", 0) != 0;
    const std::size_t h = r.hidden;
    ops o{ctx};
    auto make = [&](std::size_t d) -> rnn_step {
        auto xw = input_projection(ctx, r, direction_of(ctx, in[1], d), both_biases(ctx, in, r, d, 4));
        auto rt = o.transposed(direction_of(ctx, in[2], d));
        auto p = peepholes(ctx, in, r, d);
        auto one = scalar(ctx, r.type, 1);
        const rnn_activation f = r.acts[d][0], g = r.acts[d][1], act_h = r.acts[d][2];
        // pre + P ⊙ c, or pre without peepholes.
        auto peep = [&ctx, o](instruction_ref pre, instruction_ref pw, instruction_ref c) {
            return ctx.is_none(pw) ? pre : o.add(pre, o.mul(pw, c));
        };
        return [=, &ctx, &r](std::size_t t, const rnn_state& prev) -> rnn_state {
            auto gates = o.add(at_time(ctx, xw, t), o.dot(prev.h, rt));
            auto i = activate(ctx, f, peep(o.gate(gates, 0, h), p[0], prev.c), r.clip);
            auto forget =
                input_forget ? o.sub(one, i) : activate(ctx, f, peep(o.gate(gates, 2, h), p[2], prev.c), r.clip);
            auto cell = activate(ctx, g, o.gate(gates, 3, h), r.clip);
            auto c = o.add(o.mul(forget, prev.c), o.mul(i, cell));
            auto out = activate(ctx, f, peep(o.gate(gates, 1, h), p[1], c), r.clip);
            return {o.mul(out, activate(ctx, act_h, c, std::nullopt)), c};
        };
    };
    return unroll_rnn(ctx, r, make, true);
}
KILN_ONNX_OP("", "LSTM", 7, map_lstm)

}  // namespace
}  // namespace kiln::onnx_fe
