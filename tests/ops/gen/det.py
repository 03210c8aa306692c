"""Cases for src/ops/det.cpp, computed with numpy.linalg.det in float64."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(22)
cases = []
f = "float32"


def add_det(name, x, rtol=None, atol=None):
    y = np.linalg.det(x.astype(np.float64)).astype(x.dtype)
    cases.append(case(name, "det", [tensor(x)], [tensor(y)], rtol=rtol, atol=atol))


add_det("2d", r.standard_normal((3, 3)).astype(np.float32))
add_det("batched", r.standard_normal((2, 3, 4, 4)).astype(np.float32), atol=1e-4)
add_det("1x1", r.standard_normal((2, 1, 1)).astype(np.float32))
add_det("singular", np.array([[1, 2, 3], [2, 4, 6], [0, 1, 5]], np.float32), atol=1e-5)
add_det("needs_pivot", np.array([[0, 1, 2], [1, 0, 3], [4, -3, 8]], np.float64))
add_det("f64_5x5", r.standard_normal((5, 5)))
add_det("f16", r.standard_normal((2, 2, 2)).astype(np.float16), rtol=1e-2, atol=1e-2)
cases.append(case("empty_matrix", "det", [tensor(np.zeros((2, 0, 0), np.float32))],
                  [tensor(np.ones(2, np.float32))]))
cases.append(error_case("not_square", "det", [shape_only(f, [2, 3])], "expected square matrices"))
cases.append(error_case("vector", "det", [shape_only(f, [3])], "input 0 has 1 dims"))
cases.append(error_case("int_input", "det", [shape_only("int32", [2, 2])], "expected a float type"))
write("det", cases)
