"""Cases for src/ops/bitcast.cpp (ONNX BitCast): numpy's view of the same bytes as another type of
the same width; bool targets read a nonzero byte as true, the packed types (int4, uint4, int2, uint2, fp4e2m1)
reinterpret their bits."""
import ml_dtypes
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, type_name, write

r = rng(19)
cases = []


def add(name, x, to, x_type=None, y=None, y_type=None):
    y = x.view(to) if y is None else y
    cases.append(case(name, "bitcast", [tensor(x, x_type)], [tensor(y, y_type)],
                      {"target_type": y_type or type_name(np.dtype(to))}, rtol=0, atol=0))


f = (r.standard_normal((3, 4)) * 100).astype(np.float32)
f[0, 0], f[0, 1] = -0.0, np.inf
add("float32_to_int32", f, np.int32)
add("float32_to_uint32", np.abs(f), np.uint32)
i = np.array([0, 1, -1, 0x3F800000, 0x7F800000, -8388608, 0x7FC00000, 12345678], np.int32).reshape(2, 4)
add("int32_to_float32", i, np.float32)   # includes subnormal, Inf, -Inf bits, a NaN
add("float64_to_int64", r.standard_normal((2, 3)) * 1e10, np.int64)
add("int64_to_float64", np.array([0, 4607182418800017408, -4616189618054758400, 1, 2**62], np.int64), np.float64)
add("uint64_to_float64", np.array([0, 4607182418800017408, 2**62 + 7], np.uint64), np.float64)
h = r.integers(-30000, 30000, (2, 5)).astype(np.int16)
add("int16_to_float16", h, np.float16)
add("float16_to_uint16", (r.standard_normal((4,)) * 9).astype(np.float16), np.uint16)
add("uint16_to_bfloat16", r.integers(0, 0x7F00, (3, 2)).astype(np.uint16), ml_dtypes.bfloat16)
add("uint16_to_int16", r.integers(0, 65536, (2, 3)).astype(np.uint16), np.int16)
add("int8_to_uint8", r.integers(-128, 128, (2, 4)).astype(np.int8), np.uint8)
add("uint8_to_fp8e4m3fn", np.array([0, 0x38, 0xB8, 0x7E, 0x7F, 0x01, 0x80], np.uint8), ml_dtypes.float8_e4m3fn)
add("fp8e5m2_to_int8", np.array([0, 1.5, -2, 57344, -0.25], ml_dtypes.float8_e5m2), np.int8)
add("bool_to_uint8", r.integers(0, 2, (2, 3)).astype(bool), np.uint8)
u = np.array([0, 1, 2, 255, 0], np.uint8)
add("uint8_to_bool", u, np.bool_, y=u != 0)
n4 = np.arange(-8, 8, dtype=np.int8).reshape(4, 4)
add("int4_to_uint4", n4, None, "int4", (n4 & 0xF).astype(np.uint8), "uint4")
u4 = np.arange(16, dtype=np.uint8).reshape(2, 8)
add("uint4_to_int4", u4, None, "uint4", np.where(u4 > 7, u4.astype(np.int16) - 16, u4).astype(np.int8), "int4")
# 2-bit types reinterpret their two bits (uint2 3 is int2 -1), and fp4e2m1 its nibble (0b0111 is 6).
n2 = np.arange(-2, 2, dtype=np.int8).reshape(2, 2)
add("int2_to_uint2", n2, None, "int2", (n2 & 0x3).astype(np.uint8), "uint2")
u2 = np.arange(4, dtype=np.uint8).reshape(1, 4)
add("uint2_to_int2", u2, None, "uint2", np.where(u2 > 1, u2.astype(np.int16) - 4, u2).astype(np.int8), "int2")
fp4 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], np.float32)
add("fp4e2m1_to_uint4", fp4, None, "float4e2m1", np.arange(16, dtype=np.uint8), "uint4")
add("int4_to_fp4e2m1", n4.reshape(-1), None, "int4", np.concatenate([fp4[8:], fp4[:8]]), "float4e2m1")
add("scalar", np.array(1.0, np.float32), np.int32)
cases += [
    error_case("width_differs", "bitcast", [shape_only("float32", [2])], "(32 bits) but target_type=double_type has 64",
               {"target_type": "float64"}),
    error_case("int4_to_int8", "bitcast", [shape_only("int4", [2])], "expected equal widths", {"target_type": "int8"}),
    error_case("tuple_target", "bitcast", [shape_only("float32", [2])], "is not an element type",
               {"target_type": "tuple"}),
    error_case("two_inputs", "bitcast", [shape_only("float32", [2])] * 2, "expected 1 input, got 2"),
]
write("bitcast", cases)
