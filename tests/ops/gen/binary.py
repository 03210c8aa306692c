"""Cases for src/ops/binary.cpp and binary_logic.cpp, computed with numpy (float math in float64,
rounded to the element type; integer math in the element type, wrapping) and, for bitshift,
onnx's reference evaluator."""
import numpy as np
import onnx
from onnx import helper
from onnx.reference import ReferenceEvaluator
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(2)
cases = []
np.seterr(all="ignore")   # NaN from negative bases to fractional powers, wrapping int64 math


def add(name, op, fn, a, b, attrs=None, **tol):
    """A case whose output is fn(a, b): float inputs computed in float64, then rounded."""
    wide = a.dtype.kind == "f"
    y = fn(a.astype(np.float64), b.astype(np.float64)) if wide else fn(a, b)
    y = np.asarray(y)
    if y.dtype != np.bool_:
        y = y.astype(a.dtype)
    cases.append(case(name, op, [tensor(a), tensor(b)], [tensor(y)], attrs, **tol))


def f32(*lens, scale=3.0):
    return (r.standard_normal(lens) * scale).astype(np.float32)


def ints(dtype, lo, hi, *lens, nonzero=False):
    v = r.integers(lo, hi, lens).astype(dtype)
    if nonzero:
        v[v == 0] = 1
    return v


def trunc_div(a, b):
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return (np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64)) * q).astype(a.dtype)


def int_pow(a, b):
    """Truncated integer power: a negative exponent gives 0 unless |base| is 1."""
    def one(x, e):
        if e >= 0:
            return x**e
        return 1 if x == 1 else (1 if e % 2 == 0 else -1) if x == -1 else 0
    bits = a.dtype.itemsize * 8
    a, b = np.broadcast_arrays(a, b)
    out = [one(int(x), int(e)) % 2**bits for x, e in zip(a.ravel(), b.ravel())]
    out = [v - 2**bits if v >= 2 ** (bits - 1) else v for v in out]
    return np.array(out, dtype=a.dtype).reshape(a.shape)


# Each arithmetic op on float32 of one shape, and the broadcasting forms on add.
x, y = f32(3, 4), f32(3, 4)
arith = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "min": np.minimum,
         "max": np.maximum, "sqdiff": lambda a, b: (a - b) ** 2}
for op, fn in arith.items():
    add(op, op, fn, x, y)
add("pow", "pow", np.power, np.abs(x) + 0.1, (y / 2).astype(np.float32))
add("pow_negative_base", "pow", np.power, np.array([-2, -1.5, -3, 0, 2], np.float32),
    np.array([3, 2, 0.5, 2, -1], np.float32))
add("mod_fmod", "mod", np.fmod, x, y, {"fmod": True})
add("mod_float_sign_of_divisor", "mod", np.mod, x, y)
add("broadcast_row", "add", np.add, f32(3, 4), f32(4))
add("broadcast_column", "sub", np.subtract, f32(3, 1), f32(3, 4))
add("broadcast_both", "mul", np.multiply, f32(2, 3, 1), f32(1, 1, 5))
add("broadcast_scalar_left", "div", np.divide, np.array(2.5, np.float32), f32(2, 3))
add("broadcast_scalar_right", "sub", np.subtract, f32(2, 3), np.array(-1.25, np.float32))
add("broadcast_rank_mismatch", "max", np.maximum, f32(2, 1, 3, 2), f32(4, 1, 1))
add("broadcast_one_element", "add", np.add, f32(1), f32(3, 2))
add("scalars", "mul", np.multiply, np.array(1.5, np.float32), np.array(-2.0, np.float32))

# Other float types.
h = lambda *lens: (r.standard_normal(lens) * 2).astype(np.float16)
add("add_f16", "add", np.add, h(2, 3, 4), h(3, 1))
add("mul_f16", "mul", np.multiply, h(4, 5), h(4, 5))
add("div_f64", "div", np.divide, r.standard_normal((3, 5)), r.standard_normal((5,)))
add("sqdiff_f64", "sqdiff", lambda a, b: (a - b) ** 2, r.standard_normal((2, 3)), r.standard_normal((2, 3)))
add("pow_f64", "pow", np.power, r.uniform(0.1, 4, (6,)), r.uniform(-3, 3, (6,)))
add("mod_fmod_f16", "mod", np.fmod, h(2, 5), np.array([1.5, -2, 0.75, -1, 3], np.float16), {"fmod": True})

