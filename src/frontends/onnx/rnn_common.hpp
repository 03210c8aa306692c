// What the ONNX RNN, GRU and LSTM mappings share. Each is unrolled over its (static) sequence
// length into kiln ops: the input projection X·W^T + biases for every time step at once, then
// per step a dot with the recurrence weights, the gate activations and the state update.
// Inputs are X, W, R, B, sequence_lens, initial_h (then initial_c and P for LSTM); outputs Y,
// Y_h (and Y_c). Shorter sequences (sequence_lens) are masked: past its length a batch entry
// keeps its state and its Y rows are zero.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {

struct rnn_activation {
    std::string name;  // lower case: relu, tanh, sigmoid, affine, leakyrelu, ...
    float alpha = 0, beta = 0;
};

struct rnn_node {
    dtype type;
    std::size_t seq = 0, batch = 0, hidden = 0, dirs = 1;
    bool batch_first = false;                       // layout=1
    std::vector<bool> reverse;                      // per direction
    std::vector<std::vector<rnn_activation>> acts;  // per direction, in the op's order (f, g, h)
    std::optional<float> clip;                      // bounds the inputs of the gate activations
    instruction_ref x;                              // [seq, batch, input]
    instruction_ref lens;                           // [batch] sequence lengths, or none when all are full
    instruction_ref h0, c0;                         // [dirs, batch, hidden], or none (zeros)
};

struct rnn_state {
    instruction_ref h, c;  // c only for LSTM
};

// Reads the shared inputs and attributes of a node whose cell has `gates` gates (1 RNN, 3 GRU,
// 4 LSTM) and whose activations default to `default_acts` (one direction's list).
rnn_node read_rnn(const node_info& n, context& ctx, const std::vector<instruction_ref>& in, std::size_t gates,
                  const std::vector<std::string>& default_acts);

// Whether optional input i is present.
bool has_input(context& ctx, const std::vector<instruction_ref>& in, std::size_t i);
// Direction d of a [dirs, ...] weight input, without the dirs dim.
instruction_ref direction_of(context& ctx, instruction_ref w, std::size_t d);
// Gates first..first+count-1 of v along `axis` (each gate has `hidden` rows).
instruction_ref gates_of(context& ctx, instruction_ref v, std::int64_t axis, std::size_t first, std::size_t count,
                         std::size_t hidden);
// Time step t of a [seq, ...] value, without the seq dim.
instruction_ref at_time(context& ctx, instruction_ref v, std::size_t t);
// X·w^T (+ bias) for every time step: [seq, batch, rows of w].
instruction_ref input_projection(context& ctx, const rnn_node& r, instruction_ref w, instruction_ref bias);
// A scalar constant of type t.
instruction_ref scalar(context& ctx, dtype t, double v);
// act(x), with x clipped to [-clip, clip] first when given.
instruction_ref activate(context& ctx, const rnn_activation& act, instruction_ref x, std::optional<float> clip);

// A cell for one direction: its state after time step t from the state before.
using rnn_step = std::function<rnn_state(std::size_t t, const rnn_state& prev)>;
// Runs the cell made for each direction over the sequence; returns Y, Y_h and, when
// `with_cell`, Y_c, in the node's layout.
std::vector<instruction_ref> unroll_rnn(context& ctx, const rnn_node& r,
                                        const std::function<rnn_step(std::size_t)>& make, bool with_cell);

}  // namespace kiln::onnx_fe
