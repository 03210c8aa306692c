#!/usr/bin/python3
"""Writes an MNIST-shaped MLP in kiln text IR, the demo program of `kiln run`:

    x: float {1, 28, 28} -> reshape {1, 784} -> dot W1 {784, H} -> add b1 -> relu
                          -> dot W2 {H, 10} -> add b2 -> softmax(axis=1) -> @return

The weights are random (seeded, He-initialised), not trained: the program has a real model's
shape and arithmetic, but its outputs mean nothing. Runs with Debian's python3-numpy.

    /usr/bin/python3 scripts/make_mnist_mlp.py mlp.kir
    kiln run mlp.kir

--expect-fill1 prints what the program returns for an all-ones input (`kiln run mlp.kir
--fill1`), computed here with numpy the way kiln's ref interpreter does: each op in double,
its result rounded to float32.
"""
import argparse
import sys

import numpy as np

F32 = np.float32


def make_weights(seed, hidden):
    rng = np.random.default_rng(seed)

    def he(fan_in, fan_out):
        return (rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)).astype(F32)

    # Small non-zero biases, so that a dropped add would show in the output.
    return {
        "w1": he(784, hidden),
        "b1": rng.uniform(-0.1, 0.1, hidden).astype(F32),
        "w2": he(hidden, 10),
        "b2": rng.uniform(-0.1, 0.1, 10).astype(F32),
    }


def shape_text(lens):
    strides = [int(np.prod(lens[i + 1:])) for i in range(len(lens))]
    return "float_type, {%s}, {%s}" % (", ".join(map(str, lens)), ", ".join(map(str, strides)))


def literal_text(a):
    # str() of a float32 is its shortest round-tripping form.
    return "{" + ", ".join(str(v) for v in a.reshape(-1)) + "}"


def program_text(w):
    hidden = w["w1"].shape[1]
    lines = [
        'module: "main"',
        "x = @param:x -> " + shape_text([1, 28, 28]),
        "@0 = @literal%s -> %s" % (literal_text(w["w1"]), shape_text([784, hidden])),
        "@1 = @literal%s -> %s" % (literal_text(w["b1"]), shape_text([hidden])),
        "@2 = @literal%s -> %s" % (literal_text(w["w2"]), shape_text([hidden, 10])),
        "@3 = @literal%s -> %s" % (literal_text(w["b2"]), shape_text([10])),
        "@4 = reshape[dims={-1, 784}](x) -> " + shape_text([1, 784]),
        "@5 = dot(@4,@0) -> " + shape_text([1, hidden]),
        "@6 = add(@5,@1) -> " + shape_text([1, hidden]),   # numpy broadcasting: {hidden} -> {1, hidden}
        "@7 = relu(@6) -> " + shape_text([1, hidden]),
        "@8 = dot(@7,@2) -> " + shape_text([1, 10]),
        "@9 = add(@8,@3) -> " + shape_text([1, 10]),
        "@10 = softmax[axis=1](@9) -> " + shape_text([1, 10]),
        "@11 = @return(@10)",
    ]
    return "\n".join(lines) + "\n"


def reference(w, x):
    def f32(a):
        return np.asarray(a, dtype=np.float64).astype(F32)

    d = np.float64
    h = f32(x.reshape(1, 784).astype(d) @ w["w1"].astype(d))
    h = f32(h.astype(d) + w["b1"].astype(d))
    h = np.maximum(h, F32(0))
    o = f32(h.astype(d) @ w["w2"].astype(d))
    o = (o.astype(d) + w["b2"].astype(d)).astype(F32).astype(d)
    e = np.exp(o - o.max(axis=1, keepdims=True))
    return f32(e / e.sum(axis=1, keepdims=True))


def main():
    ap = argparse.ArgumentParser(description="Writes an MNIST-shaped MLP with random weights in kiln text IR.")
    ap.add_argument("output", nargs="?", default="mlp.kir", help="where to write the program (default mlp.kir)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random weights (default 0)")
    ap.add_argument("--hidden", type=int, default=128, help="width of the hidden layer (default 128)")
    ap.add_argument("--expect-fill1", action="store_true",
                    help="print the output for an all-ones input, as 'kiln run --fill1 --print-all' does")
    args = ap.parse_args()
    w = make_weights(args.seed, args.hidden)
    with open(args.output, "w") as f:
        f.write(program_text(w))
    if args.expect_fill1:
        out = reference(w, np.ones((1, 28, 28), dtype=F32))
        print("{" + ", ".join(repr(float(v)) for v in out.reshape(-1)) + "}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
