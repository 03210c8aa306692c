"""Cases for src/ops/unique.cpp (unique and compress), computed with numpy's unique and compress.
ONNX's unique without an axis is unique of the flattened input with axis 0, so every case gives
an axis."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(7)
cases = []


def add_unique(name, x, axis=0, sorted=True):
    # 1-D inputs take numpy's flat form, which (as ONNX's reference) counts NaNs as one value.
    np_axis = None if x.ndim == 1 else axis
    y, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True,
                                          axis=np_axis)
    inverse = inverse.reshape(-1)
    if not sorted:
        order = np.argsort(first, kind="stable")
        place = np.empty_like(order)
        place[order] = np.arange(len(order))
        y = np.take(y, order, axis=axis)
        first, counts, inverse = first[order], counts[order], place[inverse]
    outs = [y, first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)]
    cases.append(case(name, "unique", [tensor(x)], [tensor(o) for o in outs], {"axis": axis, "sorted": sorted}))


flat = r.integers(-4, 5, 20).astype(np.float32)
add_unique("flat_sorted", flat)
add_unique("flat_unsorted", flat, sorted=False)
add_unique("flat_int64", r.integers(-3, 3, 15).astype(np.int64))
add_unique("flat_big_int64", np.array([2**60 + 1, 2**60, 2**60 + 1, -2**62], np.int64))
add_unique("flat_uint8_unsorted", r.integers(0, 4, 12).astype(np.uint8), sorted=False)
add_unique("flat_bool", np.array([True, False, True, True]))
add_unique("flat_all_distinct", r.standard_normal(7).astype(np.float64))
add_unique("flat_one_element", np.array([3.5], np.float32))
add_unique("flat_empty", np.zeros(0, np.float32))
add_unique("flat_nan_collapses", np.array([1, np.nan, 0, np.nan, 1], np.float32))
add_unique("flat_f16", r.integers(-2, 3, 9).astype(np.float16))
rows = r.integers(0, 2, (6, 3)).astype(np.float32)
add_unique("rows_sorted", rows, axis=0)
add_unique("rows_unsorted", rows, axis=0, sorted=False)
add_unique("columns", rows.T.copy(), axis=1)
add_unique("negative_axis", rows.T.copy(), axis=-1, sorted=False)
x3 = np.repeat(r.integers(0, 3, (2, 3, 2)), 2, axis=1).astype(np.int32)
add_unique("3d_middle_axis", x3, axis=1)
add_unique("3d_middle_axis_unsorted", x3, axis=1, sorted=False)
add_unique("3d_first_axis", np.concatenate([x3, x3[:1]], axis=0), axis=0)

f = "float32"
cases.append(error_case("unique_scalar", "unique", [shape_only(f, [])], "input 0 has 0 dims"))
cases.append(error_case("unique_bad_axis", "unique", [shape_only(f, [2, 3])], "axis=2 is out of range", {"axis": 2}))


def add_compress(name, x, cond, axis=0):
    y = np.compress(cond, x, axis=axis)
    cases.append(case("compress_" + name, "compress", [tensor(x), tensor(np.array(cond, bool))], [tensor(y)], {"axis": axis}))


m = r.standard_normal((4, 5)).astype(np.float32)
add_compress("rows", m, [True, False, True, True])
add_compress("columns", m, [False, True, False, True, True], axis=1)
add_compress("negative_axis", m, [True, False, False, False, True], axis=-1)
add_compress("short_condition", m, [False, True], axis=0)
add_compress("none_kept", m, [False] * 4)
add_compress("all_kept", m, [True] * 5, axis=1)
add_compress("flat_int64", r.integers(-9, 9, 12).astype(np.int64), r.integers(0, 2, 12).astype(bool))
add_compress("3d_middle", r.standard_normal((2, 3, 2)), [True, False, True], axis=1)
add_compress("f16", r.standard_normal((3, 2)).astype(np.float16), [False, True, True])
add_compress("empty_condition", m, np.zeros(0, bool), axis=1)
cases.append(error_case("compress_long_condition", "compress", [shape_only(f, [2, 3]), shape_only("bool", [4])],
                        "the condition has 4 values but dim 0 has 2"))
cases.append(error_case("compress_int_condition", "compress", [shape_only(f, [2, 3]), shape_only("int32", [2])],
                        "expected bool"))
cases.append(error_case("compress_2d_condition", "compress", [shape_only(f, [2, 3]), shape_only("bool", [2, 1])],
                        "input 1 has 2 dims"))
cases.append(error_case("compress_bad_axis", "compress", [shape_only(f, [2, 3]), shape_only("bool", [2])],
                        "axis=-3 is out of range", {"axis": -3}))
write("unique", cases)
