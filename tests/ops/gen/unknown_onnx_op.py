"""Cases for the ONNX frontend's unknown_onnx_op (src/frontends/onnx/map_unknown.cpp): the
placeholder --skip-unknown-operators leaves for a node kiln cannot map. Its shape is the
declared one, and running it fails naming the node, so every case is an error case."""
import numpy as np

from caselib import error_case, rng, shape_only, tensor, write

SKIPPED = "is not supported; it was skipped at parse time with --skip-unknown-operators"


def attrs(op_type, domain, node, outputs):
    return {"op_type": op_type, "domain": domain, "node": node, "outputs": outputs}


r = rng(11)
x = r.standard_normal((2, 3)).astype(np.float32)
cases = [
    error_case("run_fails_naming_the_node", "unknown_onnx_op", [tensor(x)],
               f"ONNX op FooOp (node 'foo') {SKIPPED}",
               attrs("FooOp", "", "foo", [shape_only("float32", [2, 3])])),
    error_case("two_outputs_run_fails", "unknown_onnx_op", [tensor(x)],
               f"ONNX op Split2 (node 'custom/split') {SKIPPED}",
               attrs("Split2", "com.example", "custom/split",
                     [shape_only("int64", [3]), shape_only("float32", [2, 3])])),
    error_case("no_outputs", "unknown_onnx_op", [shape_only("float32", [2, 3])], "has no outputs",
               attrs("FooOp", "", "foo", [])),
]
write("unknown_onnx_op", cases)
