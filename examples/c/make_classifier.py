"""Writes a small ONNX classifier for the C example: x[batch, 64] -> Gemm -> Relu -> Gemm -> Softmax
over 100 classes, with seeded weights. Usage: python make_classifier.py OUT.onnx"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
w1 = numpy_helper.from_array(rng.standard_normal((64, 128)).astype(np.float32), "w1")
b1 = numpy_helper.from_array(rng.standard_normal(128).astype(np.float32), "b1")
w2 = numpy_helper.from_array(rng.standard_normal((128, 100)).astype(np.float32), "w2")
b2 = numpy_helper.from_array(rng.standard_normal(100).astype(np.float32), "b2")
nodes = [
    helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
    helper.make_node("Relu", ["h"], ["r"], name="relu"),
    helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"], name="fc2"),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
]
graph = helper.make_graph(nodes, "classifier",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
                          [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 100])],
                          [w1, b1, w2, b2])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
with open(sys.argv[1], "wb") as f:
    f.write(model.SerializeToString())
