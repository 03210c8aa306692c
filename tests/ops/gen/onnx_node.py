"""Cases for the ONNX frontend's onnx_node op (src/frontends/onnx/deferred.cpp): a node whose
mapping needs run-time values, here a Reshape whose target shape is an input, and a TopK whose K is."""
import base64

import numpy as np
from onnx import helper

from caselib import case, rng, tensor, write


def node_attrs(node, opset, outputs):
    return {"op_type": node.op_type,
            "node": {"bytes": base64.b64encode(node.SerializeToString()).decode()},
            "opsets": {"": opset},
            "outputs": outputs}


def dyn(type_name, rank):
    return {"type": type_name, "dyn_dims": [{"min": 0, "max": 2**62 // 4 - 1, "optimals": [], "symbol": ""}] * rank}


r = rng(7)
cases = []
x = r.standard_normal((2, 3, 4)).astype(np.float32)
for dims in ([4, 6], [-1, 2], [0, 12]):
    node = helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape_at_run_time")
    want = x.reshape(np.where(np.array(dims) == 0, np.array(x.shape[:len(dims)]), dims))
    cases.append(case(f"reshape_{'_'.join(str(d).replace('-', 'm') for d in dims)}", "onnx_node",
                      [tensor(x), tensor(np.array(dims, np.int64))], [tensor(want)],
                      node_attrs(node, 14, [dyn("float32", 2)])))

v = r.standard_normal((3, 5)).astype(np.float32)
k = 2
idx = np.argsort(-v, axis=1, kind="stable")[:, :k]
node = helper.make_node("TopK", ["v", "k"], ["values", "indices"], name="topk_at_run_time")
cases.append(case("topk_k_input", "onnx_node", [tensor(v), tensor(np.array([k], np.int64))],
                  [tensor(np.take_along_axis(v, idx, 1)), tensor(idx.astype(np.int64))],
                  node_attrs(node, 11, [dyn("float32", 2), dyn("int64", 2)])))
write("onnx_node", cases)
