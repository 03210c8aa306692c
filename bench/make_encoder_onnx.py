#!/usr/bin/env python3
"""Writes a BERT-like transformer encoder as ONNX the way exporters decompose it: LayerNorm as
ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add, GELU in its Erf form, attention as
MatMul/Div/Add(mask)/Softmax/MatMul with the head reshapes and transposes, and the shape
arithmetic (Shape/Gather/Concat) exporters emit for the reshapes. Random weights, seeded.

    make_encoder_onnx.py OUT.onnx [--layers N] [--hidden H] [--heads A] [--seq S] [--batch B] [--vocab V]

With --vocab the input is token ids (int64 [batch, seq]) looked up in a word-embedding table of V
rows plus a position embedding, as BERT's embeddings are: `--layers 12 --hidden 768 --heads 12
--seq 128 --vocab 30522` has BERT-base's 110M parameters (the front end's load-time benchmark).

With the defaults (30 layers) the graph has about 2,000 nodes, the size the pipeline-time
benchmark uses.
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class builder:
    def __init__(self, seed):
        self.nodes, self.inits, self.n = [], [], 0
        self.rng = np.random.default_rng(seed)

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, value, base="c"):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(value), n))
        return n

    def weight(self, *shape, scale=0.1):
        return self.const((self.rng.standard_normal(shape) * scale).astype(np.float32), "w")

    def op(self, op_type, inputs, **attrs):
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=self.name(op_type), **attrs))
        return out

    def linear(self, x, din, dout):
        return self.op("Add", [self.op("MatMul", [x, self.weight(din, dout)]), self.weight(dout)])

    def layer_norm(self, x, h):
        mean = self.op("ReduceMean", [x], axes=[-1], keepdims=1)
        d = self.op("Sub", [x, mean])
        var = self.op("ReduceMean", [self.op("Pow", [d, self.const(np.float32(2))])], axes=[-1], keepdims=1)
        std = self.op("Sqrt", [self.op("Add", [var, self.const(np.float32(1e-5))])])
        y = self.op("Div", [d, std])
        return self.op("Add", [self.op("Mul", [y, self.weight(h, scale=1.0)]), self.weight(h)])

    def gelu(self, x):
        e = self.op("Erf", [self.op("Div", [x, self.const(np.float32(1.4142135))])])
        return self.op("Mul", [self.op("Mul", [x, self.op("Add", [e, self.const(np.float32(1))])]),
                               self.const(np.float32(0.5))])

    def heads_shape(self, x, heads, dh):
        # Exporters compute the new shape from the input's shape at run time.
        shp = self.op("Shape", [x])
        b = self.op("Unsqueeze", [self.op("Gather", [shp, self.const(np.int64(0))], axis=0), self.const(np.array([0]))])
        s = self.op("Unsqueeze", [self.op("Gather", [shp, self.const(np.int64(1))], axis=0), self.const(np.array([0]))])
        return self.op("Concat", [b, s, self.const(np.array([heads, dh], np.int64))], axis=0)

    def split_heads(self, x, heads, dh, perm):
        return self.op("Transpose", [self.op("Reshape", [x, self.heads_shape(x, heads, dh)])], perm=perm)

    def attention(self, x, mask, h, heads):
        dh = h // heads
        q = self.split_heads(self.linear(x, h, h), heads, dh, [0, 2, 1, 3])
        k = self.split_heads(self.linear(x, h, h), heads, dh, [0, 2, 3, 1])
        v = self.split_heads(self.linear(x, h, h), heads, dh, [0, 2, 1, 3])
        scores = self.op("Div", [self.op("MatMul", [q, k]), self.const(np.float32(np.sqrt(dh)))])
        p = self.op("Softmax", [self.op("Add", [scores, mask])], axis=-1)
        ctx = self.op("Transpose", [self.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
        shp = self.op("Shape", [x])
        merged = self.op("Reshape", [ctx, shp])
        return self.linear(merged, h, h)

    def layer(self, x, mask, h, heads):
        x = self.layer_norm(self.op("Add", [x, self.attention(x, mask, h, heads)]), h)
        f = self.linear(self.gelu(self.linear(x, h, 4 * h)), 4 * h, h)
        return self.layer_norm(self.op("Add", [x, f]), h)


def make(layers, hidden, heads, seq, batch, vocab=0, seed=0):
    b = builder(seed)
    x = "x"
    if vocab:
        words = b.op("Gather", [b.weight(vocab, hidden), "ids"], axis=0)
        x = b.op("Add", [words, b.weight(seq, hidden)])
    # The additive mask broadcasts over heads and query positions: [batch, 1, 1, seq].
    for _ in range(layers):
        x = b.layer(x, "mask", hidden, heads)
    graph = helper.make_graph(
        b.nodes, "encoder",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [batch, seq]) if vocab else
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, hidden]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, [batch, 1, 1, seq])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [batch, seq, hidden])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=30)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=16)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--vocab", type=int, default=0, help="token ids through an embedding table of this many rows")
    a = ap.parse_args()
    model = make(a.layers, a.hidden, a.heads, a.seq, a.batch, a.vocab)
    onnx.save(model, a.out)
    params = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
    print(f"{a.out}: {len(model.graph.node)} nodes, {a.layers} layers, {params / 1e6:.1f}M parameters")


if __name__ == "__main__":
    main()
