"""Cases for src/ops/gather.cpp (gather, gather_elements, gathernd), computed with onnx's reference
evaluator (ONNX Gather, GatherND) and numpy for gather_elements (the reference evaluator rejects
indices smaller than the data off the axis, and negative axes)."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write
from onnx_oracle import run_node

r = rng(7)
cases = []

ONNX_NAME = {"gather": "Gather", "gathernd": "GatherND"}


def gather_elements(data, indices, axis):
    axis %= data.ndim
    rows = tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(indices.shape))
    return np.take_along_axis(data[rows], np.where(indices < 0, indices + data.shape[axis], indices), axis)


def add(name, op, data, indices, **attrs):
    if op == "gather_elements":
        y = gather_elements(data, indices, attrs["axis"])
    else:
        (y,) = run_node(ONNX_NAME[op], [data, indices], **attrs)
    cases.append(case(name, op, [tensor(data), tensor(indices)], [tensor(y.astype(data.dtype))], attrs))


def f32(*lens):
    return r.standard_normal(lens).astype(np.float32)


def idx(lo, hi, lens, dt=np.int64):
    return r.integers(lo, hi, lens).astype(dt)


# gather: indices of any rank replace the axis dim; negative indices count from the end.
add("gather_axis0", "gather", f32(5, 4), np.array([4, 0, 2], np.int64), axis=0)
add("gather_axis1_2d_indices", "gather", f32(3, 6), idx(-6, 6, (2, 3)), axis=1)
add("gather_axis_neg_int32", "gather", f32(2, 3, 5), idx(-5, 5, (4,), np.int32), axis=-1)
add("gather_scalar_index", "gather", f32(4, 3), np.array(-1, np.int64), axis=0)
add("gather_3d_middle", "gather", f32(2, 5, 3), idx(-5, 5, (2, 2)), axis=1)
add("gather_f16", "gather", r.standard_normal((6, 2)).astype(np.float16), idx(-6, 6, (3,)), axis=0)
add("gather_int64_data", "gather", idx(-2**40, 2**40, (3, 4)), idx(0, 4, (5,)), axis=1)
add("gather_bool_data", "gather", r.integers(0, 2, (4, 3)).astype(bool), idx(-4, 4, (2,), np.int8), axis=0)
add("gather_1d", "gather", f32(7), idx(-7, 7, (3, 2)), axis=0)

# gather_elements: out[i][j] = data[indices[i][j]][j] (axis 0); indices may be smaller off the axis.
add("gather_elements_axis0", "gather_elements", f32(3, 4), idx(-3, 3, (2, 4)), axis=0)
add("gather_elements_axis1", "gather_elements", f32(3, 4), idx(-4, 4, (3, 6)), axis=1)
add("gather_elements_3d_neg_axis", "gather_elements", f32(2, 3, 4), idx(-4, 4, (2, 2, 3), np.int32), axis=-1)
add("gather_elements_3d_axis1", "gather_elements", f32(2, 3, 4), idx(0, 3, (1, 5, 4)), axis=1)
add("gather_elements_f16", "gather_elements", r.standard_normal((4, 2)).astype(np.float16),
    idx(-4, 4, (3, 2)), axis=0)
add("gather_elements_int64", "gather_elements", idx(-1000, 1000, (3, 3)), idx(-3, 3, (3, 3)), axis=1)

# gathernd: index tuples in the last indices dim, after batch_dims shared dims.
add("gathernd_elements", "gathernd", f32(3, 4), np.array([[0, 0], [2, -1], [-3, 1]], np.int64))
add("gathernd_rows", "gathernd", f32(3, 4), np.array([[1], [-1], [0]], np.int64))
add("gathernd_slices_3d", "gathernd", f32(2, 3, 4), idx(-2, 2, (2, 2, 1)))
add("gathernd_tuples_3d", "gathernd", f32(2, 3, 4), np.array([[0, 2], [1, -3]], np.int32))
add("gathernd_batch1", "gathernd", f32(2, 3, 4), np.array([[[1], [0]], [[2], [-1]]], np.int64), batch_dims=1)
add("gathernd_batch1_tuples", "gathernd", f32(3, 2, 4), np.stack([idx(-2, 2, (3, 5)), idx(-4, 4, (3, 5))], -1),
    batch_dims=1)
add("gathernd_batch2", "gathernd", f32(2, 2, 3, 2), idx(-3, 3, (2, 2, 4, 1)), batch_dims=2)
add("gathernd_f16", "gathernd", r.standard_normal((4, 3)).astype(np.float16), idx(-3, 3, (2, 2)))
add("gathernd_int64", "gathernd", idx(-99, 99, (3, 3, 2)), idx(-2, 2, (4, 3)).clip(-2, 1))

# Errors: out-of-range indices (found at compute, so the data is given), ranks, attributes.
def err(name, op, inputs, message, **attrs):
    cases.append(error_case(name, op, inputs, message, attrs))


x = f32(3, 4)
err("gather_index_too_large", "gather", [tensor(x), tensor(np.array([0, 3], np.int64))],
    "index 3 (indices element 1) is out of range for dim 0 of size 3 (valid: -3 to 2)")
err("gather_index_too_negative", "gather", [tensor(x), tensor(np.array([[1, -5]], np.int64))],
    "index -5 (indices element 1) is out of range for dim 1 of size 4", axis=1)
err("gather_bad_axis", "gather", [shape_only("float32", [3, 4]), shape_only("int64", [2])],
    "axis=2 is out of range for 2 dims", axis=2)
err("gather_float_indices", "gather", [shape_only("float32", [3, 4]), shape_only("float32", [2])],
    "input 1 is float_type; expected a signed integer type")
err("gather_unsigned_indices", "gather", [shape_only("float32", [3, 4]), shape_only("uint8", [2])],
    "expected a signed integer type")
err("gather_scalar_data", "gather", [shape_only("float32", []), shape_only("int64", [2])],
    "input 0 has 0 dims")
err("gather_elements_index_out_of_range", "gather_elements",
    [tensor(x), tensor(np.array([[0, 1, 2, 4]], np.int64))],
    "index 4 (indices element 3) is out of range for dim 1 of size 4", axis=1)
err("gather_elements_rank_mismatch", "gather_elements", [shape_only("float32", [3, 4]), shape_only("int64", [3])],
    "input 1 has 1 dims")
err("gather_elements_indices_too_wide", "gather_elements",
    [shape_only("float32", [3, 4]), shape_only("int64", [2, 5])], "indices dim 1 is 5 but data dim 1 is 4")
err("gathernd_index_out_of_range", "gathernd", [tensor(x), tensor(np.array([[0, 1], [3, 0]], np.int64))],
    "index 3 (indices element 2) is out of range for dim 0 of size 3")
err("gathernd_tuple_too_long", "gathernd", [shape_only("float32", [3, 4]), shape_only("int64", [2, 3])],
    "the last indices dim is 3; expected 1 to 2")
err("gathernd_batch_mismatch", "gathernd", [shape_only("float32", [3, 4]), shape_only("int64", [2, 1])],
    "batch dim 0 is 3 in data but 2 in indices", batch_dims=1)
err("gathernd_batch_dims_too_large", "gathernd", [shape_only("float32", [3, 4]), shape_only("int64", [3, 1])],
    "batch_dims=2; expected 0 to 1", batch_dims=2)
write("gather", cases)