# NaN propagates through min and max from either side.
nan = np.nan
na = np.array([nan, 1.0, nan, -2.0, 3.0, np.inf], np.float32)
nb = np.array([0.5, nan, nan, -np.inf, 2.0, nan], np.float32)
add("min_nan", "min", np.minimum, na, nb)
add("max_nan", "max", np.maximum, na, nb)
add("max_nan_f16", "max", np.maximum, na.astype(np.float16), nb.astype(np.float16))

# Integers: truncating division, both modulus conventions, wrapping overflow.
ia, ib = ints(np.int32, -100, 100, 4, 5), ints(np.int32, -12, 12, 4, 5, nonzero=True)
add("div_int32", "div", trunc_div, ia, ib)
add("div_int8_broadcast", "div", trunc_div, ints(np.int8, -128, 127, 2, 4), ints(np.int8, 1, 9, 4) * -1)
add("div_int64_min_by_minus_one", "div", trunc_div, np.array([-2**63, 7], np.int64), np.array([-1, -1], np.int64))
add("div_uint8", "div", lambda a, b: a // b, ints(np.uint8, 0, 255, 3, 3), ints(np.uint8, 1, 20, 3, 1))
add("mod_int64", "mod", np.mod, ia.astype(np.int64), ib.astype(np.int64))
add("mod_int32_fmod", "mod", np.fmod, ia, ib, {"fmod": True})
add("mod_uint16", "mod", np.mod, ints(np.uint16, 0, 60000, 6), ints(np.uint16, 1, 300, 6))
add("add_uint8_wraps", "add", np.add, ints(np.uint8, 100, 255, 3, 4), ints(np.uint8, 100, 255, 4))
add("mul_int8_wraps", "mul", np.multiply, ints(np.int8, -128, 127, 5), ints(np.int8, -128, 127, 5))
add("add_int64_wraps", "add", np.add, np.array([2**63 - 1, -2**63, 5], np.int64), np.array([1, -1, -7], np.int64))
add("sub_int64", "sub", np.subtract, ints(np.int64, -2**40, 2**40, 2, 3), ints(np.int64, -2**40, 2**40, 3))
add("sqdiff_int32", "sqdiff", lambda a, b: (a - b) ** 2, ints(np.int32, -1000, 1000, 7), ints(np.int32, -1000, 1000, 7))
add("min_int16", "min", np.minimum, ints(np.int16, -30000, 30000, 2, 4), ints(np.int16, -30000, 30000, 2, 1))
add("max_uint8", "max", np.maximum, ints(np.uint8, 0, 255, 8), ints(np.uint8, 0, 255, 8))
add("pow_int32", "pow", int_pow, np.array([2, -3, 5, 0, 7, -1, -1, 1, 2, 3], np.int32),
    np.array([10, 3, 0, 4, 12, 5, -3, -4, -1, 25], np.int32))
add("pow_int64", "pow", int_pow, ints(np.int64, -20, 20, 2, 3), ints(np.int64, 0, 12, 3))

# prelu: slope broadcasts to x (per channel, scalar) and integers.
pr = lambda xx, s: np.where(xx < 0, s * xx, xx)
add("prelu", "prelu", pr, f32(2, 3, 4), np.abs(f32(3, 1, scale=0.5)))
add("prelu_scalar_slope", "prelu", pr, f32(5, 2), np.array(0.1, np.float32))
add("prelu_same_shape_f16", "prelu", pr, h(3, 4), h(3, 4))
add("prelu_int32", "prelu", pr, ints(np.int32, -50, 50, 2, 5), ints(np.int32, -3, 4, 5))

# Comparisons: bool out, broadcasting, NaN compares false (but not-equal).
ca, cb = ints(np.int32, -3, 3, 3, 4).astype(np.float32), ints(np.int32, -3, 3, 4).astype(np.float32)
compare = {"equal": np.equal, "greater": np.greater, "less": np.less, "greater_or_equal": np.greater_equal,
           "less_or_equal": np.less_equal}
for op, fn in compare.items():
    add(op, op, fn, ca, cb)
    add(op + "_nan", op, fn, na, nb)
add("equal_int64", "equal", np.equal, ints(np.int64, 0, 3, 2, 3), ints(np.int64, 0, 3, 2, 1))
add("equal_bool", "equal", np.equal, ints(np.int8, 0, 2, 2, 3).astype(bool), ints(np.int8, 0, 2, 3).astype(bool))
add("greater_uint8", "greater", np.greater, ints(np.uint8, 0, 255, 6), ints(np.uint8, 0, 255, 6))
add("less_f16", "less", np.less, h(2, 3), h(3))
add("less_or_equal_int16_scalar", "less_or_equal", np.less_equal, ints(np.int16, -5, 5, 7), np.array(0, np.int16))

ba, bb = ints(np.int8, 0, 2, 2, 3, 4).astype(bool), ints(np.int8, 0, 2, 3, 1).astype(bool)
for op, fn in {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}.items():
    add(op, op, fn, ba, bb)

bitwise = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}
for op, fn in bitwise.items():
    add(op, op, fn, ints(np.int32, -2**31, 2**31 - 1, 3, 4), ints(np.int32, -2**31, 2**31 - 1, 4))
    add(op + "_uint8", op, fn, ints(np.uint8, 0, 255, 6), ints(np.uint8, 0, 255, 6))
