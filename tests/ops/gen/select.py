"""Cases for src/ops/select.cpp (where, clip), computed with numpy."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(3)
cases = []


def where(name, c, a, b):
    cases.append(case(name, "where", [tensor(c), tensor(a), tensor(b)], [tensor(np.where(c, a, b))]))


def clip(name, x, lo, hi):
    # numpy's minimum/maximum propagate NaN from any of the three, as kiln's clip does.
    wide = x.dtype.kind == "f"
    y = np.minimum(np.maximum(x.astype(np.float64), lo), hi) if wide else np.minimum(np.maximum(x, lo), hi)
    cases.append(case(name, "clip", [tensor(x), tensor(lo), tensor(hi)], [tensor(y.astype(x.dtype))]))


f32 = lambda *lens: (r.standard_normal(lens) * 3).astype(np.float32)
cond = lambda *lens: r.integers(0, 2, lens).astype(bool)

where("where", cond(3, 4), f32(3, 4), f32(3, 4))
where("where_broadcast_three_ways", cond(2, 1, 4), f32(3, 1), f32(4))
where("where_scalar_cond", np.array(False), f32(2, 3), f32(2, 3))
where("where_scalar_choice", cond(2, 5), np.array(0.5, np.float32), f32(5))
where("where_rank_mismatch", cond(4), f32(2, 3, 1), np.array([-1.0], np.float32))
where("where_int32", cond(2, 3), r.integers(-100, 100, (2, 3)).astype(np.int32), np.array(7, np.int32))
where("where_int64", cond(3, 1), r.integers(-2**40, 2**40, (3, 2)).astype(np.int64),
      r.integers(-5, 5, (1, 2)).astype(np.int64))
where("where_uint8", cond(5), r.integers(0, 255, (5,)).astype(np.uint8), r.integers(0, 255, (5,)).astype(np.uint8))
where("where_bool", cond(2, 4), cond(2, 4), cond(4))
where("where_f16", cond(2, 2, 3), f32(2, 1, 3).astype(np.float16), f32(3).astype(np.float16))
where("where_f64_nan", np.array([True, False, True, False]), np.array([np.nan, 1, np.inf, 2]),
      np.array([3, np.nan, 4, -np.inf]))

clip("clip", f32(3, 4), np.array(-1.0, np.float32), np.array(2.0, np.float32))
clip("clip_broadcast_bounds", f32(3, 4), f32(4) - 2, f32(3, 1) + 2)
clip("clip_nan", np.array([np.nan, 1, 5, -5, 0.5, 2], np.float32), np.array([0, np.nan, 0, 0, 0, 0], np.float32),
     np.array([1, 1, 1, 1, np.nan, 1], np.float32))
clip("clip_low_above_high", f32(6), np.array(1.0, np.float32), np.array(-1.0, np.float32))
clip("clip_inf_bounds", np.array([-np.inf, -3, 0, 3, np.inf], np.float32), np.array(-np.inf, np.float32),
     np.array(2.5, np.float32))
clip("clip_f16", f32(2, 3).astype(np.float16), np.array(-0.5, np.float16), np.array([0.5, 1, 1.5], np.float16))
clip("clip_f64", r.standard_normal((2, 2, 3)), np.array(-0.3), np.array(0.4))
clip("clip_int32", r.integers(-100, 100, (3, 4)).astype(np.int32), np.array(-10, np.int32),
     r.integers(0, 50, (4,)).astype(np.int32))
clip("clip_uint8", r.integers(0, 255, (8,)).astype(np.uint8), np.array(20, np.uint8), np.array(200, np.uint8))
clip("clip_int64", r.integers(-2**40, 2**40, (5,)).astype(np.int64), np.array(-2**38, np.int64),
     np.array(2**39, np.int64))

f = lambda *lens: shape_only("float32", lens)
b = lambda *lens: shape_only("bool", lens)
E = lambda name, op, ins, msg: cases.append(error_case(name, op, ins, msg))
E("where_float_cond", "where", [f(2), f(2), f(2)], "input 0 is float_type; expected bool")
E("where_mismatched_choices", "where", [b(2), f(2), shape_only("float16", [2])],
  "input 2 is half_type but input 1 is float_type")
E("where_two_inputs", "where", [b(2), f(2)], "expected 3 inputs, got 2")
E("where_unbroadcastable", "where", [b(4), f(2, 3), f(2, 1)],
  "cannot broadcast")
E("clip_mismatched_types", "clip", [f(2), f(), shape_only("float64", [])], "input 2 is double_type but input 0")
E("clip_bool", "clip", [b(2), b(), b()], "expected a numeric")
E("clip_two_inputs", "clip", [f(2), f()], "expected 3 inputs, got 2")
E("clip_unbroadcastable", "clip", [f(2, 3), f(2), f()], "cannot broadcast")
write("select", cases)
