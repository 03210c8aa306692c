"""Cases for src/ops/data_movement.cpp (concat, split, tile, reverse, pad, depth_to_space, space_to_depth,
trilu), computed with numpy (np.concatenate, np.split, np.tile, np.flip, np.pad, np.triu/tril, and
depth/space rearrangements as the reshape/transpose pairs the ONNX spec gives)."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(11)
cases = []


def rand(shape, dtype=np.float32):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return r.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        lo = 1 if dtype.kind == "u" else -100   # nonzero, so zeroed elements (trilu, pad) show
        return r.integers(lo, 100, shape).astype(dtype)
    return (r.standard_normal(shape) * 3).astype(dtype)


def add(name, op, xs, ys, attrs=None):
    cases.append(case(name, op, [tensor(x) for x in xs], [tensor(y) for y in ys], attrs))


def err(name, op, lens_list, error, attrs=None, dtype="float32"):
    cases.append(error_case(name, op, [shape_only(dtype, lens) for lens in lens_list], error, attrs))


# concat
for name, shapes, axis, dt in [
    ("concat_axis0", [(2, 3), (4, 3)], 0, np.float32),
    ("concat_axis1_three", [(2, 1), (2, 3), (2, 2)], 1, np.int32),
    ("concat_negative_axis", [(2, 3, 2), (2, 3, 1)], -1, np.float16),
    ("concat_middle_bool", [(2, 1, 3), (2, 2, 3)], 1, np.bool_),
    ("concat_int8", [(3, 2), (3, 2)], 0, np.int8),
    ("concat_one_input", [(2, 3)], 1, np.float64),
    ("concat_with_empty", [(2, 0), (2, 3)], 1, np.float32),
    ("concat_1d", [(3,), (2,), (1,)], 0, np.int64),
]:
    xs = [rand(s, dt) for s in shapes]
    add(name, "concat", xs, [np.concatenate(xs, axis)], {"axis": axis})
err("concat_dim_mismatch", "concat", [(2, 3), (3, 4)], "input 1 has lens {3, 4} but input 0 has {2, 3}", {"axis": 1})
err("concat_rank_mismatch", "concat", [(2, 3), (2, 3, 1)], "they must agree except on axis 0", {"axis": 0})
err("concat_axis_range", "concat", [(2, 3), (2, 3)], "axis=2 is out of range", {"axis": 2})
err("concat_no_inputs", "concat", [], "expected 1 to")
cases.append(error_case("concat_type_mismatch", "concat", [shape_only("float32", [2]), shape_only("int32", [2])],
                        "inputs must have the same type", {"axis": 0}))


# split: outputs are the pieces in order. num_outputs follows ONNX opset 18 (ceil, smaller last).
def even_sizes(dim, n):
    chunk = -(-dim // n)
    return [chunk] * (n - 1) + [dim - chunk * (n - 1)]


for name, lens, axis, sizes, num, dt in [
    ("split_sizes", (2, 6), 1, [1, 2, 3], 0, np.float32),
    ("split_even", (6, 2), 0, [], 3, np.int32),
    ("split_uneven", (2, 7), -1, [], 3, np.float16),
    ("split_zero_piece", (5, 2), 0, [2, 0, 3], 0, np.bool_),
    ("split_single", (3, 4), 1, [4], 0, np.int8),
    ("split_3d_middle", (2, 5, 3), 1, [], 2, np.float64),
]:
    x = rand(lens, dt)
    pieces = sizes or even_sizes(lens[axis], num)
    ys = np.split(x, np.cumsum(pieces)[:-1], axis)
    attrs = {"axis": axis, "sizes": sizes} if sizes else {"axis": axis, "num_outputs": num}
    add(name, "split", [x], ys, attrs)
err("split_sizes_sum", "split", [(2, 6)], "add up to 5, not to the dim's 6", {"axis": 1, "sizes": [2, 3]})
err("split_neither", "split", [(2, 6)], "give either sizes or num_outputs", {"axis": 1})
err("split_both", "split", [(2, 6)], "give either sizes or num_outputs", {"axis": 1, "sizes": [6], "num_outputs": 1})
err("split_too_many_outputs", "split", [(5,)], "cannot split a dim of 5 into 4", {"num_outputs": 4})
err("split_negative_size", "split", [(5,)], "sizes[0]=-1 is negative", {"sizes": [-1, 6]})



# get_tuple_elem reads a tuple, which only a multi-output op makes: these cases are text IR.
def tuple_ir(lens, dtype, split_attrs, index):
    return (f"x = @param:x -> {dtype}, {{{', '.join(map(str, lens))}}}\n"
            f"@0 = split[{split_attrs}](x)\n"
            f"@1 = get_tuple_elem[index={index}](@0)\n"
            f"@2 = @return(@1)\n")


for name, lens, dt, axis, split_attrs, sizes, index in [
    ("get_tuple_elem", (2, 6), np.float32, 1, "sizes={1, 2, 3}", [1, 2, 3], 1),
    ("get_tuple_elem_last", (5, 3), np.int8, 0, "num_outputs=2", [3, 2], 1),
    ("get_tuple_elem_first_bool", (4, 2), np.bool_, -1, "num_outputs=2", [1, 1], 0),
]:
    x = rand(lens, dt)
    piece = np.split(x, np.cumsum(sizes)[:-1], axis)[index]
    ir = tuple_ir(lens, tensor(x)["type"], f"axis={axis},{split_attrs}", index)
    cases.append({"name": name, "op": "get_tuple_elem", "ir": ir, "inputs": {"x": tensor(x)},
                  "outputs": [tensor(piece)]})
cases.append({"name": "get_tuple_elem_index_range", "op": "get_tuple_elem",
              "ir": tuple_ir((2, 6), "float32", "axis=1,num_outputs=2", 2), "inputs": {"x": shape_only("float32", [2, 6])},
              "error": "index=2 is out of range for a tuple of 2"})
err("get_tuple_elem_not_tuple", "get_tuple_elem", [(2, 3)], "expected a tuple", {"index": 0})

# tile
for name, lens, reps, dt in [
    ("tile_2d", (2, 3), [2, 3], np.float32),
    ("tile_one_axis", (2, 3, 2), [1, 1, 2], np.int32),
    ("tile_bool", (3, 1), [2, 4], np.bool_),
    ("tile_zero", (2, 3), [0, 2], np.float16),
    ("tile_1d_int8", (4,), [3], np.int8),
]:
    x = rand(lens, dt)
    add(name, "tile", [x], [np.tile(x, reps)], {"repeats": reps})
err("tile_wrong_length", "tile", [(2, 3)], "repeats has 1 entries; input 0 has 2 dims", {"repeats": [2]})
err("tile_negative", "tile", [(2, 3)], "repeats[1]=-1 is negative", {"repeats": [1, -1]})

# reverse
for name, lens, axes, dt in [
    ("reverse_axis0", (3, 4), [0], np.float32),
    ("reverse_both", (3, 4), [0, 1], np.int64),
    ("reverse_negative_axis", (2, 3, 4), [-1], np.float16),
    ("reverse_none", (2, 3), [], np.bool_),
    ("reverse_3d_int8", (2, 3, 4), [2, 0], np.int8),
]:
    x = rand(lens, dt)
    add(name, "reverse", [x], [np.flip(x, tuple(axes)) if axes else x], {"axes": axes})
err("reverse_repeat", "reverse", [(3, 4)], "axes repeats axis", {"axes": [1, -1]})


# pad: pads = begins then ends. Negative pads crop first, then np.pad adds the rest.
def onnx_pad(x, pads, mode, value=0.0):
    n = x.ndim
    crop = tuple(slice(max(-pads[d], 0), x.shape[d] - max(-pads[n + d], 0)) for d in range(n))
    width = [(max(pads[d], 0), max(pads[n + d], 0)) for d in range(n)]
    x = x[crop]
    if mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=value).astype(x.dtype)
    return np.pad(x, width, mode=mode)


def add_pad(name, lens, pads, mode="constant", value=None, dt=np.float32):
    x = rand(lens, dt)
    attrs = {"pads": pads, "mode": mode}
    if value is not None:
        attrs["value"] = value
    add(name, "pad", [x], [onnx_pad(x, pads, mode, value or 0.0)], attrs)


add_pad("pad_constant", (2, 3), [1, 2, 0, 1])
add_pad("pad_constant_value", (2, 3), [0, 1, 2, 1], value=1.5, dt=np.float16)
add_pad("pad_constant_int", (3, 2), [1, 0, 1, 2], value=-7, dt=np.int32)
add_pad("pad_constant_bool", (2, 2), [1, 1, 1, 1], value=1, dt=np.bool_)
add_pad("pad_edge", (3, 4), [2, 1, 1, 3], "edge")
add_pad("pad_reflect", (3, 4), [2, 3, 1, 2], "reflect", dt=np.int8)
add_pad("pad_reflect_far", (3, 2), [5, 3, 4, 6], "reflect")
add_pad("pad_reflect_single", (1, 3), [2, 0, 1, 0], "reflect", dt=np.float64)
add_pad("pad_wrap", (3, 4), [2, 5, 4, 1], "wrap")
add_pad("pad_4d_spatial", (1, 2, 3, 3), [0, 0, 1, 1, 0, 0, 1, 1], "reflect")
add_pad("pad_crop_constant", (4, 5), [-1, 2, 1, -2])
add_pad("pad_crop_reflect", (4, 5), [-1, 2, 1, -2], "reflect", dt=np.int16)
add_pad("pad_crop_edge", (5, 4), [2, -1, -2, 1], "edge")
add_pad("pad_crop_to_empty", (3, 4), [-2, 0, -1, 1])
add_pad("pad_none", (2, 3), [0, 0, 0, 0], "wrap", dt=np.uint8)
err("pad_wrong_length", "pad", [(2, 3)], "pads has 3 entries; expected 2 * 2", {"pads": [1, 1, 1]})
err("pad_bad_mode", "pad", [(2, 3)], "mode='mirror'", {"pads": [1, 1, 1, 1], "mode": "mirror"})
err("pad_crop_too_much", "pad", [(2, 3)], "pads crop 4 elements from dim 1 of size 3", {"pads": [0, -2, 0, -2]})
err("pad_edge_empty", "pad", [(0, 3)], "mode=edge cannot pad dim 0", {"pads": [1, 0, 0, 0], "mode": "edge"})


# depth_to_space / space_to_depth: the reshape/transpose pairs of the ONNX spec.
def depth_to_space(x, b, mode):
    n, c, h, w = x.shape
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), h * b, w * b)


def space_to_depth(x, b):
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(n, c * b * b, h // b, w // b)


for name, lens, b, mode, dt in [
    ("depth_to_space_dcr", (1, 8, 2, 3), 2, "DCR", np.float32),
    ("depth_to_space_crd", (2, 8, 2, 2), 2, "CRD", np.float32),
    ("depth_to_space_b3", (1, 9, 2, 2), 3, "CRD", np.int8),
    ("depth_to_space_bool", (1, 4, 3, 1), 2, "DCR", np.bool_),
    ("depth_to_space_b1", (1, 3, 2, 2), 1, "DCR", np.float16),
]:
    x = rand(lens, dt)
    add(name, "depth_to_space", [x], [depth_to_space(x, b, mode)], {"blocksize": b, "mode": mode})
for name, lens, b, dt in [
    ("space_to_depth", (1, 2, 4, 6), 2, np.float32),
    ("space_to_depth_b3", (2, 1, 3, 6), 3, np.int32),
    ("space_to_depth_f16", (1, 3, 2, 2), 2, np.float16),
]:
    x = rand(lens, dt)
    add(name, "space_to_depth", [x], [space_to_depth(x, b)], {"blocksize": b})
err("depth_to_space_channels", "depth_to_space", [(1, 6, 2, 2)], "channels (6) are not a multiple of blocksize^2 = 4",
    {"blocksize": 2})
err("depth_to_space_rank", "depth_to_space", [(8, 2, 2)], "input 0 has 3 dims", {"blocksize": 2})
err("depth_to_space_blocksize", "depth_to_space", [(1, 4, 2, 2)], "blocksize=0", {"blocksize": 0})
err("depth_to_space_mode", "depth_to_space", [(1, 4, 2, 2)], "mode='RDC'", {"blocksize": 2, "mode": "RDC"})
err("space_to_depth_indivisible", "space_to_depth", [(1, 2, 4, 5)], "are not multiples of blocksize=2",
    {"blocksize": 2})

# trilu
for name, lens, upper, k, dt in [
    ("trilu_upper", (4, 4), True, 0, np.float32),
    ("trilu_lower", (4, 4), False, 0, np.float32),
    ("trilu_upper_k1", (3, 5), True, 1, np.int32),
    ("trilu_lower_k_neg", (5, 3), False, -1, np.float16),
    ("trilu_upper_k_neg", (4, 3), True, -2, np.int8),
    ("trilu_lower_k_big", (3, 4), False, 5, np.int64),
    ("trilu_batched", (2, 3, 3), False, 1, np.bool_),
    ("trilu_upper_k_out", (3, 3), True, 4, np.float64),
]:
    x = rand(lens, dt)
    y = np.triu(x, k) if upper else np.tril(x, k)
    add(name, "trilu", [x], [y], {"upper": upper, "k": k})
err("trilu_rank", "trilu", [(4,)], "input 0 has 1 dims", {})

write("data_movement", cases)
