"""Cases for src/ops/quantize.cpp (quantizelinear, dequantizelinear), computed with numpy from the
ONNX formulas: the quotient x / scale in the scale's type, rounded half to even, plus the zero
point, clamped to the target's range; fp8 through ml_dtypes. Where x and the scale share a type
the values are checked against onnx's reference QuantizeLinear/DequantizeLinear too."""
import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from caselib import case, error_case, rng, shape_only, tensor, type_name, write

r = rng(11)
cases = []
np.seterr(all="ignore")   # division by zero and overflow are part of what is tested
e4m3, e5m2 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2
RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint16": (0, 65535),
          "int4": (-8, 7), "uint4": (0, 15)}
STORAGE = {"int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "int4": np.int8,
           "uint4": np.uint8, "float8e4m3fn": e4m3, "float8e5m2": e5m2}
ONNX_TYPE = {"int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "int16": TensorProto.INT16,
             "uint16": TensorProto.UINT16, "int4": TensorProto.INT4, "uint4": TensorProto.UINT4,
             "float8e4m3fn": TensorProto.FLOAT8E4M3FN, "float8e5m2": TensorProto.FLOAT8E5M2}


def expand(v, x_shape, axis, block):
    """The scale (or zero point) broadcast to x: per tensor, per axis or blocked."""
    v = np.asarray(v)
    if v.size == 1:
        return v.reshape(())
    axis %= len(x_shape)
    if not block:
        dims = [1] * len(x_shape)
        dims[axis] = v.size
        return v.reshape(dims)
    return np.repeat(v, block, axis=axis).take(range(x_shape[axis]), axis=axis)


def quantize(x, s, zp, target, axis=1, block=0, saturate=True):
    sx = expand(s, x.shape, axis, block)
    q = (x.astype(sx.dtype) / sx).astype(np.float64)
    z = np.zeros(()) if zp is None else expand(zp, x.shape, axis, block).astype(np.float64)
    if target in RANGES:
        lo, hi = RANGES[target]
        v = np.where(np.isnan(q), z, np.rint(q) + z)
        return np.clip(v, lo, hi).astype(STORAGE[target])
    v = q + z
    if saturate:
        m = float(ml_dtypes.finfo(STORAGE[target]).max)
        v = np.clip(v, -m, m)
    return v.astype(STORAGE[target])


def dequantize(x, s, zp, axis=1, block=0):
    sx = expand(s, x.shape, axis, block)
    d = x.astype(np.float64) - (0 if zp is None else expand(zp, x.shape, axis, block).astype(np.float64))
    return d.astype(sx.dtype) * sx


def onnx_run(op, inputs, attrs):
    names = ["x", "s", "z"][: len(inputs)]
    node = helper.make_node(op, names, ["y"], **attrs)
    vi = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), None) for n, a in zip(names, inputs)]
    g = helper.make_graph([node], "g", vi, [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 25)])
    return ReferenceEvaluator(m).run(None, dict(zip(names, inputs)))[0]


def q_case(name, x, s, zp=None, target=None, axis=1, block=0, saturate=True, check_onnx=True):
    target = target or (type_name(zp.dtype) if zp is not None else "uint8")
    if zp is not None and target in ("int4", "uint4"):
        zp_t = tensor(zp, target)
    else:
        zp_t = None if zp is None else tensor(zp)
    y = quantize(x, s, zp, target, axis, block, saturate)
    if check_onnx and target not in ("int4", "uint4"):
        attrs = {"axis": axis, "saturate": int(saturate), "output_dtype": ONNX_TYPE[target]}
        if block:
            attrs["block_size"] = block
        want = onnx_run("QuantizeLinear", [x, s] + ([] if zp is None else [zp]), attrs)
        assert np.array_equal(want.astype(np.float64), y.astype(np.float64), equal_nan=True), (name, want, y)
    attrs = {"axis": axis, "block_size": block, "target_type": target, "saturate": saturate}
    ins = [tensor(x), tensor(s)] + ([] if zp_t is None else [zp_t])
    cases.append(case("q_" + name, "quantizelinear", ins, [tensor(y, target)], attrs, rtol=0, atol=0))


def dq_case(name, x, s, zp=None, axis=1, block=0, x_type=None, check_onnx=True):
    y = dequantize(x, s, zp, axis, block)
    if check_onnx and x_type is None:
        attrs = {"axis": axis}
        if block:
            attrs["block_size"] = block
        want = onnx_run("DequantizeLinear", [x, s] + ([] if zp is None else [zp]), attrs)
        assert np.array_equal(want, y), (name, want, y)
    ins = [tensor(x, x_type), tensor(s)] + ([] if zp is None else [tensor(zp, x_type)])
    cases.append(case("dq_" + name, "dequantizelinear", ins, [tensor(y)], {"axis": axis, "block_size": block},
                      rtol=0, atol=0))


f32 = np.float32
scale = lambda *lens: r.uniform(0.05, 2.0, lens).astype(f32)

