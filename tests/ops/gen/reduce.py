"""Cases for src/ops/reduce.cpp (reduce_*) and src/ops/arg_reduce.cpp (argmax, argmin), computed
with numpy: float inputs in float64 rounded once to the element type, integers in int64."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(7)
cases = []


def _f64(x):
    return x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)


def log_sum_exp(x, axis, keepdims):
    m = np.max(x, axis=axis, keepdims=True)
    y = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return y if keepdims else np.squeeze(y, axis=axis)


REDUCERS = {
    "reduce_sum": lambda x, a, k: np.sum(x, axis=a, keepdims=k),
    "reduce_mean": lambda x, a, k: np.mean(x, axis=a, keepdims=k),
    "reduce_prod": lambda x, a, k: np.prod(x, axis=a, keepdims=k),
    "reduce_max": lambda x, a, k: np.max(x, axis=a, keepdims=k),
    "reduce_min": lambda x, a, k: np.min(x, axis=a, keepdims=k),
    "reduce_l1": lambda x, a, k: np.sum(np.abs(x), axis=a, keepdims=k),
    "reduce_l2": lambda x, a, k: np.sqrt(np.sum(np.square(x), axis=a, keepdims=k)),
    "reduce_sum_square": lambda x, a, k: np.sum(np.square(x), axis=a, keepdims=k),
    "reduce_log_sum": lambda x, a, k: np.log(np.sum(x, axis=a, keepdims=k)),
    "reduce_log_sum_exp": log_sum_exp,
}
INT_OPS = ["reduce_sum", "reduce_mean", "reduce_prod", "reduce_max", "reduce_min", "reduce_l1", "reduce_l2",
           "reduce_sum_square"]


def add(name, op, x, axes=None, keepdims=True, noop=False, **tol):
    """A reduce case; axes=None means the attribute is left empty (reduce all, or noop)."""
    attrs = {}
    if axes is not None:
        attrs["axes"] = list(axes)
    if not keepdims:
        attrs["keepdims"] = False
    if noop:
        attrs["noop_with_empty_axes"] = True
    if noop and not axes:
        y = x.copy()
    else:
        a = tuple(axes) if axes else None
        y = np.asarray(REDUCERS[op](_f64(x), a, keepdims))
        if x.dtype.kind in "iu" and op in ("reduce_mean", "reduce_l2"):
            y = np.trunc(y)   # integer results truncate toward zero
        y = y.astype(x.dtype)
    cases.append(case(name, op, [tensor(x)], [tensor(y)], attrs, **tol))


x3 = r.standard_normal((3, 4, 5)).astype(np.float32)
pos = r.uniform(0.5, 2.0, (3, 4, 5)).astype(np.float32)   # log_sum needs positive sums; prod stays small
for op in REDUCERS:
    src = pos if op in ("reduce_log_sum", "reduce_prod") else x3
    add(f"{op}_axis1", op, src, [1])
    add(f"{op}_axes02_nokeep", op, src, [0, 2], keepdims=False)
    add(f"{op}_neg_axis", op, src, [-1])
    add(f"{op}_all", op, src)
    add(f"{op}_all_nokeep", op, src, keepdims=False)
    add(f"{op}_noop", op, src, noop=True)
    add(f"{op}_noop_with_axes", op, src, [-2, 0], noop=True)   # axes given: noop has no effect
    x4 = r.uniform(0.5, 2.0, (2, 3, 2, 4)) if op in ("reduce_log_sum", "reduce_prod") else r.standard_normal((2, 3, 2, 4))
    add(f"{op}_4d", op, x4.astype(np.float32), [1, 3])

# Other float types.
h = (r.standard_normal((4, 6)) * 3).astype(np.float16)
for op in ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_l2", "reduce_log_sum_exp"]:
    add(f"{op}_f16", op, h, [1])
add("reduce_sum_f64", "reduce_sum", r.standard_normal((3, 5)), [0])
add("reduce_prod_f64", "reduce_prod", r.uniform(0.5, 1.5, (3, 5)), [1], keepdims=False)

# Integers accumulate in 64 bits; mean and l2 truncate.
i32 = r.integers(-50, 50, (3, 4, 2)).astype(np.int32)
i64 = r.integers(-2**20, 2**20, (4, 3)).astype(np.int64)
small = r.integers(-4, 5, (3, 4)).astype(np.int32)
for op in INT_OPS:
    add(f"{op}_int32", op, small if op == "reduce_prod" else i32, [1] if op == "reduce_prod" else [0, 2])
    add(f"{op}_int64", op, i64 if op != "reduce_prod" else small.astype(np.int64), [-1], keepdims=False)
add("reduce_sum_uint8", "reduce_sum", r.integers(0, 255, (4, 5)).astype(np.uint8) // 16, [0])
add("reduce_max_int8", "reduce_max", r.integers(-128, 127, (3, 5)).astype(np.int8), [1])
add("reduce_l1_uint32", "reduce_l1", r.integers(0, 1000, (2, 5)).astype(np.uint32), [1])
b = r.integers(0, 2, (3, 4)).astype(bool)
b[0] = False
b[1] = True
cases.append(case("reduce_max_bool", "reduce_max", [tensor(b)], [tensor(b.any(axis=1, keepdims=True))], {"axes": [1]}))
cases.append(case("reduce_min_bool", "reduce_min", [tensor(b)], [tensor(b.all(axis=1))],
                  {"axes": [1], "keepdims": False}))

# Reducing an empty set gives the identity; an empty non-reduced dim gives an empty output.
empty = np.zeros((2, 0, 3), np.float32)
identity = {"reduce_sum": 0, "reduce_prod": 1, "reduce_max": -np.inf, "reduce_min": np.inf, "reduce_l1": 0,
            "reduce_l2": 0, "reduce_sum_square": 0, "reduce_log_sum": -np.inf, "reduce_log_sum_exp": -np.inf,
            "reduce_mean": np.nan}
for op, v in identity.items():
    cases.append(case(f"{op}_empty_set", op, [tensor(empty)], [tensor(np.full((2, 1, 3), v, np.float32))],
                      {"axes": [1]}))
    cases.append(case(f"{op}_empty_output", op, [tensor(empty)], [tensor(np.zeros((2, 0), np.float32))],
                      {"axes": [2], "keepdims": False}))
ie = np.zeros((0, 2), np.int32)
for op, v in {"reduce_max": np.iinfo(np.int32).min, "reduce_min": np.iinfo(np.int32).max, "reduce_sum": 0,
              "reduce_prod": 1}.items():
    cases.append(case(f"{op}_empty_set_int32", op, [tensor(ie)], [tensor(np.full((2,), v, np.int32))],
                      {"axes": [0], "keepdims": False}))
be = np.zeros((0, 2), bool)
cases.append(case("reduce_max_empty_set_bool", "reduce_max", [tensor(be)], [tensor(np.zeros((1, 2), bool))],
                  {"axes": [0]}))

# NaN propagates through max/min; log_sum_exp does not overflow on large inputs.
nanx = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -1.0]], np.float32)
add("reduce_max_nan", "reduce_max", nanx, [1])
add("reduce_min_nan", "reduce_min", nanx, [1])
add("reduce_log_sum_exp_large", "reduce_log_sum_exp", np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1002.0, -1001.0]],
                                                                np.float32), [1])
add("reduce_sum_scalar", "reduce_sum", np.array(2.5, np.float32))
add("reduce_max_1d_nokeep", "reduce_max", r.standard_normal((7,)).astype(np.float32), [0], keepdims=False)

f = lambda *lens: shape_only("float32", lens)
cases += [
    error_case("reduce_sum_axis_out_of_range", "reduce_sum", [f(2, 3)], "axes=2 is out of range for 2 dims",
               {"axes": [2]}),
    error_case("reduce_max_neg_axis_out_of_range", "reduce_max", [f(2, 3)], "axes=-3 is out of range",
               {"axes": [-3]}),
    error_case("reduce_mean_repeated_axes", "reduce_mean", [f(2, 3)], "repeats axis", {"axes": [1, -1]}),
    error_case("reduce_sum_two_inputs", "reduce_sum", [f(2, 3), f(2, 3)], "expected 1 input, got 2"),
    error_case("reduce_l2_no_input", "reduce_l2", [], "expected 1 input, got 0"),
    error_case("reduce_sum_bool", "reduce_sum", [shape_only("bool", [2])], "expected a numeric"),
    error_case("reduce_log_sum_int", "reduce_log_sum", [shape_only("int32", [2])], "expected a float type"),
    error_case("reduce_log_sum_exp_int", "reduce_log_sum_exp", [shape_only("int64", [2])], "expected a float type"),
    error_case("reduce_mean_empty_int", "reduce_mean", [tensor(ie)], "mean of an empty set of integers",
               {"axes": [0]}),
    error_case("reduce_sum_bad_attr", "reduce_sum", [f(2)], "unknown attribute 'axis'", {"axis": 0}),
]

# argmax / argmin: numpy's first (or, reversed, last) extreme; NaN counts as the extreme.
def arg(op, x, axis, keepdims=True, last=False):
    fn = np.argmax if op == "argmax" else np.argmin
    if last:
        y = x.shape[axis] - 1 - fn(np.flip(x, axis), axis=axis)
    else:
        y = fn(x, axis=axis)
    y = y.astype(np.int64)
    return np.expand_dims(y, axis) if keepdims else y


def add_arg(name, op, x, axis=0, keepdims=True, last=False):
    attrs = {"axis": axis}
    if not keepdims:
        attrs["keepdims"] = False
    if last:
        attrs["select_last_index"] = True
    cases.append(case(name, op, [tensor(x)], [tensor(arg(op, x, axis, keepdims, last))], attrs))


ties = r.integers(0, 3, (3, 4, 5)).astype(np.int32)
for op in ["argmax", "argmin"]:
    add_arg(f"{op}_axis0", op, x3, 0)
    add_arg(f"{op}_axis1_nokeep", op, x3, 1, keepdims=False)
    add_arg(f"{op}_neg_axis", op, x3, -1)
    add_arg(f"{op}_ties_first", op, ties, 2)
    add_arg(f"{op}_ties_last", op, ties, 2, last=True)
    add_arg(f"{op}_ties_last_nokeep", op, ties, 1, keepdims=False, last=True)
    add_arg(f"{op}_f16", op, h, 1)
    add_arg(f"{op}_int64", op, i64, 0)
    add_arg(f"{op}_uint8", op, r.integers(0, 255, (3, 6)).astype(np.uint8), 1)
    add_arg(f"{op}_nan", op, np.array([[1.0, np.nan, 3.0, np.nan], [4.0, 5.0, -1.0, 2.0]], np.float32), 1)
    add_arg(f"{op}_1d", op, r.standard_normal((6,)).astype(np.float32), 0, keepdims=False)
    add_arg(f"{op}_empty_outer", op, np.zeros((0, 3), np.float32), 1)
cases += [
    error_case("argmax_axis_out_of_range", "argmax", [f(2, 3)], "axis=2 is out of range for 2 dims", {"axis": 2}),
    error_case("argmin_empty_axis", "argmin", [f(2, 0)], "axis 1 has length 0", {"axis": 1}),
    error_case("argmax_bool", "argmax", [shape_only("bool", [3])], "expected a numeric"),
    error_case("argmin_two_inputs", "argmin", [f(3), f(3)], "expected 1 input, got 2"),
]

write("reduce", cases)
