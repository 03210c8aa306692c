"""Cases for src/ops/gemm.cpp (dot, gemm), computed with numpy: float products in float64
rounded once to the element type, integer products in int64 wrapped to the element type."""
import ml_dtypes
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(7)
cases = []


def rand(shape, dtype=np.float32):
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return r.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(dtype)
    return r.standard_normal(shape).astype(dtype)


def wide(x):
    return x.astype(np.float64) if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16 else x.astype(np.int64)


def add_dot(name, a, b, **tol):
    y = np.matmul(wide(a), wide(b)).astype(a.dtype)
    cases.append(case(name, "dot", [tensor(a), tensor(b)], [tensor(y)], **tol))


add_dot("dot_2d", rand((3, 4)), rand((4, 5)))
add_dot("dot_batched", rand((2, 3, 4)), rand((2, 4, 2)))
add_dot("dot_broadcast_batch", rand((2, 1, 3, 4)), rand((3, 4, 5)))
add_dot("dot_broadcast_batch_left", rand((1, 3, 4)), rand((2, 4, 2)))
add_dot("dot_batch_2d_right", rand((2, 2, 3, 4)), rand((4, 2)))
add_dot("dot_vec_mat", rand((4,)), rand((2, 4, 3)))
add_dot("dot_mat_vec", rand((2, 3, 4)), rand((4,)))
add_dot("dot_vec_vec", rand((5,)), rand((5,)))
add_dot("dot_empty_inner", rand((2, 0)), rand((0, 3)))
add_dot("dot_f16", rand((3, 8), np.float16), rand((8, 2), np.float16))
add_dot("dot_bf16", rand((2, 6), ml_dtypes.bfloat16), rand((6, 3), ml_dtypes.bfloat16))
add_dot("dot_f64", rand((2, 3, 5), np.float64), rand((5, 4), np.float64))
add_dot("dot_int32", rand((3, 4), np.int32), rand((2, 4, 3), np.int32))
add_dot("dot_int8_wraps", rand((2, 8), np.int8), rand((8, 3), np.int8))
add_dot("dot_uint8", rand((3, 4), np.uint8), rand((4, 2), np.uint8))
# Products near 2^60: exact only with 64-bit integer accumulation.
big = r.integers(-2**30, 2**30, (2, 3)).astype(np.int64), r.integers(-2**30, 2**30, (3, 2)).astype(np.int64)
add_dot("dot_int64_exact", *big)

f32 = "float32"
cases += [
    error_case("dot_inner_mismatch", "dot", [shape_only(f32, [2, 3]), shape_only(f32, [4, 5])],
               "inner dims differ: input 0 {2, 3} has 3 columns but input 1 {4, 5} has 4 rows"),
    error_case("dot_vec_mismatch", "dot", [shape_only(f32, [3]), shape_only(f32, [4])], "inner dims differ"),
    error_case("dot_batch_mismatch", "dot", [shape_only(f32, [2, 3, 4]), shape_only(f32, [3, 4, 5])],
               "cannot broadcast"),
    error_case("dot_scalar", "dot", [shape_only(f32, []), shape_only(f32, [3])], "input 0 has 0 dims"),
    error_case("dot_type_mismatch", "dot", [shape_only(f32, [2, 3]), shape_only("float16", [3, 2])],
               "inputs must have the same type"),
    error_case("dot_bool", "dot", [shape_only("bool", [2, 2]), shape_only("bool", [2, 2])], "expected a numeric"),
    error_case("dot_one_input", "dot", [shape_only(f32, [2, 2])], "expected 2 inputs, got 1"),
]


def add_gemm(name, a, b, c=None, alpha=1.0, beta=1.0, trans_a=False, trans_b=False, **tol):
    at, bt = (a.T if trans_a else a), (b.T if trans_b else b)
    y = alpha * np.matmul(wide(at), wide(bt)).astype(np.float64)
    if c is not None and beta != 0:
        y = y + beta * wide(c)
    if a.dtype.kind in "iu" and alpha == int(alpha) and beta == int(beta):   # exact integer path
        y = int(alpha) * np.matmul(wide(at), wide(bt)) + (int(beta) * wide(c) if c is not None else 0)
    attrs = {"alpha": alpha, "beta": beta, "trans_a": trans_a, "trans_b": trans_b}
    inputs = [tensor(a), tensor(b)] + ([tensor(c)] if c is not None else [])
    cases.append(case(name, "gemm", inputs, [tensor(np.asarray(y).astype(a.dtype))], attrs, **tol))


