#!/usr/bin/env python3
"""Writes a GPT-like transformer decoder as ONNX, decomposed the way exporters write GPT-2: token
embedding (Gather of int64 ids) plus a learned position embedding, pre-LayerNorm blocks of causal
self-attention (MatMul/Div/Add of a constant causal mask/Softmax/MatMul with the head reshapes)
and an MLP with GELU in its tanh form, a final LayerNorm and the LM head (logits over the
vocabulary). Random weights, seeded; the layers reuse make_encoder_onnx's builder.

    make_decoder_onnx.py OUT.onnx [--layers N] [--hidden H] [--heads A] [--seq S] [--vocab V] [--batch B]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_encoder_onnx import builder  # noqa: E402


def gelu_tanh(b, x):
    # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
    cube = b.op("Mul", [b.op("Pow", [x, b.const(np.float32(3))]), b.const(np.float32(0.044715))])
    inner = b.op("Mul", [b.op("Add", [x, cube]), b.const(np.float32(np.sqrt(2 / np.pi)))])
    t = b.op("Add", [b.op("Tanh", [inner]), b.const(np.float32(1))])
    return b.op("Mul", [b.op("Mul", [x, t]), b.const(np.float32(0.5))])


def block(b, x, mask, h, heads):
    x = b.op("Add", [x, b.attention(b.layer_norm(x, h), mask, h, heads)])
    f = b.linear(gelu_tanh(b, b.linear(b.layer_norm(x, h), h, 4 * h)), 4 * h, h)
    return b.op("Add", [x, f])


def make(layers, hidden, heads, seq, vocab, batch, seed=0):
    b = builder(seed)
    # Position s attends to positions <= s: 0 on and below the diagonal, a large negative above.
    causal = np.triu(np.full((seq, seq), -1e9, np.float32), k=1).reshape(1, 1, seq, seq)
    mask = b.const(causal, "causal_mask")
    x = b.op("Gather", [b.weight(vocab, hidden), "input_ids"], axis=0)
    x = b.op("Add", [x, b.weight(seq, hidden)])
    for _ in range(layers):
        x = block(b, x, mask, hidden, heads)
    logits = b.op("MatMul", [b.layer_norm(x, hidden), b.weight(hidden, vocab)])
    graph = helper.make_graph(
        b.nodes, "decoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch, seq])],
        [helper.make_tensor_value_info(logits, TensorProto.FLOAT, [batch, seq, vocab])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=1)
    a = ap.parse_args()
    model = make(a.layers, a.hidden, a.heads, a.seq, a.vocab, a.batch)
    onnx.save(model, a.out)
    print(f"{a.out}: {len(model.graph.node)} nodes, {a.layers} layers")


if __name__ == "__main__":
    main()
