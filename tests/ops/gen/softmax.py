"""Cases for src/ops/softmax.cpp (softmax, logsoftmax along one axis, ONNX opset 13), computed
with numpy in float64 and rounded once to the element type."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(11)
cases = []


def softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def logsoftmax(x, axis):
    s = x - np.max(x, axis=axis, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


FNS = {"softmax": softmax, "logsoftmax": logsoftmax}


def add(name, op, x, axis=None):
    attrs = {} if axis is None else {"axis": axis}
    y = FNS[op](x.astype(np.float64), -1 if axis is None else axis).astype(x.dtype)
    cases.append(case(name, op, [tensor(x)], [tensor(y)], attrs))


x3 = (r.standard_normal((3, 4, 5)) * 2).astype(np.float32)
for op in FNS:
    add(f"{op}_default_axis", op, x3)
    add(f"{op}_axis0", op, x3, 0)
    add(f"{op}_axis1", op, x3, 1)
    add(f"{op}_neg_axis", op, x3, -2)
    add(f"{op}_1d", op, r.standard_normal((7,)).astype(np.float32))
    add(f"{op}_4d", op, r.standard_normal((2, 3, 2, 3)).astype(np.float32), 1)
    add(f"{op}_f16", op, (r.standard_normal((4, 6)) * 3).astype(np.float16))
    add(f"{op}_f64", op, r.standard_normal((3, 5)), 0)
    # Large inputs: the max is subtracted first, so exp does not overflow.
    add(f"{op}_large", op, np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1002.0, -1001.0]], np.float32))
    add(f"{op}_single", op, r.standard_normal((4, 1)).astype(np.float32))
    cases.append(case(f"{op}_empty", op, [tensor(np.zeros((0, 3), np.float32))],
                      [tensor(np.zeros((0, 3), np.float32))], {"axis": 0}))
    cases += [
        error_case(f"{op}_axis_out_of_range", op, [shape_only("float32", [2, 3])],
                   "axis=2 is out of range for 2 dims", {"axis": 2}),
        error_case(f"{op}_int", op, [shape_only("int32", [2, 3])], "expected a float type"),
        error_case(f"{op}_two_inputs", op, [shape_only("float32", [3])] * 2, "expected 1 input, got 2"),
        error_case(f"{op}_scalar", op, [shape_only("float32", [])], "axis=-1 is out of range for 0 dims"),
    ]

write("softmax", cases)
