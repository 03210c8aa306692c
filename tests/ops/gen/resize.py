"""Cases for src/ops/resize.cpp, computed with onnx's reference evaluator (ONNX Resize, opset 19).
kiln follows the spec where the reference differs from it (pytorch_half_pixel with an output
length of 1: the spec maps it to 0, the reference to -0.5, which differ for cubic; tf_crop_and_resize with a crop box
and scales: the spec's output length is floor(in * box * scale), the reference's floor(in *
scale)), so those combinations are not generated here. A scale that gives a fractional length (in * scale) is the spec's length_resized, as in the
reference."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write
from onnx_oracle import run_node

r = rng(19)
cases = []


def add(name, x, scales=None, out_lens=None, roi=None, **attrs):
    """attrs are kiln's (and ONNX's) attribute names; roi is given only for tf_crop_and_resize."""
    onnx_attrs = {k: int(v) if isinstance(v, bool) else v for k, v in attrs.items()}
    s = None if scales is None else np.array(scales, np.float32)
    z = None if out_lens is None else np.array(out_lens, np.int64)
    roi_in = None if roi is None else np.array(roi, np.float32)
    (y,) = run_node("Resize", [x, roi_in, s, z], **onnx_attrs)
    kattrs = dict(attrs)
    if scales is not None:
        kattrs["scales"] = [float(v) for v in s]
    if out_lens is not None:
        kattrs["out_lens"] = list(out_lens)
    if roi is not None:
        kattrs["roi"] = [float(v) for v in roi_in]
    cases.append(case(name, "resize", [tensor(x)], [tensor(y)], kattrs))


def f32(*lens):
    return r.standard_normal(lens).astype(np.float32)


# 1-D: every mode, up and down.
x1 = f32(5)
add("1d_nearest_up", x1, scales=[2.0])
add("1d_nearest_down", x1, scales=[0.5])
add("1d_linear_up_asymmetric", x1, scales=[1.6], mode="linear", coordinate_transformation_mode="asymmetric")
add("1d_linear_down", x1, out_lens=[3], mode="linear")
add("1d_cubic_up", x1, scales=[2.4], mode="cubic")
add("1d_cubic_align_corners", x1, out_lens=[8], mode="cubic", coordinate_transformation_mode="align_corners")
add("1d_cubic_down_exclude_outside", f32(9), scales=[0.4], mode="cubic", exclude_outside=True)

# 2-D: each coordinate transformation mode with linear, up and down.
x2 = f32(4, 5)
for ctm in ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"]:
    add(f"2d_linear_up_{ctm}", x2, out_lens=[7, 8], mode="linear", coordinate_transformation_mode=ctm)
    add(f"2d_linear_down_{ctm}", x2, out_lens=[3, 2], mode="linear", coordinate_transformation_mode=ctm)
add("2d_linear_fractional_scales_symmetric", x2, scales=[1.7, 0.7], mode="linear",
    coordinate_transformation_mode="half_pixel_symmetric")
add("2d_linear_fractional_scales_half_pixel", x2, scales=[1.3, 1.9], mode="linear")
add("2d_linear_pytorch_length_1", x2, out_lens=[1, 3], mode="linear", coordinate_transformation_mode="pytorch_half_pixel")
add("2d_linear_align_corners_length_1", x2, out_lens=[1, 6], mode="linear", coordinate_transformation_mode="align_corners")

# 2-D nearest: each rounding mode, with coordinates that land on halves.
for nm in ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]:
    add(f"2d_nearest_{nm}_up", x2, scales=[2.0, 1.5], nearest_mode=nm)
    add(f"2d_nearest_{nm}_down_asymmetric", f32(6, 8), scales=[0.5, 0.75], nearest_mode=nm,
        coordinate_transformation_mode="asymmetric")
add("2d_nearest_align_corners", x2, out_lens=[6, 3], coordinate_transformation_mode="align_corners")
add("2d_nearest_floor_exclude_outside", x2, scales=[3.0, 2.0], nearest_mode="floor", exclude_outside=True)

# 2-D cubic: the coefficient, exclude_outside, downsampling.
add("2d_cubic_up", x2, scales=[2.0, 1.5], mode="cubic")
add("2d_cubic_a_half", x2, out_lens=[6, 7], mode="cubic", cubic_coeff_a=-0.5)
add("2d_cubic_exclude_outside", x2, out_lens=[7, 9], mode="cubic", exclude_outside=True, cubic_coeff_a=-0.5)
add("2d_cubic_down_asymmetric", f32(8, 6), scales=[0.5, 0.6], mode="cubic", coordinate_transformation_mode="asymmetric")
add("2d_cubic_pytorch", x2, out_lens=[3, 7], mode="cubic", coordinate_transformation_mode="pytorch_half_pixel")

# Scales whose output length is fractional: align_corners and pytorch_half_pixel use
# length_resized = in * scale, not the rounded-down length.
add("1d_linear_align_corners_fractional", f32(4), scales=[0.6], mode="linear", coordinate_transformation_mode="align_corners")
add("1d_cubic_align_corners_fractional", f32(7), scales=[0.7], mode="cubic", coordinate_transformation_mode="align_corners")
add("1d_linear_pytorch_fractional_length_1", f32(4), scales=[0.3], mode="linear",
    coordinate_transformation_mode="pytorch_half_pixel")

# tf_crop_and_resize: a crop box partly outside the input gives extrapolation_value there.
for mode in ["nearest", "linear", "cubic"]:
    add(f"2d_crop_{mode}", x2, out_lens=[5, 6], roi=[0.25, -0.25, 0.875, 1.25], mode=mode,
        coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=10.0)
add("2d_crop_inside_length_1", x2, out_lens=[1, 4], roi=[0.25, 0.125, 0.75, 0.625], mode="linear",
    coordinate_transformation_mode="tf_crop_and_resize")
add("1d_crop_scales", f32(7), scales=[2.0], roi=[0.0, 1.0], mode="linear",
    coordinate_transformation_mode="tf_crop_and_resize")

# 4-D NCHW, as models use it, and a 4-D resize of every dim.
x4 = f32(1, 2, 3, 4)
add("4d_nearest_asymmetric_floor", x4, scales=[1, 1, 2, 2], coordinate_transformation_mode="asymmetric",
    nearest_mode="floor")
add("4d_linear_half_pixel", x4, scales=[1, 1, 2, 1.5], mode="linear")
add("4d_cubic_sizes", x4, out_lens=[1, 2, 5, 3], mode="cubic")
add("4d_linear_all_dims", f32(2, 2, 3, 2), out_lens=[3, 1, 4, 3], mode="linear", coordinate_transformation_mode="align_corners")
add("4d_nearest_down", f32(1, 1, 6, 6), scales=[1, 1, 0.5, 0.34], nearest_mode="round_prefer_ceil")

# Other types: integers round the interpolated value half to even.
add("f16_linear", r.standard_normal((3, 4)).astype(np.float16), scales=[2, 1.5], mode="linear")
add("f64_cubic", r.standard_normal((4, 3)), out_lens=[6, 5], mode="cubic")
add("int8_nearest", r.integers(-100, 100, (3, 4)).astype(np.int8), scales=[2, 0.5])
add("uint8_linear_asymmetric", r.integers(0, 255, (3, 3)).astype(np.uint8), scales=[2, 2], mode="linear",
    coordinate_transformation_mode="asymmetric")
add("int32_nearest_down", r.integers(-10**6, 10**6, (4, 6)).astype(np.int32), out_lens=[2, 4])
# A dim kept at scale 1 samples only its own index: row 1 stays free of row 0's NaN.
add("identity_dim_keeps_nan_out", np.array([[np.nan, 1.0], [2.0, 3.0]], np.float32), scales=[1, 2], mode="linear")

# Antialias: downsampling linear and cubic widen the kernel by 1 / scale; upsampling is plain.
add("2d_linear_antialias_down", f32(9, 11), scales=[0.4, 0.7], mode="linear", antialias=True)
add("2d_cubic_antialias_sizes", f32(10, 7), out_lens=[3, 5], mode="cubic", antialias=True)
add("2d_cubic_antialias_exclude_outside", f32(8, 8), scales=[0.3, 0.5], mode="cubic", antialias=True,
    exclude_outside=True, cubic_coeff_a=-0.5)
add("2d_linear_antialias_up_and_down", f32(4, 9), scales=[1.5, 0.45], mode="linear", antialias=True,
    coordinate_transformation_mode="asymmetric")

# Lengths and scales both (keep_aspect_ratio_policy): the lengths from sizes, the coordinates from
# the one scale; ONNX's reference computes it from sizes [3, 5] with not_smaller: scale
# max(3/4, 5/7) = 0.75, lengths round(0.75 * [4, 7]) = [3, 5].
xk = f32(1, 1, 4, 7)
(yk,) = run_node("Resize", [xk, None, None, np.array([3, 5], np.int64)], mode="linear", axes=[2, 3],
                 keep_aspect_ratio_policy="not_smaller")
cases.append(case("lengths_and_scales_not_smaller", "resize", [tensor(xk)], [tensor(yk)],
                  {"mode": "linear", "out_lens": [1, 1, 3, 5], "scales": [1.0, 1.0, 0.75, 0.75]}))


def err(name, message, lens=(2, 3), type="float32", **attrs):
    cases.append(error_case(name, "resize", [shape_only(type, list(lens))], message, attrs))


err("bad_mode", "mode='bicubic'; expected one of nearest, linear, cubic", mode="bicubic", scales=[2.0, 2.0])
err("bad_coordinate_mode", "coordinate_transformation_mode='tf_half_pixel_for_nn'",
    coordinate_transformation_mode="tf_half_pixel_for_nn", scales=[2.0, 2.0])
err("bad_nearest_mode", "nearest_mode='round'; expected one of", nearest_mode="round", scales=[2.0, 2.0])
err("neither_sizes_nor_scales", "give out_lens, scales or both")
err("scales_length", "scales has 3 values; expected 2 (one per dim)", scales=[1.0, 2.0, 2.0])
err("out_lens_length", "out_lens has 1 values; expected 2", out_lens=[4])
err("negative_out_len", "out_lens[1]=-3; expected a size >= 0", out_lens=[4, -3])
err("zero_scale", "scales[0]=0; expected a scale > 0", scales=[0.0, 1.0])
err("crop_without_roi", "roi has 0 values; tf_crop_and_resize expects 4", out_lens=[4, 6],
    coordinate_transformation_mode="tf_crop_and_resize")
err("roi_without_crop", "roi is given but only tf_crop_and_resize uses it", out_lens=[4, 6], roi=[0, 0, 1, 1])
err("bool_input", "expected a numeric type", type="bool", scales=[2.0, 2.0])
err("scalar_input", "input 0 has 0 dims", lens=(), scales=[])
err("empty_dim", "dim 1 has size 0; there is nothing to resize", lens=(2, 0), out_lens=[2, 3])
write("resize", cases)