add("bitwise_and_int64", "bitwise_and", np.bitwise_and, ints(np.int64, -2**62, 2**62, 5), ints(np.int64, -2**62, 2**62, 5))


def bitshift(name, a, b, direction):
    node = helper.make_node("BitShift", ["a", "b"], ["y"], direction=direction.upper())
    ty = helper.np_dtype_to_tensor_dtype(a.dtype)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", ty, None),
                                        helper.make_tensor_value_info("b", ty, None)],
                          [helper.make_tensor_value_info("y", ty, None)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", onnx.defs.onnx_opset_version())])
    (out,) = ReferenceEvaluator(model).run(None, {"a": a, "b": b})
    cases.append(case(name, "bitshift", [tensor(a), tensor(b)], [tensor(out)], {"direction": direction}))


bitshift("bitshift_left_uint8", ints(np.uint8, 0, 255, 2, 4), np.array([0, 1, 3, 7], np.uint8), "left")
bitshift("bitshift_right_uint8", ints(np.uint8, 0, 255, 2, 4), np.array([0, 1, 3, 7], np.uint8), "right")
bitshift("bitshift_out_of_range_uint32", ints(np.uint32, 1, 2**32 - 1, 6),
         np.array([31, 32, 33, 63, 64, 200], np.uint32), "left")
bitshift("bitshift_right_uint64", np.array([2**62 + 5, 12345, 1, 2**40], np.uint64),
         np.array([1, 64, 0, 40], np.uint64), "right")
bitshift("bitshift_right_int8_negative", np.array([-128, -7, -1, 100, -100, 5], np.int8),
         np.array([1, 2, 8, 9, -1, 3], np.int8), "right")
bitshift("bitshift_left_int16", np.array([-1, 3, 16384, -300, 7], np.int16), np.array([3, 14, 1, 16, -2], np.int16),
         "left")

# Errors: shapes and types checked before compute, division by zero at compute.
f = lambda *lens: shape_only("float32", lens)
E = lambda name, op, ins, msg, attrs=None: cases.append(error_case(name, op, ins, msg, attrs))
E("add_mismatched_types", "add", [f(2), shape_only("float16", [2])], "input 1 is half_type but input 0 is float_type")
E("add_unbroadcastable", "add", [f(2, 3), f(4)], "cannot broadcast {2, 3} and {4}")
E("mul_one_input", "mul", [f(2)], "expected 2 inputs, got 1")
E("sub_three_inputs", "sub", [f(2)] * 3, "expected 2 inputs, got 3")
E("add_bool", "add", [shape_only("bool", [2])] * 2, "expected a numeric")
E("bitshift_bad_direction", "bitshift", [shape_only("uint8", [2])] * 2, "direction='up'", {"direction": "up"})
E("bitshift_no_direction", "bitshift", [shape_only("uint8", [2])] * 2, "expected left or right")
E("bitshift_float", "bitshift", [f(2), f(2)], "expected an integer type", {"direction": "left"})
E("bitwise_or_float", "bitwise_or", [f(2), f(2)], "expected an integer type")
E("logical_and_int", "logical_and", [shape_only("int32", [2])] * 2, "expected bool")
E("greater_bool", "greater", [shape_only("bool", [2])] * 2, "expected a numeric")
E("prelu_slope_wider_than_x", "prelu", [f(3, 1), f(3, 4)], "does not broadcast to the shape of x")
E("pow_mixed_types", "pow", [f(3), shape_only("int32", [3])], "inputs must have the same type")
zero = lambda dt: [tensor(np.array([4, 5], dt)), tensor(np.array([2, 0], dt))]
E("div_int_by_zero", "div", zero(np.int32), "div: integer division by zero")
E("div_uint_by_zero", "div", zero(np.uint8), "div: integer division by zero")
E("mod_int_by_zero", "mod", zero(np.int64), "mod: integer modulus by zero")
E("pow_zero_to_negative", "pow", [tensor(np.array([0], np.int32)), tensor(np.array([-2], np.int32))],
  "pow: 0 raised to the negative power -2")
write("binary", cases)
