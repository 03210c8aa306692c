"""Cases for src/ops/scatter.cpp (scatter_elements, scatternd), computed with onnx's reference
evaluator (ONNX ScatterElements and ScatterND, opset 18 reductions)."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write
from onnx_oracle import run_node

r = rng(11)
cases = []


def add(name, op, data, indices, updates, **attrs):
    onnx_op = "ScatterElements" if op == "scatter_elements" else "ScatterND"
    (y,) = run_node(onnx_op, [data, indices, updates], **attrs)
    cases.append(case(name, op, [tensor(data), tensor(indices), tensor(updates)], [tensor(y.astype(data.dtype))],
                      attrs))


def f32(*lens):
    return r.standard_normal(lens).astype(np.float32)


def distinct(n, count, lens_before, lens_after, negative=True):
    """Indices along one axis of length n, distinct across it (no duplicate targets), count per line."""
    lines = int(np.prod(lens_before + lens_after, dtype=np.int64))
    picks = np.stack([r.permutation(n)[:count] for _ in range(lines)])   # (lines, count)
    picks = picks.reshape(lens_before + lens_after + [count])
    picks = np.moveaxis(picks, -1, len(lens_before))
    if negative:
        picks = np.where(r.integers(0, 2, picks.shape) == 1, picks - n, picks)
    return picks.astype(np.int64)


# scatter_elements, reduction none: distinct targets, so the result does not depend on order.
add("scatter_elements_axis0", "scatter_elements", f32(3, 4), distinct(3, 2, [], [4]), f32(2, 4), axis=0)
add("scatter_elements_axis1_small_indices", "scatter_elements", f32(3, 5), distinct(5, 3, [2], []), f32(2, 3),
    axis=1)
add("scatter_elements_3d_neg_axis", "scatter_elements", f32(2, 3, 4), distinct(4, 2, [2, 3], []).astype(np.int32),
    f32(2, 3, 2), axis=-1)
add("scatter_elements_f16", "scatter_elements", r.standard_normal((4, 3)).astype(np.float16),
    distinct(4, 4, [], [3]), r.standard_normal((4, 3)).astype(np.float16), axis=0)
ints = lambda *lens: r.integers(-50, 50, lens).astype(np.int64)
add("scatter_elements_int64", "scatter_elements", ints(3, 3), distinct(3, 3, [3], []), ints(3, 3), axis=1)
add("scatter_elements_bool", "scatter_elements", r.integers(0, 2, (2, 4)).astype(bool), distinct(4, 2, [2], []),
    r.integers(0, 2, (2, 2)).astype(bool), axis=1)

# Reductions, with duplicate targets that accumulate.
dup = np.array([[0, 1, 0], [-3, 0, 1], [2, 2, 2], [0, -1, 0]], np.int64)   # column j has duplicates
for red in ["add", "mul", "max", "min"]:
    add(f"scatter_elements_{red}_duplicates", "scatter_elements", f32(3, 3), dup, f32(4, 3), axis=0, reduction=red)
add("scatter_elements_add_int64", "scatter_elements", ints(3, 3), dup, ints(4, 3), axis=0, reduction="add")
add("scatter_elements_max_int32", "scatter_elements", ints(3, 4).astype(np.int32), dup.T[:, :3].copy(),
    ints(3, 3).astype(np.int32), axis=1, reduction="max")
add("scatter_elements_mul_f16", "scatter_elements", r.uniform(0.5, 2, (3, 3)).astype(np.float16), dup,
    r.uniform(0.5, 2, (4, 3)).astype(np.float16), axis=0, reduction="mul")

# scatternd: index tuples address elements (k = rank) or slices (k < rank).
add("scatternd_elements", "scatternd", f32(3, 4), np.array([[0, 1], [2, -1], [-2, 0]], np.int64), f32(3))
add("scatternd_rows", "scatternd", f32(4, 3), np.array([[3], [-4]], np.int64), f32(2, 3))
add("scatternd_slices_3d", "scatternd", f32(3, 2, 4), np.array([[[0, 1]], [[-1, 0]]], np.int32), f32(2, 1, 4))
add("scatternd_3d_first_dim", "scatternd", f32(4, 2, 3), np.array([[1], [3]], np.int64), f32(2, 2, 3))
add("scatternd_f16", "scatternd", r.standard_normal((3, 3)).astype(np.float16), np.array([[0, 0], [2, 1]]),
    r.standard_normal(2).astype(np.float16))
add("scatternd_int64", "scatternd", ints(2, 5), np.array([[1, 4], [0, -5], [1, 0]], np.int64), ints(3))
nd_dup = np.array([[1], [0], [1], [-3]], np.int64)
for red in ["add", "mul", "max", "min"]:
    add(f"scatternd_{red}_duplicates", "scatternd", f32(3, 4), nd_dup, f32(4, 4), reduction=red)
add("scatternd_add_int32", "scatternd", ints(3, 2).astype(np.int32), np.array([[0, 1], [0, 1], [2, 0]], np.int64),
    ints(3).astype(np.int32), reduction="add")


def err(name, op, inputs, message, **attrs):
    cases.append(error_case(name, op, inputs, message, attrs))


x = f32(3, 4)
err("scatter_elements_index_out_of_range", "scatter_elements",
    [tensor(x), tensor(np.array([[0, 3, 1, 2]], np.int64)), tensor(f32(1, 4))],
    "index 3 (indices element 1) is out of range for dim 0 of size 3")
err("scatter_elements_updates_lens", "scatter_elements",
    [shape_only("float32", [3, 4]), shape_only("int64", [2, 4]), shape_only("float32", [2, 3])],
    "input 2 (updates) has lens {2, 3}; expected the indices' lens {2, 4}")
err("scatter_elements_rank_mismatch", "scatter_elements",
    [shape_only("float32", [3, 4]), shape_only("int64", [4]), shape_only("float32", [4])], "input 1 has 1 dims")
err("scatter_elements_bad_reduction", "scatter_elements",
    [shape_only("float32", [3, 4]), shape_only("int64", [2, 4]), shape_only("float32", [2, 4])],
    "reduction='sum'; expected none, add, mul, max or min", reduction="sum")
err("scatter_elements_updates_type", "scatter_elements",
    [shape_only("float32", [3, 4]), shape_only("int64", [2, 4]), shape_only("float16", [2, 4])],
    "input 2 (updates) is half_type but input 0 (data) is float_type")
err("scatter_elements_bool_reduction", "scatter_elements",
    [shape_only("bool", [3, 4]), shape_only("int64", [2, 4]), shape_only("bool", [2, 4])],
    "expected a numeric type for a reduction", reduction="add")
err("scatternd_index_out_of_range", "scatternd",
    [tensor(x), tensor(np.array([[0, 1], [1, -5]], np.int64)), tensor(f32(2))],
    "index -5 (indices element 3) is out of range for dim 1 of size 4")
err("scatternd_updates_lens", "scatternd",
    [shape_only("float32", [3, 4]), shape_only("int64", [2, 1]), shape_only("float32", [2, 3])],
    "input 2 (updates) has lens {2, 3}; expected {2, 4}")
err("scatternd_tuple_too_long", "scatternd",
    [shape_only("float32", [3, 4]), shape_only("int64", [2, 3]), shape_only("float32", [2])],
    "the last indices dim is 3; expected 1 to 2")
err("scatternd_bad_reduction", "scatternd",
    [shape_only("float32", [3, 4]), shape_only("int64", [2, 2]), shape_only("float32", [2])],
    "reduction='mean'", reduction="mean")
write("scatter", cases)
