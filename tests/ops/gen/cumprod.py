"""Cases for src/ops/cumprod.cpp (ONNX CumProd with the axis as an attribute), computed with numpy:
floats in float64 rounded once to the element type, integers wrapping in their own type."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(17)
cases = []


def cumprod(x, axis, exclusive, reverse):
    w = x.astype(np.float64) if x.dtype.kind == "f" else x
    if reverse:
        w = np.flip(w, axis)
    if exclusive:
        # Shift by one along the axis, a 1 in front.
        ones = np.ones_like(np.take(w, [0], axis=axis))
        w = np.concatenate([ones, np.delete(w, -1, axis=axis)], axis=axis) if w.shape[axis] else w
    with np.errstate(over="ignore"):
        y = np.cumprod(w, axis=axis, dtype=w.dtype)
    if reverse:
        y = np.flip(y, axis)
    return y.astype(x.dtype)


def add(name, x, axis=0, exclusive=False, reverse=False):
    attrs = {"axis": axis, "exclusive": exclusive, "reverse": reverse}
    cases.append(case(name, "cumprod", [tensor(x)], [tensor(cumprod(x, axis, exclusive, reverse))], attrs))


x3 = r.uniform(0.5, 1.6, (3, 4, 5)).astype(np.float32) * np.where(r.random((3, 4, 5)) < 0.3, -1, 1).astype(np.float32)
for axis in [0, 1, -1]:
    for exclusive in [False, True]:
        for reverse in [False, True]:
            tag = f"axis{axis}".replace("-", "m") + ("_exclusive" if exclusive else "") + ("_reverse" if reverse else "")
            add(tag, x3, axis, exclusive, reverse)
add("1d", np.arange(1, 7, dtype=np.float32))
add("1d_exclusive_reverse", np.arange(1, 7, dtype=np.float32), 0, True, True)
add("with_zero", np.array([[2, 0, 3], [1, 4, 5]], np.float32), 1, reverse=True)
add("f16", r.uniform(0.5, 2, (4, 6)).astype(np.float16), 1)
add("f64", r.uniform(-2, 2, (3, 5)), 1, reverse=True)
add("int32", r.integers(-5, 6, (3, 4)).astype(np.int32), 1)
add("int32_wraps", np.array([1000, 1000, 1000, -7, 3], np.int32))
add("int64_wraps_exclusive", np.array([[2**40, 2**30, 5], [-3, 2**62, 9]], np.int64), 1, exclusive=True)
add("uint32_reverse", r.integers(0, 70000, (2, 6)).astype(np.uint32), -1, reverse=True)
add("uint64", np.array([2**33, 2**32, 3], np.uint64))
add("empty", np.zeros((2, 0), np.float32), 1)
cases += [
    error_case("axis_out_of_range", "cumprod", [shape_only("float32", [2, 3])], "axis=2 is out of range", {"axis": 2}),
    error_case("bool", "cumprod", [shape_only("bool", [3])], "expected a numeric"),
    error_case("two_inputs", "cumprod", [shape_only("float32", [3])] * 2, "expected 1 input, got 2"),
]
write("cumprod", cases)
