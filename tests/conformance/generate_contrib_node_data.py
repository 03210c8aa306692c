"""Writes node test cases for ONNX Runtime contrib ops (domain com.microsoft) in the layout of the
ONNX backend node tests (model.onnx + test_data_set_0/{input,output}_K.pb), with expected outputs
from numpy following the ONNX Runtime contrib-op specs. The onnx package has no reference for
these ops, so kiln's mappings are checked against these.
Usage: .venv/bin/python tests/conformance/generate_contrib_node_data.py OUT_DIR
then:  build/tests/kiln_onnx_conformance --data OUT_DIR
"""
import math
import os
import shutil
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

r = np.random.default_rng(7)
erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def layer_norm(x, gamma, beta, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def rms_norm(x, gamma, eps):
    return x / np.sqrt((x**2).mean(-1, keepdims=True) + eps) * gamma


def write_case(out, name, op, inputs, outputs, **attrs):
    """inputs/outputs: lists of (name, array); an output name "" is an absent output."""
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    info = lambda n, a: helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)  # noqa: E731
    node = helper.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], domain="com.microsoft", **attrs)
    graph = helper.make_graph([node], name, [info(n, a) for n, a in inputs if n],
                              [info(n, a) for n, a in outputs if n])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for kind, values in (("input", [v for v in inputs if v[0]]), ("output", [v for v in outputs if v[0]])):
        for k, (n, a) in enumerate(values):
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


def f32(*shape, scale=1.0):
    return (r.standard_normal(shape) * scale).astype(np.float32)


def main(out):
    x, b = f32(2, 3, 8, scale=2), f32(8)
    write_case(out, "test_ms_gelu", "Gelu", [("X", x)], [("Y", gelu(x).astype(np.float32))])
    write_case(out, "test_ms_bias_gelu", "BiasGelu", [("A", x), ("B", b)], [("C", gelu(x + b).astype(np.float32))])
    write_case(out, "test_ms_fast_gelu", "FastGelu", [("X", x)], [("Y", gelu_tanh(x).astype(np.float32))])
    write_case(out, "test_ms_fast_gelu_bias", "FastGelu", [("X", x), ("bias", b)],
               [("Y", gelu_tanh(x + b).astype(np.float32))])
    write_case(out, "test_ms_quick_gelu", "QuickGelu", [("X", x)],
               [("Y", (x / (1 + np.exp(-1.5 * x))).astype(np.float32))], alpha=1.5)

    inp, skip, gamma, beta, bias = f32(2, 3, 8), f32(2, 3, 8), f32(8), f32(8), f32(8)
    s = inp + skip + bias
    write_case(out, "test_ms_skip_layer_norm", "SkipLayerNormalization",
               [("input", inp), ("skip", skip), ("gamma", gamma), ("beta", beta), ("bias", bias)],
               [("output", layer_norm(s, gamma, beta, 1e-5).astype(np.float32)), ("", None), ("", None),
                ("sum", s)], epsilon=1e-5)
    write_case(out, "test_ms_skip_layer_norm_no_beta", "SkipLayerNormalization",
               [("input", inp), ("skip", skip), ("gamma", gamma)],
               [("output", layer_norm(inp + skip, gamma, 0, 1e-12).astype(np.float32))])
    write_case(out, "test_ms_skip_simplified_layer_norm", "SkipSimplifiedLayerNormalization",
               [("input", inp), ("skip", skip), ("gamma", gamma), ("bias", bias)],
               [("output", rms_norm(s, gamma, 1e-6).astype(np.float32)), ("", None), ("", None), ("sum", s)],
               epsilon=1e-6)
    print(f"contrib node cases written to {out}")


if __name__ == "__main__":
    main(sys.argv[1])
