"""Cases for src/ops/topk.cpp, computed with numpy: a stable sort keeps the lower index first among
equal values, as ONNX TopK asks."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(5)
cases = []


def add(name, x, k, axis=-1, largest=True, sorted=True):
    keys = -x.astype(np.float64) if largest else x
    order = np.argsort(keys, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis).astype(np.int64)
    vals = np.take_along_axis(x, idx, axis=axis)
    attrs = {"k": k, "axis": axis, "largest": largest, "sorted": sorted}
    cases.append(case(name, "topk", [tensor(x)], [tensor(vals), tensor(idx)], attrs))


x = r.standard_normal((3, 6)).astype(np.float32)
ties = r.integers(-3, 3, (4, 5)).astype(np.float32)   # many equal values
add("largest_last_axis", x, 3)
add("smallest_last_axis", x, 2, largest=False)
add("axis0", x, 2, axis=0)
add("axis0_smallest", x, 3, axis=0, largest=False)
add("k_is_dim", x, 6)
add("k_zero", x, 0)
add("unsorted_attr", x, 4, sorted=False)
add("ties_largest", ties, 3)
add("ties_smallest", ties, 4, largest=False)
add("ties_axis0", ties, 2, axis=-2)
add("1d", r.standard_normal(9), 4)
add("3d_middle_axis", r.standard_normal((2, 4, 3)).astype(np.float32), 2, axis=1)
add("f16", r.standard_normal((3, 5)).astype(np.float16), 2)
add("int32", r.integers(-20, 20, (3, 7)).astype(np.int32), 3)
add("int64_smallest", r.integers(-2**40, 2**40, (2, 6)).astype(np.int64), 2, largest=False)
add("uint8", r.integers(0, 255, (8,)).astype(np.uint8), 5)
cases.append(case("nan_is_largest", "topk", [tensor(np.array([1, np.nan, 3, -1], np.float32))],
                  [tensor(np.array([np.nan, 3], np.float32)), tensor(np.array([1, 2], np.int64))], {"k": 2}))

cases.append(error_case("k_larger_than_dim", "topk", [shape_only("float32", [3, 4])], "k=5 is larger than dim 1 of size 4",
                        {"k": 5}))
cases.append(error_case("k_negative", "topk", [shape_only("float32", [3, 4])], "k=-1; expected k >= 0", {"k": -1}))
cases.append(error_case("bad_axis", "topk", [shape_only("float32", [3, 4])], "axis=2 is out of range for 2 dims",
                        {"k": 1, "axis": 2}))
cases.append(error_case("bool_input", "topk", [shape_only("bool", [4])], "expected a numeric type", {"k": 1}))
cases.append(error_case("scalar_input", "topk", [shape_only("float32", [])], "input 0 has 0 dims", {"k": 1}))
write("topk", cases)
