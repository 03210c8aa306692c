"""Cases for src/ops/silu.cpp, computed with numpy (float64 math rounded to the element type)."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(1)
cases = []


def silu(v, beta=1.0):
    v = v.astype(np.float64)
    return v / (1 + np.exp(-beta * v))


x = r.standard_normal((3, 4)).astype(np.float32) * 3
cases.append(case("silu", "silu", [tensor(x)], [tensor(silu(x).astype(np.float32))]))
cases.append(case("silu_beta", "silu", [tensor(x)], [tensor(silu(x, 1.702).astype(np.float32))], {"beta": 1.702}))
xd = r.standard_normal((2, 3, 2)) * 4
cases.append(case("silu_float64", "silu", [tensor(xd)], [tensor(silu(xd))]))
big = np.array([-100.0, -20.0, 0.0, 20.0, 100.0], np.float32)
cases.append(case("silu_saturates", "silu", [tensor(big)], [tensor(silu(big).astype(np.float32))]))
cases.append(error_case("silu_int", "silu", [shape_only("int32", [2])], "expected a float"))
write("silu", cases)
