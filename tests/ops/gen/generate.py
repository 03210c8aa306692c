"""Cases for src/ops/generate.cpp (range, nonzero, one_hot, shape_of), computed with numpy from the
ONNX formulas (Range, NonZero, OneHot with float indices truncated to int64, Shape)."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(3)
cases = []


def add_range(name, start, limit, delta, dt):
    s, l, d = (np.array(v, dt) for v in (start, limit, delta))
    n = max(int(np.ceil((float(l) - float(s)) / float(d))), 0)
    if np.dtype(dt).kind == "f":
        y = (float(s) + np.arange(n) * float(d)).astype(dt)
    else:
        y = (int(s) + np.arange(n, dtype=np.int64) * int(d)).astype(dt)
    cases.append(case(name, "range", [tensor(s), tensor(l), tensor(d)], [tensor(y)]))


add_range("range_int64", 2, 11, 3, np.int64)
add_range("range_int32_negative_delta", 10, -3, -4, np.int32)
add_range("range_int16_exact", -6, 6, 2, np.int16)
add_range("range_float32", 0.5, 3.7, 0.4, np.float32)
add_range("range_float64_negative", 1.0, -2.25, -0.75, np.float64)
add_range("range_float16", -1.0, 1.0, 0.25, np.float16)
add_range("range_empty", 5, 2, 1, np.int64)
add_range("range_float_empty", 1.0, 1.0, 0.5, np.float32)


def add_nonzero(name, x):
    cases.append(case(name, "nonzero", [tensor(x)], [tensor(np.array(np.nonzero(x), np.int64).reshape(x.ndim, -1))]))


add_nonzero("nonzero_float32", np.where(r.random((3, 4)) < 0.5, 0, r.standard_normal((3, 4))).astype(np.float32))
add_nonzero("nonzero_int32_1d", r.integers(-2, 3, (9,)).astype(np.int32))
add_nonzero("nonzero_bool_3d", r.random((2, 3, 2)) < 0.4)
add_nonzero("nonzero_f16_nan", np.array([[0, np.nan], [1.5, -0.0]], np.float16))
add_nonzero("nonzero_none", np.zeros((2, 3), np.int8))


def add_one_hot(name, indices, depth, values, axis=-1):
    i = np.trunc(indices).astype(np.int64) if indices.dtype.kind == "f" else indices.astype(np.int64)
    i = np.where(i < 0, i + depth, i)
    ax = axis if axis >= 0 else axis + indices.ndim + 1
    hot = np.expand_dims(i, ax) == np.arange(depth).reshape([-1 if d == ax else 1 for d in range(indices.ndim + 1)])
    y = np.where(hot, values[1], values[0]).astype(values.dtype)
    cases.append(case(name, "one_hot", [tensor(indices), tensor(values)], [tensor(y)], {"depth": depth, "axis": axis}))


onoff = np.array([-1.5, 2.0], np.float32)
add_one_hot("one_hot_last_axis", r.integers(0, 4, (2, 3)).astype(np.int64), 4, onoff)
add_one_hot("one_hot_axis0", r.integers(-5, 5, (4,)).astype(np.int32), 5, onoff, axis=0)
add_one_hot("one_hot_middle_axis", r.integers(-3, 3, (2, 2)).astype(np.int64), 3, np.array([0, 7], np.int32),
            axis=1)
add_one_hot("one_hot_negative_axis", r.integers(0, 3, (3, 2)).astype(np.int64), 3, np.array([0.5, 1], np.float16),
            axis=-2)
add_one_hot("one_hot_out_of_range_is_off", np.array([0, 4, -5, 3, -4, 9], np.int64), 4, onoff)
add_one_hot("one_hot_float_indices", np.array([[1.7, -1.5], [2.2, 0.0]], np.float32), 3, onoff)


def add_shape_of(name, lens, **attrs):
    rank = len(lens)
    start = attrs.get("start", 0)
    end = attrs.get("end", rank)
    y = np.array(lens[slice(*slice(start, end).indices(rank)[:2])], np.int64)
    x = r.standard_normal(lens).astype(np.float32)
    cases.append(case(name, "shape_of", [tensor(x)], [tensor(y)], attrs))


add_shape_of("shape_of", [2, 3, 4])
add_shape_of("shape_of_start", [2, 3, 4, 1], start=1)
add_shape_of("shape_of_negative_bounds", [2, 3, 4, 5], start=-3, end=-1)
add_shape_of("shape_of_clamped_bounds", [2, 3], start=-7, end=9)
add_shape_of("shape_of_empty_slice", [2, 3, 4], start=2, end=1)
add_shape_of("shape_of_scalar", [])
cases.append(case("shape_of_int8", "shape_of", [tensor(np.ones((5, 1), np.int8))], [tensor(np.array([5, 1]))]))


def err(name, op, inputs, message, **attrs):
    cases.append(error_case(name, op, inputs, message, attrs))


scalar = lambda v, dt=np.int64: tensor(np.array(v, dt))
err("range_zero_delta", "range", [scalar(0), scalar(5), scalar(0)], "delta is 0")
err("range_float_zero_delta", "range", [scalar(0, np.float32), scalar(1, np.float32), scalar(0, np.float32)],
    "delta is 0")
err("range_not_scalar", "range", [shape_only("int64", []), shape_only("int64", [1]), shape_only("int64", [])],
    "input 1 has 1 dims")
err("range_mixed_types", "range", [shape_only("int64", []), shape_only("int32", []), shape_only("int64", [])],
    "input 1 is int32_type but input 0 is int64_type")
err("range_bool", "range", [shape_only("bool", [])] * 3, "expected a numeric type")
err("one_hot_zero_depth", "one_hot", [shape_only("int64", [3]), shape_only("float32", [2])],
    "depth=0; expected a positive depth", depth=0)
err("one_hot_values_length", "one_hot", [shape_only("int64", [3]), shape_only("float32", [3])],
    "input 1 (values) has 3 elements; expected 2", depth=4)
err("one_hot_bad_axis", "one_hot", [shape_only("int64", [3]), shape_only("float32", [2])],
    "axis=2 is out of range for 2 dims", depth=4, axis=2)
err("nonzero_two_inputs", "nonzero", [shape_only("float32", [3])] * 2, "expected 1 input, got 2")
write("generate", cases)
