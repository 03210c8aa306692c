"""Cases for src/ops/dft.cpp, computed with numpy's FFT (fft, ifft, irfft) as ONNX DFT's
reference evaluator does."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(17)
cases = []


def as_complex(x):
    return x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0].astype(np.complex128)


def expected(x, axis, inverse, onesided, length):
    a = axis % x.ndim
    c = as_complex(x.astype(np.float64))
    n = length or (2 * (x.shape[a] - 1) if inverse and onesided else x.shape[a])
    if inverse and onesided:
        return np.fft.irfft(c, n=n, axis=a)[..., np.newaxis]
    y = np.fft.ifft(c, n=n, axis=a) if inverse else np.fft.fft(c, n=n, axis=a)
    if onesided:
        y = np.take(y, np.arange(n // 2 + 1), axis=a)
    return np.stack([y.real, y.imag], axis=-1)


def add(name, x, axis=-2, inverse=False, onesided=False, length=0, rtol=None, atol=1e-5):
    y = expected(x, axis, inverse, onesided, length).astype(x.dtype)
    attrs = {"axis": axis, "inverse": inverse, "onesided": onesided, "length": length}
    cases.append(case(name, "dft", [tensor(x)], [tensor(y)], attrs, rtol=rtol, atol=atol))


real = r.standard_normal((2, 8, 1)).astype(np.float32)
cplx = r.standard_normal((2, 7, 2)).astype(np.float32)
add("real_forward", real)
add("complex_forward", cplx)
add("real_onesided", real, onesided=True)
add("complex_onesided_odd", cplx, onesided=True)
add("inverse", cplx, inverse=True)
add("inverse_real_input", real, inverse=True)
add("irfft_default_length", r.standard_normal((2, 5, 2)).astype(np.float32), inverse=True, onesided=True)
add("irfft_odd_length", r.standard_normal((2, 5, 2)).astype(np.float32), inverse=True, onesided=True, length=9)
add("irfft_short_input", r.standard_normal((1, 3, 2)).astype(np.float32), inverse=True, onesided=True, length=10)
add("pad_length", real, length=11)
add("cut_length", cplx, length=4)
add("inverse_pad_length", cplx, inverse=True, length=9)
add("onesided_cut_length", real, onesided=True, length=6)
x4 = r.standard_normal((1, 4, 6, 2)).astype(np.float32)
add("axis1_of_4d", x4, axis=1)
add("axis2_of_4d", x4, axis=2)
add("negative_axis", x4, axis=-3, inverse=True)
add("1d_signal", r.standard_normal((6, 2)).astype(np.float32), axis=0)
add("length1", r.standard_normal((2, 1, 2)).astype(np.float32))
add("f64", r.standard_normal((3, 9, 2)), onesided=True)
add("f16", r.standard_normal((2, 6, 1)).astype(np.float16), rtol=1e-2, atol=1e-2)
# A long signal: twiddles from (j k mod n) stay accurate.
add("long_signal", r.standard_normal((1, 64, 1)).astype(np.float32), atol=1e-4)

f = "float32"
cases.append(error_case("last_dim_3", "dft", [shape_only(f, [2, 4, 3])], "last dim is 3; expected 1 (real) or 2"))
cases.append(error_case("axis_is_complex_dim", "dft", [shape_only(f, [2, 4, 2])],
                        "axis=-1 is the real/imaginary dim", {"axis": -1}))
cases.append(error_case("axis_out_of_range", "dft", [shape_only(f, [2, 4, 2])], "axis=3 is out of range",
                        {"axis": 3}))
cases.append(error_case("negative_length", "dft", [shape_only(f, [2, 4, 2])], "length=-2", {"length": -2}))
cases.append(error_case("irfft_of_one_bin", "dft", [shape_only(f, [2, 1, 2])], "gives a transform of size 0",
                        {"inverse": True, "onesided": True}))
cases.append(error_case("int_input", "dft", [shape_only("int32", [2, 4, 2])], "expected a float type"))
cases.append(error_case("rank1", "dft", [shape_only(f, [2])], "input 0 has 1 dims"))
write("dft", cases)
