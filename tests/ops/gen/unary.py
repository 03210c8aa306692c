"""Cases for src/ops/unary.cpp, computed with numpy (float64 math rounded to the element type)."""
import numpy as np
from scipy_free_erf import erf
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(1)
cases = []


def add(name, op, fn, x, attrs=None, **tol):
    y = fn(x.astype(np.float64)).astype(x.dtype) if x.dtype.kind == "f" else fn(x).astype(x.dtype)
    cases.append(case(name, op, [tensor(x)], [tensor(y)], attrs, **tol))


x = r.standard_normal((3, 4)).astype(np.float32) * 3
pos = r.uniform(0.1, 5, (2, 5)).astype(np.float32)
unit = r.uniform(-0.99, 0.99, (4, 3)).astype(np.float32)
simple = {
    "ceil": np.ceil, "floor": np.floor, "round": np.round, "exp": np.exp, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "softsign": lambda v: v / (1 + np.abs(v)),
    "softplus": lambda v: np.log1p(np.exp(v)), "mish": lambda v: v * np.tanh(np.log1p(np.exp(v))),
    "erf": erf, "abs": np.abs, "neg": np.negative, "sign": np.sign, "relu": lambda v: np.maximum(v, 0),
    "hard_swish": lambda v: v * np.clip(v / 6 + 0.5, 0, 1),
}
for op, fn in simple.items():
    add(op, op, fn, x)
for op, fn in {"sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v), "recip": lambda v: 1 / v, "log": np.log,
               "acosh": lambda v: np.arccosh(v + 1)}.items():
    src = pos + 1 if op == "acosh" else pos
    add(op, op, (lambda f: (lambda v: f(v)))(fn) if op != "acosh" else np.arccosh, src)
for op, fn in {"asin": np.arcsin, "acos": np.arccos, "atanh": np.arctanh}.items():
    add(op, op, fn, unit)

# Ties round to even; half-precision and double inputs; a 4-d input.
add("round_ties", "round", np.round, np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.49], np.float32))
add("exp_f16", "exp", np.exp, (r.standard_normal((2, 3, 4)) * 2).astype(np.float16))
add("tanh_f64", "tanh", np.tanh, r.standard_normal((5,)) * 2)
add("sigmoid_4d", "sigmoid", lambda v: 1 / (1 + np.exp(-v)), r.standard_normal((2, 3, 2, 2)).astype(np.float32))
add("abs_int32", "abs", np.abs, r.integers(-100, 100, (3, 3)).astype(np.int32))
add("neg_int64", "neg", np.negative, r.integers(-2**40, 2**40, (4,)).astype(np.int64))
add("relu_int8", "relu", lambda v: np.maximum(v, 0), r.integers(-100, 100, (2, 4)).astype(np.int8))
add("sign_int16", "sign", np.sign, r.integers(-5, 5, (6,)).astype(np.int16))

a = 0.3
add("leaky_relu", "leaky_relu", lambda v: np.where(v >= 0, v, a * v), x, {"alpha": a})
add("elu", "elu", lambda v: np.where(v >= 0, v, 0.7 * np.expm1(v)), x, {"alpha": 0.7})
add("celu", "celu", lambda v: np.maximum(0, v) + np.minimum(0, 1.5 * np.expm1(v / 1.5)), x, {"alpha": 1.5})
sa, sg = 1.67326319217681884765625, 1.05070102214813232421875
add("selu", "selu", lambda v: sg * np.where(v > 0, v, sa * np.expm1(v)), x)
add("thresholded_relu", "thresholded_relu", lambda v: np.where(v > 0.5, v, 0), x, {"alpha": 0.5})
add("hard_sigmoid", "hard_sigmoid", lambda v: np.clip(0.25 * v + 0.4, 0, 1), x, {"alpha": 0.25, "beta": 0.4})
add("gelu", "gelu", lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))), x)
add("gelu_tanh", "gelu", lambda v: 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v**3))), x,
    {"approximate": "tanh"})

special = np.array([np.nan, np.inf, -np.inf, 0.0, -1.5, 2.0], np.float32)
cases.append(case("isnan", "isnan", [tensor(special)], [tensor(np.isnan(special))]))
cases.append(case("isinf", "isinf", [tensor(special)], [tensor(np.isinf(special))]))
cases.append(case("isinf_negative_only", "isinf", [tensor(special)], [tensor(np.isneginf(special))],
                  {"detect_positive": False}))
b = r.integers(0, 2, (2, 3)).astype(bool)
cases.append(case("not", "logical_not", [tensor(b)], [tensor(~b)]))
i = r.integers(-1000, 1000, (3, 2)).astype(np.int32)
cases.append(case("bitwise_not", "bitwise_not", [tensor(i)], [tensor(~i)]))
u = r.integers(0, 255, (5,)).astype(np.uint8)
cases.append(case("bitwise_not_uint8", "bitwise_not", [tensor(u)], [tensor(~u)]))

cases.append(error_case("sin_int", "sin", [shape_only("int32", [2])], "expected a float type"))
cases.append(error_case("neg_uint", "neg", [shape_only("uint8", [2])], "expected a signed"))
cases.append(error_case("relu_two_inputs", "relu", [shape_only("float32", [2])] * 2, "expected 1 input, got 2"))
cases.append(error_case("gelu_bad_mode", "gelu", [shape_only("float32", [2])], "approximate='fast'",
                        {"approximate": "fast"}))
cases.append(error_case("leaky_relu_bad_attr", "leaky_relu", [shape_only("float32", [2])], "unknown attribute 'beta'",
                        {"beta": 1.0}))
write("unary", cases)
