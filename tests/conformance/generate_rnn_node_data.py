"""Writes node test cases for ONNX RNN, GRU and LSTM features that the ONNX backend tests leave
out (activations with alpha/beta, clip, sequence_lens, initial states with layout=1,
linear_before_reset, input_forget, peepholes with bidirectional, float16 and float64), in the layout of the
ONNX backend node tests. onnx.reference ignores these attributes, so the expected outputs come
from a numpy version of the spec's equations that runs each batch entry over its own sequence
length (the first sequence_lens[b] steps; Y is zero past them). activation_alpha/beta are read
as ONNX Runtime reads them: consumed in order by the activations that take them.
Usage: .venv/bin/python tests/conformance/generate_rnn_node_data.py OUT_DIR
then:  build/tests/kiln_onnx_conformance --data OUT_DIR
"""
import os
import shutil
import sys

import numpy as np
from onnx import helper, numpy_helper

r = np.random.default_rng(5)

# name: (number of alpha/beta values it takes, default alpha, default beta)
ACTIVATIONS = {"relu": (0, 0, 0), "tanh": (0, 0, 0), "sigmoid": (0, 0, 0), "softsign": (0, 0, 0),
               "softplus": (0, 0, 0), "affine": (2, 1.0, 0.0), "leakyrelu": (1, 0.01, 0),
               "thresholdedrelu": (1, 1.0, 0), "scaledtanh": (2, 1.0, 1.0), "hardsigmoid": (2, 0.2, 0.5),
               "elu": (1, 1.0, 0)}


def apply(name, x, a, b):
    return {"relu": lambda: np.maximum(x, 0), "tanh": lambda: np.tanh(x), "sigmoid": lambda: 1 / (1 + np.exp(-x)),
            "softsign": lambda: x / (1 + np.abs(x)), "softplus": lambda: np.log1p(np.exp(x)),
            "affine": lambda: a * x + b, "leakyrelu": lambda: np.where(x >= 0, x, a * x),
            "thresholdedrelu": lambda: np.where(x > a, x, 0), "scaledtanh": lambda: a * np.tanh(b * x),
            "hardsigmoid": lambda: np.clip(a * x + b, 0, 1),
            "elu": lambda: np.where(x >= 0, x, a * (np.exp(x) - 1))}[name]()


def activations(names, alphas, betas, per, dirs):
    """One list of (name, alpha, beta) callables per direction."""
    alphas, betas = list(alphas or []), list(betas or [])
    acts = []
    for n in names:
        count, a, b = ACTIVATIONS[n.lower()]
        if count >= 1 and alphas:
            a = alphas.pop(0)
        if count >= 2 and betas:
            b = betas.pop(0)
        acts.append(lambda x, n=n.lower(), a=a, b=b: apply(n, x, a, b))
    if dirs == 2 and len(acts) == per:
        acts = acts * 2
    return [acts[d * per:(d + 1) * per] for d in range(dirs)]


def cell(kind, x, h, c, w, rw, wb, rb, p, acts, clip, lbr, input_forget):
    """One step for one batch entry: returns the new (h, c)."""
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    hs = rw.shape[1]
    gate = lambda k: w[k * hs:(k + 1) * hs] @ x + wb[k * hs:(k + 1) * hs]  # noqa: E731
    rec = lambda k, v: rw[k * hs:(k + 1) * hs] @ v + rb[k * hs:(k + 1) * hs]  # noqa: E731
    if kind == "RNN":
        return acts[0](cl(gate(0) + rec(0, h))), None
    if kind == "GRU":
        z = acts[0](cl(gate(0) + rec(0, h)))
        rr = acts[0](cl(gate(1) + rec(1, h)))
        if lbr:
            hh = acts[1](cl(gate(2) + rr * rec(2, h)))
        else:
            hh = acts[1](cl(gate(2) + rec(2, rr * h)))
        return (1 - z) * hh + z * h, None
    i = acts[0](cl(gate(0) + rec(0, h) + p[0:hs] * c))
    f = 1 - i if input_forget else acts[0](cl(gate(2) + rec(2, h) + p[2 * hs:3 * hs] * c))
    cc = acts[1](cl(gate(3) + rec(3, h)))
    c = f * c + i * cc
    o = acts[0](cl(gate(1) + rec(1, h) + p[hs:2 * hs] * c))
    return o * acts[2](c), c


def run(kind, x, w, rw, b, lens, h0, c0, p, acts, reverse, clip=None, layout=0, lbr=0, input_forget=0):
    if layout:
        x = x.swapaxes(0, 1)
        h0, c0 = (None if v is None else v.swapaxes(0, 1) for v in (h0, c0))
    seq, batch = x.shape[:2]
    dirs, hs = rw.shape[0], rw.shape[2]
    gates = rw.shape[1] // hs
    reverse = [False, True] if dirs == 2 else [reverse]
    y = np.zeros((seq, dirs, batch, hs))
    yh, yc = np.zeros((dirs, batch, hs)), np.zeros((dirs, batch, hs))
    for d in range(dirs):
        wb = b[d][:gates * hs] if b is not None else np.zeros(gates * hs)
        rb = b[d][gates * hs:] if b is not None else np.zeros(gates * hs)
        pd = p[d] if p is not None else np.zeros(3 * hs)
        for bi in range(batch):
            length = seq if lens is None else lens[bi]
            h = h0[d, bi] if h0 is not None else np.zeros(hs)
            c = c0[d, bi] if c0 is not None else np.zeros(hs)
            steps = range(length - 1, -1, -1) if reverse[d] else range(length)
            for t in steps:
                h, c2 = cell(kind, x[t, bi], h, c, w[d], rw[d], wb, rb, pd, acts[d], clip, lbr, input_forget)
                c = c if c2 is None else c2
                y[t, d, bi] = h
            yh[d, bi], yc[d, bi] = h, c
    if layout:
        return y.transpose(2, 0, 1, 3), yh.swapaxes(0, 1), yc.swapaxes(0, 1)
    return y, yh, yc