# Per tensor: ties round to even, both ends saturate, NaN gives the zero point, Inf the maximum.
ties = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49, 1000, -1000], f32)
q_case("uint8_ties_saturate", ties, f32(1), np.uint8(128))
q_case("int8_ties", ties * 2, f32(2), np.int8(-3))
# onnx's reference turns +Inf into the minimum (rint(inf) as int32); the spec saturates.
q_case("inf_saturates", np.array([np.inf, -np.inf, 3e9, -3e9], f32), f32(1), np.int8(0), check_onnx=False)
q_case("nan_gives_zero_point", np.array([np.nan, 1.0, -np.nan], f32), f32(0.5), np.uint8(10), check_onnx=False)
q_case("default_uint8_no_zero_point", (r.standard_normal((3, 4)) * 50).astype(f32), f32(0.75))
q_case("int8_no_zero_point", (r.standard_normal((2, 3, 4)) * 50).astype(f32), f32(0.5), target="int8")
q_case("scale_and_zero_point_one_element", r.standard_normal((4, 2)).astype(f32) * 3, np.array([0.02], f32),
       np.array([5], np.int8))
q_case("scalar_scale_zero_point_1d", r.standard_normal((5,)).astype(f32) * 3, f32(0.03), np.array([7], np.uint8))
q_case("int16", (r.standard_normal((4, 4)) * 3e4).astype(f32), f32(0.7), np.int16(-200))
q_case("uint16", (r.standard_normal((4, 4)) * 3e4).astype(f32), f32(0.9), np.uint16(30000))
q_case("float64", r.standard_normal((3, 3)) * 100, np.float64(0.37), np.int8(1))
q_case("float16", (r.standard_normal((2, 5)) * 60).astype(np.float16), np.float16(0.3), np.uint8(100))
q_case("int32_input", r.integers(-1000, 1000, (6,)).astype(np.int32), f32(7.5), np.int8(0), check_onnx=False)
# The division happens in the scale's type: x (float32) is rounded to float16 first.
q_case("float32_x_float16_scale", (r.standard_normal((3, 4)) * 40).astype(f32), np.float16(0.1337), np.int8(0),
       check_onnx=False)
q_case("scale_zero", np.array([1.0, -1.0, 0.0], f32), f32(0), np.int8(3), check_onnx=False)

# Per axis.
x3 = (r.standard_normal((2, 3, 4)) * 20).astype(f32)
q_case("axis1", x3, scale(3), r.integers(-10, 10, (3,)).astype(np.int8))
q_case("axis_minus1", x3, scale(4), r.integers(100, 150, (4,)).astype(np.uint8), axis=-1)
q_case("axis0_no_zero_point", x3, scale(2), target="int8", axis=0)

# Blocked: whole blocks and a shorter last block.
xb = (r.standard_normal((3, 4)) * 10).astype(f32)
q_case("blocked_axis1", xb, scale(3, 2), r.integers(0, 5, (3, 2)).astype(np.uint8), axis=1, block=2)
xr = (r.standard_normal((2, 7, 2)) * 10).astype(f32)
q_case("blocked_remainder", xr, scale(2, 3, 2), r.integers(-3, 3, (2, 3, 2)).astype(np.int8), axis=1, block=3)
q_case("blocked_axis0_int4", (r.standard_normal((4, 3)) * 6).astype(f32), scale(2, 3), target="int4", axis=0, block=2)

# 4-bit targets.
x4 = (r.standard_normal((3, 4)) * 12).astype(f32)
q_case("int4_axis0", x4, scale(3), r.integers(-2, 2, (3,)).astype(np.int8), target="int4", axis=0)
q_case("uint4", x4, f32(1.5), np.uint8(8), target="uint4")

# fp8: saturate clamps overflow and Inf; without it overflow becomes NaN (e4m3fn) or Inf (e5m2).
xf = np.array([0, 0.3, -1.7, 100, 900, 1e4, 1e6, -1e6, np.inf, -np.inf, np.nan, 2.0**-10], f32)
for t, st in (("float8e4m3fn", e4m3), ("float8e5m2", e5m2)):
    q_case(f"{t}_saturate", xf, f32(2), np.array(0, st))
    q_case(f"{t}_no_saturate", xf, f32(2), np.array(0, st), saturate=False)
    q_case(f"{t}_no_zero_point_axis", (r.standard_normal((2, 3)) * 100).astype(f32), scale(3), target=t, axis=1)

# Dequantize.
u8 = r.integers(0, 256, (3, 4)).astype(np.uint8)
dq_case("uint8_per_tensor", u8, f32(0.02), np.uint8(128))
dq_case("int8_no_zero_point", r.integers(-128, 128, (2, 5)).astype(np.int8), f32(1.5))
dq_case("per_axis", r.integers(-128, 128, (2, 3, 4)).astype(np.int8), scale(3), r.integers(-5, 5, (3,)).astype(np.int8))
dq_case("per_axis_minus1", r.integers(0, 256, (2, 3, 4)).astype(np.uint8), scale(4),
        r.integers(0, 256, (4,)).astype(np.uint8), axis=-1)