# alpha and beta are exact in float32, as kiln's attributes are.
add_gemm("gemm_basic", rand((3, 4)), rand((4, 5)), rand((3, 5)), alpha=0.5, beta=2.0)
add_gemm("gemm_default", rand((3, 4)), rand((4, 5)), rand((3, 5)))
add_gemm("gemm_trans_a", rand((4, 3)), rand((4, 5)), rand((3, 5)), trans_a=True)
add_gemm("gemm_trans_b", rand((3, 4)), rand((5, 4)), rand((3, 5)), alpha=-1.25, trans_b=True)
add_gemm("gemm_trans_both", rand((4, 3)), rand((5, 4)), rand((3, 5)), beta=0.25, trans_a=True, trans_b=True)
add_gemm("gemm_no_c", rand((2, 6)), rand((6, 3)), alpha=2.0)
add_gemm("gemm_c_row", rand((3, 4)), rand((4, 5)), rand((5,)), beta=-1.0)
add_gemm("gemm_c_col", rand((3, 4)), rand((4, 5)), rand((3, 1)))
add_gemm("gemm_c_scalar", rand((3, 4)), rand((4, 5)), np.array(1.5, np.float32))
add_gemm("gemm_c_1x1", rand((3, 4)), rand((4, 5)), rand((1, 1)), beta=0.5)
add_gemm("gemm_f16", rand((3, 8), np.float16), rand((8, 4), np.float16), rand((4,), np.float16), alpha=0.5)
add_gemm("gemm_f64", rand((4, 3), np.float64), rand((4, 2), np.float64), rand((3, 2), np.float64), trans_a=True)
add_gemm("gemm_int32", rand((3, 4), np.int32), rand((4, 2), np.int32), rand((3, 2), np.int32), alpha=2.0, beta=-1.0)
add_gemm("gemm_int32_fractional_alpha", rand((3, 4), np.int32), rand((4, 2), np.int32), rand((2,), np.int32),
         alpha=0.5, beta=1.5)
# beta = 0 ignores C, NaN included (ONNX's reference skips the term).
nan_c = np.full((2, 3), np.nan, np.float32)
add_gemm("gemm_beta_zero_ignores_c", rand((2, 4)), rand((4, 3)), nan_c, beta=0.0)

cases += [
    error_case("gemm_rank3", "gemm", [shape_only(f32, [2, 3, 4]), shape_only(f32, [4, 5])],
               "input 0 has 3 dims"),
    error_case("gemm_inner_mismatch", "gemm", [shape_only(f32, [3, 4]), shape_only(f32, [5, 4])],
               "inner dims differ: input 0 {3, 4} has 4 columns but input 1 {5, 4} has 5 rows"),
    error_case("gemm_inner_mismatch_trans", "gemm", [shape_only(f32, [3, 4]), shape_only(f32, [4, 5])],
               "input 0 {3, 4} transposed has 3 columns but input 1 {4, 5} has 4 rows", {"trans_a": True}),
    error_case("gemm_c_not_broadcast", "gemm", [shape_only(f32, [3, 4]), shape_only(f32, [4, 5]),
                                               shape_only(f32, [2, 5])],
               "input 2 {2, 5} does not broadcast to the result {3, 5}"),
    error_case("gemm_c_rank3", "gemm", [shape_only(f32, [3, 4]), shape_only(f32, [4, 5]),
                                       shape_only(f32, [1, 3, 5])], "does not broadcast"),
    error_case("gemm_four_inputs", "gemm", [shape_only(f32, [2, 2])] * 4, "expected 2 to 3 inputs, got 4"),
    error_case("gemm_c_type", "gemm", [shape_only(f32, [2, 2]), shape_only(f32, [2, 2]),
                                      shape_only("float64", [2, 2])], "inputs must have the same type"),
]
write("gemm", cases)
