"""Cases for src/ops/views.cpp (reshape, flatten, transpose, broadcast, multibroadcast, expand, squeeze,
unsqueeze, slice, contiguous, identity), computed with numpy indexing and reshapes."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(7)
cases = []
INT64_MAX, INT64_MIN = 2**63 - 1, -2**63


def rand(shape, dtype=np.float32):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return r.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -100
        return r.integers(lo, 100, shape).astype(dtype)
    return (r.standard_normal(shape) * 3).astype(dtype)


def add(name, op, x, y, attrs=None):
    cases.append(case(name, op, [tensor(x)], [tensor(y)], attrs))


def err(name, op, lens, error, attrs=None, dtype="float32"):
    cases.append(error_case(name, op, [shape_only(dtype, lens)], error, attrs))


# reshape: ONNX semantics written out here (0 copies the input dim unless allowzero; -1 infers).
def onnx_reshape(x, dims, allowzero=False):
    lens = [x.shape[i] if d == 0 and not allowzero else d for i, d in enumerate(dims)]
    return x.reshape(lens)


for name, lens, dims, dt in [
    ("reshape_2d", (2, 3, 4), [4, -1], np.float32),
    ("reshape_copy_dim", (2, 3, 4), [0, -1], np.float32),
    ("reshape_zeros_keep", (2, 3, 4), [0, 0, 2, 2], np.float16),
    ("reshape_flat", (2, 3, 4), [-1], np.int32),
    ("reshape_up_rank", (6, 4), [2, 3, 2, 2], np.int8),
    ("reshape_bool", (3, 4), [2, -1, 3], np.bool_),
    ("reshape_f64", (4, 5), [2, 0, 2], np.float64),
    ("reshape_to_scalar", (1, 1), [], np.float32),
    ("reshape_from_scalar", (), [1, 1, 1], np.int64),
    ("reshape_ones", (3, 1, 4), [1, 12, 1], np.uint8),
]:
    x = rand(lens, dt)
    add(name, "reshape", x, onnx_reshape(x, dims), {"dims": dims})
x = rand((2, 0, 3))
add("reshape_allowzero", "reshape", x, onnx_reshape(x, [0, 5], True), {"dims": [0, 5], "allowzero": True})
err("reshape_empty_infer", "reshape", [2, 0, 3], "the other dims have 0 elements", {"dims": [3, 0, -1]})
err("reshape_count_mismatch", "reshape", [2, 3, 4], "= 20 elements, but input 0", {"dims": [5, 4]})
err("reshape_two_infers", "reshape", [2, 3, 4], "more than one -1", {"dims": [-1, 2, -1]})
err("reshape_infer_not_multiple", "reshape", [2, 3, 4], "not a multiple of 5", {"dims": [5, -1]})
err("reshape_negative", "reshape", [2, 3], "dims[1]=-2 is negative", {"dims": [3, -2]})
err("reshape_zero_past_rank", "reshape", [6], "dims[1]=0 copies input dim 1", {"dims": [6, 0]})
err("reshape_allowzero_with_infer", "reshape", [2, 0], "both -1 and a 0", {"dims": [0, -1], "allowzero": True})

# flatten: rows are the dims before axis.
for axis, lens, dt in [(1, (2, 3, 4), np.float32), (0, (2, 3, 4), np.int16), (2, (2, 3, 4, 2), np.float16),
                       (-1, (2, 3, 4), np.bool_), (3, (2, 3, 4), np.float32), (0, (), np.float32)]:
    x = rand(lens, dt)
    rows = int(np.prod(lens[:axis], dtype=np.int64)) if lens else 1
    add(f"flatten_axis{axis}_{len(lens)}d".replace("-", "m"), "flatten", x, x.reshape(rows, -1), {"axis": axis})
err("flatten_axis_range", "flatten", [2, 3], "axis=3 is out of range for 2 dims", {"axis": 3})
err("flatten_negative_axis_range", "flatten", [2, 3], "axis=-3 is out of range", {"axis": -3})

# transpose
for name, lens, perm, dt in [
    ("transpose_2d", (3, 5), [1, 0], np.float32),
    ("transpose_default", (2, 3, 4), [], np.float32),
    ("transpose_nchw_nhwc", (2, 3, 2, 4), [0, 2, 3, 1], np.float16),
    ("transpose_int32", (2, 3, 4), [1, 2, 0], np.int32),
    ("transpose_bool", (4, 1, 3), [2, 0, 1], np.bool_),
    ("transpose_identity_perm", (3, 4), [0, 1], np.int8),
    ("transpose_5d", (2, 1, 3, 2, 2), [4, 2, 0, 3, 1], np.float64),
]:
    x = rand(lens, dt)
    add(name, "transpose", x, np.transpose(x, perm or None), {"permutation": perm})
err("transpose_wrong_length", "transpose", [2, 3, 4], "permutation has 2 entries", {"permutation": [1, 0]})
err("transpose_repeat", "transpose", [2, 3, 4], "is not a permutation of 0..2", {"permutation": [0, 0, 1]})
err("transpose_out_of_range", "transpose", [2, 3], "{0, 2} is not a permutation", {"permutation": [0, 2]})
err("transpose_negative", "transpose", [2, 3], "{-1, 0} is not a permutation", {"permutation": [-1, 0]})

# broadcast (MIGraphX): input dims sit at out_lens[axis:], the rest repeat.
for name, lens, axis, out, dt in [
    ("broadcast_bias", (3,), 1, [2, 3, 4], np.float32),
    ("broadcast_leading", (3, 4), 0, [3, 4, 2], np.int32),
    ("broadcast_trailing", (4,), 2, [2, 3, 4], np.bool_),
    ("broadcast_one_dim", (1, 4), 1, [2, 3, 4], np.float16),
    ("broadcast_same", (2, 3), 0, [2, 3], np.int8),
]:
    x = rand(lens, dt)
    shaped = x.reshape((1,) * axis + lens + (1,) * (len(out) - axis - len(lens)))
    add(name, "broadcast", x, np.broadcast_to(shaped, out), {"axis": axis, "out_lens": out})
err("broadcast_mismatch", "broadcast", [3], "input 0 dim 0 is 3 but out_lens[1] is 4",
    {"axis": 1, "out_lens": [2, 4]})
err("broadcast_axis_too_far", "broadcast", [3, 4], "axis=2 does not place", {"axis": 2, "out_lens": [2, 3, 4]})
err("broadcast_negative_len", "broadcast", [3], "out_lens[0]=-2 is negative", {"axis": 1, "out_lens": [-2, 3]})

# multibroadcast: numpy broadcast to exactly out_lens.
for name, lens, out, dt in [
    ("multibroadcast_col", (3, 1), [2, 3, 4], np.float32),
    ("multibroadcast_row", (4,), [3, 4], np.int64),
    ("multibroadcast_scalar", (), [2, 3], np.float32),
    ("multibroadcast_bool", (1, 3, 1), [2, 3, 2], np.bool_),
    ("multibroadcast_same", (2, 3), [2, 3], np.uint16),
]:
    x = rand(lens, dt)
    add(name, "multibroadcast", x, np.broadcast_to(x, out), {"out_lens": out})
err("multibroadcast_mismatch", "multibroadcast", [3, 2], "cannot broadcast input 0 {3, 2} to {3, 4}",
    {"out_lens": [3, 4]})
err("multibroadcast_rank", "multibroadcast", [2, 3, 4], "more than out_lens", {"out_lens": [3, 4]})

# expand (ONNX): bidirectional broadcast of the input's lens with dims.
for name, lens, dims, dt in [
    ("expand_basic", (3, 1), [2, 3, 6], np.float32),
    ("expand_keep_dims", (3, 4), [3, 1], np.int32),
    ("expand_short_dims", (2, 3, 4), [4], np.float16),
    ("expand_both_ways", (1, 4), [3, 1], np.bool_),
    ("expand_scalar", (), [2, 2], np.int8),
]:
    x = rand(lens, dt)
    add(name, "expand", x, np.broadcast_to(x, np.broadcast_shapes(x.shape, dims)), {"dims": dims})
err("expand_incompatible", "expand", [3, 4], "cannot broadcast", {"dims": [3, 5]})

# squeeze / unsqueeze
for name, lens, axes, dt in [
    ("squeeze_all", (1, 3, 1, 4), [], np.float32),
    ("squeeze_first", (1, 3, 1, 4), [0], np.int32),
    ("squeeze_negative", (1, 3, 1, 4), [-2], np.float16),
    ("squeeze_two", (2, 1, 3, 1), [3, 1], np.bool_),
    ("squeeze_to_scalar", (1, 1), [], np.int8),
]:
    x = rand(lens, dt)
    add(name, "squeeze", x, np.squeeze(x, tuple(axes)) if axes else np.squeeze(x), {"axes": axes})
err("squeeze_not_one", "squeeze", [1, 3, 4], "cannot squeeze dim 1 of input 0 {1, 3, 4}", {"axes": [1]})
err("squeeze_out_of_range", "squeeze", [1, 3], "axes=2 is out of range", {"axes": [2]})


def np_unsqueeze(x, axes):
    rank = x.ndim + len(axes)
    axes = sorted(a % rank for a in axes)
    for a in axes:
        x = np.expand_dims(x, a)
    return x


for name, lens, axes, dt in [
    ("unsqueeze_front", (3, 4), [0], np.float32),
    ("unsqueeze_back", (3, 4), [-1], np.int64),
    ("unsqueeze_two", (3, 4), [0, 3], np.float16),
    ("unsqueeze_mixed_order", (3, 4), [-1, 1], np.bool_),
    ("unsqueeze_scalar", (), [0, 1], np.int8),
    ("unsqueeze_middle", (2, 3, 4), [2], np.uint8),
]:
    x = rand(lens, dt)
    add(name, "unsqueeze", x, np_unsqueeze(x, axes), {"axes": axes})
err("unsqueeze_repeat", "unsqueeze", [3, 4], "axes repeats axis", {"axes": [0, 0]})
err("unsqueeze_out_of_range", "unsqueeze", [3, 4], "axes=3 is out of range for 3 dims", {"axes": [3]})


# slice: ONNX clamping (starts to [0, dim] for positive steps, [0, dim-1] for negative ones; ends to
# [0, dim] or [-1, dim-1]) turned into a Python slice, which numpy then applies.
def onnx_slice(x, starts, ends, axes=None, steps=None):
    axes = list(range(len(starts))) if axes is None else [a % x.ndim for a in axes]
    steps = steps or [1] * len(starts)
    idx = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        dim = x.shape[a]
        s, e = s + dim if s < 0 else s, e + dim if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), dim), min(max(e, 0), dim)
        else:
            s, e = min(max(s, 0), dim - 1), min(max(e, -1), dim - 1)
            e = None if e < 0 else e
        idx[a] = slice(s, e, st)
    return x[tuple(idx)]


def add_slice(name, lens, starts, ends, axes=None, steps=None, dt=np.float32):
    x = rand(lens, dt)
    attrs = {"starts": starts, "ends": ends}
    if axes is not None:
        attrs["axes"] = axes
    if steps is not None:
        attrs["steps"] = steps
    add(name, "slice", x, onnx_slice(x, starts, ends, axes, steps), attrs)


add_slice("slice_basic", (4, 5), [1, 2], [3, 5])
add_slice("slice_axes", (3, 4, 5), [1], [4], axes=[2])
add_slice("slice_negative_axis", (3, 4, 5), [-3], [-1], axes=[-2], dt=np.int32)
add_slice("slice_negative_starts", (6, 4), [-4, -3], [-1, 4], dt=np.float16)
add_slice("slice_end_past_dim", (5, 3), [2], [INT64_MAX], axes=[0])
add_slice("slice_start_past_dim", (5, 3), [9], [12], axes=[0])
add_slice("slice_start_before_dim", (5, 3), [-9], [2], axes=[0], dt=np.int8)
add_slice("slice_step2", (7, 4), [1, 0], [7, 4], steps=[2, 3])
add_slice("slice_step_uneven", (2, 10), [1], [8], axes=[1], steps=[3], dt=np.bool_)
add_slice("slice_reverse_all", (5, 3), [-1], [INT64_MIN], axes=[0], steps=[-1])
add_slice("slice_negative_step2", (4, 7), [6, 3], [0, -5], axes=[1, 0], steps=[-2, -1], dt=np.int64)
add_slice("slice_negative_step_clamped", (4, 6), [100], [-100], axes=[1], steps=[-3], dt=np.float64)
add_slice("slice_negative_step_one_elem", (4, 6), [2], [1], axes=[0], steps=[-1], dt=np.uint8)
add_slice("slice_negative_step_empty", (4, 6), [1], [3], axes=[0], steps=[-1])
add_slice("slice_empty", (4, 6), [3], [1], axes=[1])
add_slice("slice_mixed_steps", (3, 4, 5), [0, 4, 1], [3, 0, 5], axes=[0, 2, 1], steps=[2, -2, 1], dt=np.bool_)
add_slice("slice_4d", (2, 3, 4, 5), [0, 1, 1, 0], [2, 3, 4, 5], steps=[1, 1, 2, 2])
# ONNX clamps a negative-step start below the dim to 0 (one element), where Python gives none.
x = rand((5, 2))
cases.append(case("slice_negative_step_start_below", "slice", [tensor(x)], [tensor(x[0:1])],
                  {"starts": [-10], "ends": [-20], "axes": [0], "steps": [-1]}))
err("slice_zero_step", "slice", [4, 5], "steps[0]=0", {"starts": [0], "ends": [2], "steps": [0]})
err("slice_ends_length", "slice", [4, 5], "starts has 2 entries but ends has 1", {"starts": [0, 1], "ends": [2]})
err("slice_axes_length", "slice", [4, 5], "but axes has 2", {"starts": [0], "ends": [2], "axes": [0, 1]})
err("slice_steps_length", "slice", [4, 5], "but steps has 2", {"starts": [0], "ends": [2], "steps": [1, 1]})
err("slice_repeated_axis", "slice", [4, 5], "axes repeats axis", {"starts": [0, 1], "ends": [2, 3], "axes": [1, -1]})
err("slice_axis_range", "slice", [4, 5], "axes=2 is out of range", {"starts": [0], "ends": [2], "axes": [2]})
err("slice_too_many_starts", "slice", [4], "input 0 has 1 dims", {"starts": [0, 0], "ends": [1, 1]})

# contiguous and identity keep values (the column-major run makes contiguous really copy).
for name, dt in [("contiguous", np.float32), ("contiguous_bool", np.bool_), ("contiguous_int8", np.int8)]:
    x = rand((3, 4, 2), dt)
    add(name, "contiguous", x, x)
for name, dt in [("identity", np.float32), ("identity_int64", np.int64)]:
    x = rand((2, 5), dt)
    add(name, "identity", x, x)
cases.append(error_case("identity_two_inputs", "identity", [shape_only("float32", [2])] * 2, "expected 1 input, got 2"))

# reshape and flatten of strided views: a view where the strides allow it (GPT-2's q/k/v: a slice
# of the last dim split into heads; a transpose's dim split; contiguous dims of a slice merged; a
# broadcast merged), a copy where they do not (a transpose's permuted dims merged, a slice's
# gapped dims merged).
def ir_case(name, ir, inputs, output):
    cases.append({"name": name, "op": "reshape", "ir": ir, "inputs": {k: tensor(v) for k, v in inputs.items()},
                  "outputs": [tensor(output)]})


def strided_ir(lens, view, reshape, dt="float_type"):
    return (f"x = @param:x -> {dt}, {{{', '.join(map(str, lens))}}}\n@0 = {view}(x)\n@1 = {reshape}(@0)\n"
            "@2 = @return(@1)\n")


x = rand((2, 5, 24))
ir_case("reshape_of_slice_split_heads", strided_ir((2, 5, 24), "slice[axes={2},starts={8},ends={16}]",
                                                   "reshape[dims={2, 5, 2, 4}]"), {"x": x},
        x[:, :, 8:16].reshape(2, 5, 2, 4))
x = rand((2, 5, 24))
ir_case("reshape_of_slice_heads_transposed",
        "x = @param:x -> float_type, {2, 5, 24}\n@0 = slice[axes={2},starts={16},ends={24}](x)\n"
        "@1 = reshape[dims={2, 5, 2, 4}](@0)\n@2 = transpose[permutation={0, 2, 1, 3}](@1)\n"
        "@3 = @literal{2.0} -> float_type, {}\n@4 = multibroadcast[out_lens={2, 2, 5, 4}](@3)\n"
        "@5 = mul(@2,@4)\n@6 = @return(@5)\n", {"x": x}, x[:, :, 16:24].reshape(2, 5, 2, 4).transpose(0, 2, 1, 3) * 2)
x = rand((4, 6))
ir_case("reshape_of_transpose_split", strided_ir((4, 6), "transpose[permutation={1, 0}]", "reshape[dims={2, 3, 4}]"),
        {"x": x}, x.T.reshape(2, 3, 4))
x = rand((2, 3, 4), np.float16)
ir_case("reshape_of_transpose_merge_copies",
        strided_ir((2, 3, 4), "transpose[permutation={0, 2, 1}]", "reshape[dims={8, 3}]", "half_type"), {"x": x},
        x.transpose(0, 2, 1).reshape(8, 3))
x = rand((4, 3, 5))
ir_case("reshape_of_slice_merge", strided_ir((4, 3, 5), "slice[axes={0},starts={1},ends={3}]", "reshape[dims={6, 5}]"),
        {"x": x}, x[1:3].reshape(6, 5))
x = rand((3, 4, 6))
ir_case("flatten_of_slice_gap_copies", strided_ir((3, 4, 6), "slice[axes={2},starts={1},ends={5}]", "flatten[axis=1]"),
        {"x": x}, x[:, :, 1:5].reshape(3, 16))
x = rand((3,))
ir_case("reshape_of_broadcast_merge", strided_ir((3,), "multibroadcast[out_lens={2, 4, 3}]", "reshape[dims={8, 3}]"),
        {"x": x}, np.broadcast_to(x, (2, 4, 3)).reshape(8, 3))
x = rand((3, 8))
ir_case("reshape_of_step_slice_split", strided_ir((3, 8), "slice[axes={1},starts={0},ends={8},steps={2}]",
                                                  "reshape[dims={3, 2, 2}]"), {"x": x}, x[:, ::2].reshape(3, 2, 2))

write("views", cases)
