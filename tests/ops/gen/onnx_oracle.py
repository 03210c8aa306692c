"""Runs one ONNX node on numpy inputs with onnx's reference evaluator: the oracle for ops whose
numpy form is long (resize, scatter, gather)."""
import numpy as np
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

OPSET = 19


def run_node(op_type, inputs, n_outputs=1, opset=OPSET, **attrs):
    """inputs: numpy arrays, or None for an omitted optional input. Returns the list of outputs."""
    names = [f"in{i}" if x is not None else "" for i, x in enumerate(inputs)]
    outs = [f"out{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outs, **attrs)
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
                    for n, x in zip(names, inputs) if x is not None]
    graph_outputs = [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in outs]
    graph = helper.make_graph([node], "one_node", graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    feeds = {n: x for n, x in zip(names, inputs) if x is not None}
    return [np.asarray(y) for y in ReferenceEvaluator(model).run(None, feeds)]
