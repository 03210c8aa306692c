"""The ONNX backend node suite (onnx.backend.test.BackendTest) through kiln.onnx_backend on ref.

It uses the C++ conformance runner's lists (tests/conformance): the cases of onnx_skips.txt are
excluded, those of onnx_expected_failures.txt are expected to fail (an unexpected pass fails the
suite, so the list may only shrink), and outputs are compared as that runner compares them
(rtol 1e-3, atol 1e-5; rtol 4e-3 for float16 and 2e-2 for bfloat16 outputs; NaN matches NaN;
strings exactly).
So both runners pass exactly the same cases.
"""
import os
import re

import numpy as np
import onnx.backend.test

import kiln.onnx_backend as backend

CONFORMANCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance")
FLOAT_TYPES = {"float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
               "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn"}


def read_list(name):
    """Case names (or patterns) of a list file, without comments."""
    with open(os.path.join(CONFORMANCE, name)) as f:
        lines = (line.split("#", 1)[0].strip() for line in f)
        return [line.split()[0] for line in lines if line]


def assert_close(got, want, index):
    if got.dtype != want.dtype:
        raise AssertionError(f"output {index}: type {got.dtype}, expected {want.dtype}")
    if got.shape != want.shape:
        raise AssertionError(f"output {index}: lens {got.shape}, expected {want.shape}")
    if want.dtype == object:   # strings: equal, element by element
        bad = [i for i, (g, w) in enumerate(zip(got.ravel(), want.ravel())) if g != w]
        if bad:
            raise AssertionError(f"output {index} element {bad[0]}: {got.ravel()[bad[0]]!r}, expected {want.ravel()[bad[0]]!r}")
        return
    if got.dtype.name not in FLOAT_TYPES:
        a, b = got.astype(np.int64).ravel(), want.astype(np.int64).ravel()
        bad = np.nonzero(a != b)[0]
        if bad.size:
            raise AssertionError(f"output {index} element {bad[0]}: {a[bad[0]]}, expected {b[bad[0]]}")
        return
    rtol = {"bfloat16": 2e-2, "float16": 4e-3}.get(got.dtype.name, 1e-3)
    a, b = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    with np.errstate(invalid="ignore"):
        ok = (a == b) | (np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= 1e-5 + rtol * np.abs(b))
    bad = np.nonzero(~ok)[0]
    if bad.size:
        raise AssertionError(f"output {index} element {bad[0]}: {a[bad[0]]}, expected {b[bad[0]]}")


class RefBackend(backend.KilnBackend):
    target = "ref"


class KilnBackendTest(onnx.backend.test.BackendTest):
    @classmethod
    def assert_similar_outputs(cls, ref_outputs, outputs, rtol, atol, model_dir=None):
        if len(outputs) != len(ref_outputs):
            raise AssertionError(f"{len(outputs)} outputs, expected {len(ref_outputs)}")
        for i, (got, want) in enumerate(zip(outputs, ref_outputs)):
            assert_value(got, want, i)


def assert_value(got, want, index):
    """A tensor, a sequence (a list of tensors) or an optional (None or its value)."""
    if isinstance(want, np.generic):   # the generators give scalar outputs as numpy scalars
        want = np.asarray(want)
    if want is None or isinstance(want, list):
        if type(got) is not type(want):
            raise AssertionError(f"output {index}: {type(got).__name__}, expected {type(want).__name__}")
        if want is not None:
            if len(got) != len(want):
                raise AssertionError(f"output {index}: {len(got)} values, expected {len(want)}")
            for g, w in zip(got, want):
                assert_value(g, w, index)
        return
    if not isinstance(want, np.ndarray) or not isinstance(got, np.ndarray):
        raise AssertionError(f"output {index}: {type(got).__name__}, expected {type(want).__name__}")
    assert_close(got, want, index)


suite = KilnBackendTest(RefBackend, __name__)
for pattern in read_list("onnx_skips.txt"):
    suite.exclude(f"^(?:{pattern})_(?:cpu|cuda)$")
for name in read_list("onnx_expected_failures.txt"):
    suite.xfail(f"^{re.escape(name)}_(?:cpu|cuda)$")
# The node cases only: the other groups download models or are not part of the C++ suite.
globals().update({k: v for k, v in suite.test_cases.items() if k == "OnnxBackendNodeModelTest"})
