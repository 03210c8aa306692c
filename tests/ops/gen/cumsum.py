"""Cases for src/ops/cumsum.cpp (ONNX CumSum with the axis as an attribute), computed with numpy:
floats in float64 rounded once to the element type, integers in int64."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(13)
cases = []


def cumsum(x, axis, exclusive, reverse):
    w = x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)
    if reverse:
        w = np.flip(w, axis)
    y = np.cumsum(w, axis=axis)
    if exclusive:
        y = y - w
    if reverse:
        y = np.flip(y, axis)
    return y.astype(x.dtype)


def add(name, x, axis=0, exclusive=False, reverse=False):
    attrs = {"axis": axis}
    if exclusive:
        attrs["exclusive"] = True
    if reverse:
        attrs["reverse"] = True
    cases.append(case(name, "cumsum", [tensor(x)], [tensor(cumsum(x, axis, exclusive, reverse))], attrs))


x3 = r.standard_normal((3, 4, 5)).astype(np.float32)
for axis in [0, 1, -1]:
    for exclusive in [False, True]:
        for reverse in [False, True]:
            tag = f"axis{axis}".replace("-", "m") + ("_exclusive" if exclusive else "") + ("_reverse" if reverse else "")
            add(tag, x3, axis, exclusive, reverse)
add("1d", np.arange(1, 7, dtype=np.float32))
add("1d_exclusive_reverse", np.arange(1, 7, dtype=np.float32), 0, True, True)
add("f16", (r.standard_normal((4, 6)) * 4).astype(np.float16), 1)
add("f64", r.standard_normal((3, 5)), 1, reverse=True)
add("int32", r.integers(-100, 100, (3, 4)).astype(np.int32), 1)
add("int64_exclusive", r.integers(-2**40, 2**40, (5, 2)).astype(np.int64), 0, exclusive=True)
add("uint32_reverse", r.integers(0, 1000, (2, 6)).astype(np.uint32), -1, reverse=True)
add("empty", np.zeros((2, 0), np.float32), 1)
cases += [
    error_case("axis_out_of_range", "cumsum", [shape_only("float32", [2, 3])], "axis=-3 is out of range",
               {"axis": -3}),
    error_case("bool", "cumsum", [shape_only("bool", [3])], "expected a numeric"),
    error_case("two_inputs", "cumsum", [shape_only("float32", [3])] * 2, "expected 1 input, got 2"),
]

write("cumsum", cases)
