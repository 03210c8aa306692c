"""Cases for src/ops/grid_sample.cpp, computed with onnx's reference evaluator (ONNX GridSample,
opset 20). Grid points reach a little past [-1, 1] so that every padding mode matters."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write
from onnx_oracle import run_node

r = rng(16)
cases = []


def add(name, x, grid, mode="linear", padding_mode="zeros", align_corners=False, rtol=None, atol=None):
    (y,) = run_node("GridSample", [x, grid], opset=20, mode=mode, padding_mode=padding_mode,
                    align_corners=int(align_corners))
    attrs = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    cases.append(case(name, "grid_sample", [tensor(x), tensor(grid)], [tensor(y)], attrs, rtol=rtol, atol=atol))


def grid(*lens, reach=1.3, dtype=np.float32):
    return r.uniform(-reach, reach, lens).astype(dtype)


x4 = r.standard_normal((2, 3, 4, 5)).astype(np.float32)
g4 = grid(2, 3, 4, 2)
for mode in ["linear", "nearest", "cubic"]:
    for pad in ["zeros", "border", "reflection"]:
        for ac in [False, True]:
            add(f"2d_{mode}_{pad}{'_align_corners' if ac else ''}", x4, g4, mode, pad, ac)

# Far outside the borders: reflection folds several times.
far = grid(1, 2, 5, 2, reach=4.0)
x_far = r.standard_normal((1, 2, 3, 4)).astype(np.float32)
for mode in ["linear", "nearest", "cubic"]:
    add(f"far_reflection_{mode}", x_far, far, mode, "reflection")
    add(f"far_reflection_{mode}_align_corners", x_far, far, mode, "reflection", True)
    add(f"far_border_{mode}", x_far, far, mode, "border")

x5 = r.standard_normal((1, 2, 3, 4, 3)).astype(np.float32)
g5 = grid(1, 2, 3, 2, 3)
for mode in ["linear", "nearest"]:
    for pad in ["zeros", "border", "reflection"]:
        add(f"3d_{mode}_{pad}", x5, g5, mode, pad)
add("3d_linear_align_corners", x5, g5, "linear", "zeros", True)
add("3d_cubic_border", x5, g5, "cubic", "border")

x3 = r.standard_normal((2, 2, 6)).astype(np.float32)
add("1d_linear", x3, grid(2, 4, 1))
add("1d_cubic_reflection", x3, grid(2, 4, 1), "cubic", "reflection")

# Exact grid points: pixel centres, the corners and ties for nearest (rounded to even).
exact = np.array([[[[-1, -1], [1, 1], [0, 0], [-0.5, 0.5]], [[0.25, -0.75], [1, -1], [-1, 1], [0.5, 0.0]]]],
                 np.float32)
xe = np.arange(20, dtype=np.float32).reshape(1, 1, 4, 5)
for mode in ["linear", "nearest", "cubic"]:
    add(f"exact_points_{mode}", xe, exact, mode)
    add(f"exact_points_{mode}_align_corners", xe, exact, mode, align_corners=True)

# A size-1 dim leaves reflection with align_corners no room to mirror: every point reads its one
# row (as PyTorch). The reference divides by zero there, so the expected values come from the
# input with that row repeated, which reads the same.
x_row = r.standard_normal((1, 2, 1, 3)).astype(np.float32)
g_row = grid(1, 2, 2, 2)
(y_row,) = run_node("GridSample", [np.repeat(x_row, 2, axis=2), g_row], opset=20, padding_mode="reflection",
                    align_corners=1)
cases.append(case("size1_reflection_align_corners", "grid_sample", [tensor(x_row), tensor(g_row)], [tensor(y_row)],
                  {"padding_mode": "reflection", "align_corners": True}))

# The reference denormalises coordinates in float32, so float64 agrees to about 1e-6 only.
add("f64_cubic", r.standard_normal((1, 2, 3, 3)), grid(1, 2, 3, 2, dtype=np.float64), "cubic", "border", rtol=1e-5,
    atol=1e-6)
add("f16_linear", r.standard_normal((1, 2, 3, 4)).astype(np.float16), grid(1, 3, 2, 2, dtype=np.float16),
    rtol=1e-2, atol=1e-2)
add("int32_nearest", r.integers(-50, 50, (1, 2, 3, 4)).astype(np.int32), grid(1, 2, 3, 2), "nearest", "border")
cases.append(case("empty_grid", "grid_sample", [tensor(x4), tensor(np.zeros((2, 0, 4, 2), np.float32))],
                  [tensor(np.zeros((2, 3, 0, 4), np.float32))]))

f = "float32"
cases.append(error_case("bad_mode", "grid_sample", [shape_only(f, [1, 1, 2, 2]), shape_only(f, [1, 2, 2, 2])],
                        "mode='bilinear'; expected one of linear, nearest, cubic", {"mode": "bilinear"}))
cases.append(error_case("bad_padding_mode", "grid_sample",
                        [shape_only(f, [1, 1, 2, 2]), shape_only(f, [1, 2, 2, 2])],
                        "padding_mode='edge'", {"padding_mode": "edge"}))
cases.append(error_case("grid_rank", "grid_sample", [shape_only(f, [1, 1, 2, 2]), shape_only(f, [1, 2, 2])],
                        "input 1 has 3 dims"))
cases.append(error_case("grid_last_dim", "grid_sample", [shape_only(f, [1, 1, 2, 2]), shape_only(f, [1, 2, 2, 3])],
                        "grid's last dim is 3; expected 2"))
cases.append(error_case("batch_mismatch", "grid_sample", [shape_only(f, [2, 1, 2, 2]), shape_only(f, [1, 2, 2, 2])],
                        "grid batch 1 differs from input batch 2"))
cases.append(error_case("int_grid", "grid_sample", [shape_only(f, [1, 1, 2, 2]), shape_only("int32", [1, 2, 2, 2])],
                        "expected a float type"))
cases.append(error_case("rank2_input", "grid_sample", [shape_only(f, [1, 1]), shape_only(f, [1, 2])],
                        "input 0 has 2 dims"))
write("grid_sample", cases)