def write_case(out, name, node, inputs, initializers, outputs, opset=22):
    """inputs/initializers/outputs: lists of (name, array)."""
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    info = lambda n, a: helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)  # noqa: E731
    graph = helper.make_graph([node], name, [info(n, a) for n, a in inputs], [info(n, a) for n, a in outputs],
                              initializer=[numpy_helper.from_array(a, n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for kind, values in (("input", inputs), ("output", outputs)):
        for k, (n, a) in enumerate(values):
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
DEFAULTS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}


def case(out, name, kind, seq=4, batch=3, inp=2, hs=3, direction="forward", layout=0, dtype=np.float32,
         bias=True, lens=None, lens_input=False, h0=False, c0=False, peep=False, names=None, alphas=None,
         betas=None, clip=None, lbr=0, input_forget=0):
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[kind]
    rand = lambda *s: (r.standard_normal(s) * 0.7).astype(dtype)  # noqa: E731
    x = rand(*((batch, seq, inp) if layout else (seq, batch, inp)))
    w, rw = rand(dirs, g * hs, inp), rand(dirs, g * hs, hs)
    b = rand(dirs, 2 * g * hs) if bias else None
    state = lambda: rand(*((batch, dirs, hs) if layout else (dirs, batch, hs)))  # noqa: E731
    hv = state() if h0 else None
    cv = state() if c0 else None
    p = rand(dirs, 3 * hs) if peep else None
    lv = None if lens is None else np.array(lens, np.int32)
    acts = activations(names or DEFAULTS[kind], alphas, betas, len(DEFAULTS[kind]), dirs)
    ys = run(kind, *(v.astype(np.float64) if v is not None and v.dtype != np.int32 else v
                     for v in (x, w, rw, b, lv, hv, cv, p)),
             acts, direction == "reverse", clip, layout, lbr, input_forget)
    order = [("X", x), ("W", w), ("R", rw), ("B", b), ("sequence_lens", lv), ("initial_h", hv)]
    if kind == "LSTM":
        order += [("initial_c", cv), ("P", p)]
    while order[-1][1] is None:
        order.pop()
    inputs = [(n, a) for n, a in order if a is not None and (n != "sequence_lens" or lens_input)]
    inits = [(n, a) for n, a in order if a is not None and n == "sequence_lens" and not lens_input]
    attrs = {"hidden_size": hs, "direction": direction, "layout": layout}
    for k, v in (("activations", names), ("activation_alpha", alphas), ("activation_beta", betas), ("clip", clip)):
        if v is not None:
            attrs[k] = v
    if kind == "GRU":
        attrs["linear_before_reset"] = lbr
    if kind == "LSTM":
        attrs["input_forget"] = input_forget
    outs = ["Y", "Y_h", "Y_c"][:2 if kind != "LSTM" else 3]
    node = helper.make_node(kind, [n if a is not None else "" for n, a in order], outs, **attrs)
    write_case(out, name, node, inputs, inits, [(n, v.astype(dtype)) for n, v in zip(outs, ys)])


def main(out):
    case(out, "test_kiln_rnn_activations_bidirectional", "RNN", direction="bidirectional",
         names=["LeakyRelu", "ScaledTanh"], alphas=[0.3, 1.5], betas=[0.8], h0=True)
    case(out, "test_kiln_rnn_seq_lens_clip", "RNN", direction="bidirectional", lens=[4, 1, 2], clip=0.6, h0=True)
    case(out, "test_kiln_rnn_seq_lens_input_reverse", "RNN", direction="reverse", lens=[2, 4, 0], lens_input=True,
         names=["Softsign"])
    case(out, "test_kiln_rnn_layout1_initial_h", "RNN", layout=1, h0=True, names=["Elu"], alphas=[0.5])
    case(out, "test_kiln_gru_linear_before_reset", "GRU", lbr=1, h0=True, direction="bidirectional")
    case(out, "test_kiln_gru_activations_clip", "GRU", names=["HardSigmoid", "Affine"], alphas=[0.3, 0.9],
         betas=[0.4, 0.1], clip=0.8)
    case(out, "test_kiln_gru_seq_lens_layout1", "GRU", layout=1, lens=[3, 4, 1], direction="bidirectional", h0=True)
    case(out, "test_kiln_gru_no_bias_lbr_float64", "GRU", bias=False, lbr=1, dtype=np.float64, names=["Sigmoid", "Softplus"])
    case(out, "test_kiln_lstm_input_forget_peepholes_clip", "LSTM", input_forget=1, peep=True, clip=0.7, h0=True,
         c0=True)
    case(out, "test_kiln_lstm_activations", "LSTM", names=["HardSigmoid", "ScaledTanh", "ThresholdedRelu"],
         alphas=[0.25, 0.9, 0.1], betas=[0.45, 1.2])
    case(out, "test_kiln_lstm_seq_lens_bidirectional_layout1", "LSTM", layout=1, direction="bidirectional",
         lens=[2, 4, 3], h0=True, c0=True, peep=True)
    case(out, "test_kiln_gru_float16", "GRU", dtype=np.float16, h0=True, seq=3)
    case(out, "test_kiln_lstm_reverse_float64", "LSTM", direction="reverse", dtype=np.float64, peep=True,
         names=["Sigmoid", "Tanh", "Relu"])


if __name__ == "__main__":
    main(sys.argv[1])