dq_case("blocked", r.integers(0, 256, (1, 4, 3, 2)).astype(np.uint8), scale(1, 2, 3, 2),
        r.integers(0, 256, (1, 2, 3, 2)).astype(np.uint8), axis=1, block=2)
dq_case("blocked_remainder", r.integers(-128, 128, (5, 2)).astype(np.int8), scale(2, 2),
        r.integers(-9, 9, (2, 2)).astype(np.int8), axis=0, block=3)
dq_case("int16", r.integers(-32768, 32768, (6,)).astype(np.int16), f32(0.001), np.int16(-1024))
dq_case("uint16", r.integers(0, 65536, (6,)).astype(np.uint16), f32(0.5), np.uint16(32767))
dq_case("int32", r.integers(-2**30, 2**30, (5,)).astype(np.int32), f32(1e-4))
dq_case("float16_scale", r.integers(0, 256, (3, 3)).astype(np.uint8), np.float16(0.0123), np.uint8(3))
dq_case("bfloat16_scale", r.integers(-128, 128, (4,)).astype(np.int8), np.array(0.37, ml_dtypes.bfloat16),
        check_onnx=False)
# onnx's reference multiplies in float32 (numpy scalar promotion); the spec says the output type.
dq_case("float64_scale", r.integers(-128, 128, (4,)).astype(np.int8), np.float64(0.1), np.int8(2), check_onnx=False)
# int16 differences beyond float16's 11 bits are rounded to float16 before the product.
dq_case("uint16_float16_scale", np.array([0, 65535, 4097, 2049], np.uint16), np.float16(0.5), np.uint16(0),
        check_onnx=False)
dq_case("int4", np.array([0, 1, 7, -4, -8], np.int8), f32(2), np.int8(1), x_type="int4")
dq_case("uint4_axis", r.integers(0, 16, (2, 3)).astype(np.uint8), scale(3), r.integers(0, 16, (3,)).astype(np.uint8),
        x_type="uint4")
dq_case("fp8e4m3fn", np.array([0, 0.5, 1, 448, -104], e4m3), f32(2))
dq_case("fp8e5m2_zero_point", np.array([0, 0.5, 1, 49152, -96], e5m2), f32(2), np.array([0], e5m2))
dq_case("fp8e4m3fn_float16_scale", np.array([0, 0.5, 1, 448, -104], e4m3), np.float16(2))

# Errors.
x, s = shape_only("float32", [2, 3]), shape_only("float32", [])
for op in ("quantizelinear", "dequantizelinear"):
    xi = x if op == "quantizelinear" else shape_only("uint8", [2, 3])
    cases.append(error_case(f"{op}_one_input", op, [xi], "expected 2 to 3 inputs, got 1"))
    cases.append(error_case(f"{op}_int_scale", op, [xi, shape_only("int32", [])], "input 1 is int32_type; expected a float"))
    cases.append(error_case(f"{op}_2d_scale", op, [xi, shape_only("float32", [2, 3])], "expected a scalar or 1-D"))
    cases.append(error_case(f"{op}_axis_len", op, [xi, shape_only("float32", [2])], "has 2 values; expected 3"))
    cases.append(error_case(f"{op}_axis_range", op, [xi, shape_only("float32", [2])], "axis=2 is out of range",
                            {"axis": 2}))
    cases.append(error_case(f"{op}_block_lens", op, [xi, shape_only("float32", [2, 1])],
                            "(ceil of input 0's 3 / block_size=2)", {"block_size": 2}))
    cases.append(error_case(f"{op}_block_rank", op, [xi, shape_only("float32", [2])], "expected 2 like input 0",
                            {"block_size": 2}))
    cases.append(error_case(f"{op}_block_negative", op, [xi, s], "block_size=-1; expected >= 0", {"block_size": -1}))
cases.append(error_case("quantizelinear_zero_point_type", "quantizelinear", [x, s, shape_only("int8", [])],
                        "input 2 (zero point) is int8_type; expected target_type=uint8_type"))
cases.append(error_case("quantizelinear_zero_point_lens", "quantizelinear",
                        [x, shape_only("float32", [3]), shape_only("uint8", [2])], "like input 1 (scale)"))
cases.append(error_case("quantizelinear_float_target", "quantizelinear", [x, s], "target_type=float_type; expected int8",
                        {"target_type": "float32"}))
cases.append(error_case("quantizelinear_bool_input", "quantizelinear", [shape_only("bool", [2]), s],
                        "input 0 is bool_type; expected a numeric type"))
cases.append(error_case("dequantizelinear_float_input", "dequantizelinear", [x, s],
                        "input 0 is float_type; expected an integer, fp8 or fp4e2m1 type"))
cases.append(error_case("dequantizelinear_zero_point_type", "dequantizelinear",
                        [shape_only("uint8", [2]), s, shape_only("int8", [])],
                        "input 2 (zero point) is int8_type; expected uint8_type like input 0"))
write("quantize", cases)
