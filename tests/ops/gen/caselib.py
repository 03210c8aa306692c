"""Writes op test cases (tests/ops/cases/<family>.json) from values computed independently of
kiln: numpy, and onnx.reference for ops whose numpy form is long. Run with the project's venv:
    .venv/bin/python tests/ops/gen/<family>.py
Format of a case: {name, op, attrs, inputs: [tensor], outputs: [tensor], rtol?, atol?} or, for
invalid input, {name, op, attrs, inputs: [tensor without data], error: "substring"}; a case may
give "ir" (text IR) instead of op/attrs, with named inputs.
"""
import json
import math
import os

import numpy as np

try:
    import ml_dtypes
except ImportError:  # only needed for bf16/fp8 cases
    ml_dtypes = None

CASES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cases")


def type_name(dt):
    dt = np.dtype(dt)
    if ml_dtypes is not None:
        if dt == ml_dtypes.bfloat16:
            return "bfloat16"
        if dt == ml_dtypes.float8_e4m3fn:
            return "float8e4m3fn"
        if dt == ml_dtypes.float8_e5m2:
            return "float8e5m2"
    if dt == np.bool_:
        return "bool"
    return {"f": "float", "i": "int", "u": "uint"}[dt.kind] + str(dt.itemsize * 8)


def _num(x):
    if isinstance(x, (bool, np.bool_)):
        return int(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def tensor(arr, type=None):
    """A tensor with data. `type` overrides the name (e.g. "int4" for values held in int8)."""
    arr = np.asarray(arr)
    flat = arr.reshape(-1)
    if arr.dtype.kind in "OUS":   # strings (numpy object, str or bytes arrays)
        return {"type": type or "string", "lens": list(arr.shape), "data": [str(v) for v in flat]}
    if arr.dtype.kind == "V" or type_name(arr.dtype) in ("bfloat16", "float8e4m3fn", "float8e5m2"):
        flat = flat.astype(np.float64)
    return {"type": type or type_name(arr.dtype), "lens": list(arr.shape), "data": [_num(v) for v in flat]}


def shape_only(type, lens):
    return {"type": type, "lens": list(lens)}


def case(name, op, inputs, outputs, attrs=None, rtol=None, atol=None):
    c = {"name": name, "op": op, "attrs": attrs or {}, "inputs": inputs, "outputs": outputs}
    if rtol is not None:
        c["rtol"] = rtol
    if atol is not None:
        c["atol"] = atol
    return c


def error_case(name, op, inputs, error, attrs=None):
    return {"name": name, "op": op, "attrs": attrs or {}, "inputs": inputs, "error": error}


def write(family, cases):
    names = [c["name"] for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"duplicate case names: {sorted(dup)}"
    path = os.path.join(CASES_DIR, family + ".json")
    with open(path, "w") as f:
        json.dump({"family": family, "cases": cases}, f, separators=(",", ":"))
        f.write("\n")
    print(f"{path}: {len(cases)} cases")


def rng(seed=0):
    return np.random.default_rng(seed)
