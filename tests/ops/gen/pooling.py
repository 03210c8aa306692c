"""Cases for src/ops/pooling.cpp (pooling, lrn), computed in float64 with numpy and rounded once
to the element type. Pooling uses window_ref.pool, checked against onnx.reference where that
evaluator is right: not for LpPool with padding (it scales an average, so padded windows come
out wrong), not for ceil_mode windows that overrun the padding by more than one (it shifts
them), not for GlobalMaxPool without 2 spatial dims; it has no GlobalLpPool. LRN is written
here: onnx.reference's LRN loops over the batch instead of the channels."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write
from window_ref import check_onnx, pool, split_pads

r = rng(5)
cases = []
ONNX_OP = {"average": "AveragePool", "max": "MaxPool", "lpnorm": "LpPool"}


def rand(shape, dtype=np.float32):
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return r.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    return r.standard_normal(shape).astype(dtype)


def add_pool(name, x, mode, lengths, padding=None, stride=None, dilations=None, ceil_mode=False,
             count_include_pad=False, lp_order=2, onnx=True, **tol):
    y = pool(x, mode, lengths, padding, stride, dilations, ceil_mode, count_include_pad, lp_order)
    if onnx:
        dims = x.ndim - 2
        pb, pe = split_pads(padding, dims)
        attrs = {"kernel_shape": lengths, "pads": list(pb) + list(pe), "strides": stride or [1] * dims,
                 "ceil_mode": int(ceil_mode), "dilations": dilations or [1] * dims}
        if mode == "average":
            attrs["count_include_pad"] = int(count_include_pad)
        if mode == "lpnorm":
            attrs["p"] = lp_order
        check_onnx(y, ONNX_OP[mode], [x], **attrs)
    attrs = {"mode": mode, "lengths": lengths, "padding": padding or [], "stride": stride or [],
             "dilations": dilations or [], "ceil_mode": ceil_mode, "count_include_pad": count_include_pad,
             "lp_order": lp_order}
    cases.append(case(name, "pooling", [tensor(x)], [tensor(y.astype(x.dtype))], attrs, **tol))


def add_global(name, x, mode, lp_order=2, onnx=True):
    axes = tuple(range(2, x.ndim))
    v = x.astype(np.float64)
    y = {"average": lambda: v.mean(axis=axes, keepdims=True), "max": lambda: v.max(axis=axes, keepdims=True),
         "lpnorm": lambda: (np.abs(v) ** lp_order).sum(axis=axes, keepdims=True) ** (1 / lp_order)}[mode]()
    onnx_op = {"average": "GlobalAveragePool", "max": "GlobalMaxPool", "lpnorm": "GlobalLpPool"}[mode]
    if onnx:
        check_onnx(y, onnx_op, [x], **({"p": lp_order} if mode == "lpnorm" else {}))
    attrs = {"mode": mode, "global": True, "lp_order": lp_order}
    cases.append(case(name, "pooling", [tensor(x)], [tensor(y.astype(x.dtype))], attrs))


x55 = rand((1, 2, 5, 5))
add_pool("max2d", rand((2, 2, 4, 4)), "max", [2, 2], stride=[2, 2])
add_pool("max2d_pad", x55, "max", [3, 3], padding=[1, 1])
add_pool("max2d_asymmetric_pad", x55, "max", [3, 2], padding=[0, 1, 2, 0], stride=[2, 1])
add_pool("max2d_dilations", rand((1, 1, 6, 7)), "max", [2, 3], dilations=[2, 2], stride=[1, 2])
add_pool("max2d_floor", x55, "max", [2, 2], stride=[2, 2])
add_pool("max2d_ceil", x55, "max", [2, 2], stride=[2, 2], ceil_mode=True)
# Ceil mode would add a window starting in the end padding: ONNX drops it.
add_pool("max1d_ceil_drops_padding_window", rand((1, 2, 5)), "max", [2], padding=[1], stride=[2], ceil_mode=True)
add_pool("max1d", rand((2, 3, 8)), "max", [3], stride=[2], padding=[1, 0])
add_pool("max3d", rand((1, 2, 3, 4, 4)), "max", [2, 2, 3], stride=[1, 2, 1], padding=[0, 1, 1])
add_pool("max2d_f64", rand((1, 2, 4, 5), np.float64), "max", [2, 3], padding=[1, 1])
add_pool("max2d_int8", rand((1, 2, 4, 4), np.int8), "max", [2, 2], stride=[1, 2])
add_pool("max2d_uint8", rand((1, 1, 5, 4), np.uint8), "max", [3, 2], stride=[2, 2], ceil_mode=True)
add_pool("max2d_f16", rand((1, 2, 4, 4), np.float16), "max", [3, 3], padding=[1, 1], stride=[2, 2])

add_pool("avg2d", rand((2, 2, 4, 4)), "average", [2, 2], stride=[2, 2])
add_pool("avg2d_pad_exclude", x55, "average", [3, 3], padding=[1, 1])
add_pool("avg2d_pad_include", x55, "average", [3, 3], padding=[1, 1], count_include_pad=True)
add_pool("avg2d_asymmetric_pad_include", x55, "average", [2, 3], padding=[1, 0, 0, 2], count_include_pad=True)
add_pool("avg2d_ceil_exclude", x55, "average", [2, 2], stride=[2, 2], ceil_mode=True)
# Partial ceil windows divide by the taps inside the padded input only (PyTorch's rule).
add_pool("avg2d_ceil_include", x55, "average", [3, 3], padding=[1, 1], stride=[2, 2], ceil_mode=True,
         count_include_pad=True)
add_pool("avg2d_ceil_include_overrun", rand((1, 1, 6, 6)), "average", [4, 4], padding=[1, 0], stride=[3, 3],
         ceil_mode=True, count_include_pad=True, onnx=False)
add_pool("avg2d_dilations", rand((1, 2, 6, 6)), "average", [2, 2], dilations=[2, 3], padding=[1, 1])
add_pool("avg1d", rand((2, 2, 7)), "average", [3], stride=[2], padding=[1], count_include_pad=True)
add_pool("avg3d", rand((1, 2, 4, 3, 4)), "average", [2, 2, 2], stride=[2, 1, 2], padding=[1, 0, 0])
add_pool("avg2d_f16", rand((1, 3, 4, 4), np.float16), "average", [2, 2], padding=[1, 1])

add_pool("lp2d", rand((1, 2, 4, 4)), "lpnorm", [2, 2], stride=[2, 2])
add_pool("lp2d_pad", x55, "lpnorm", [3, 3], padding=[1, 1], stride=[2, 2], onnx=False)
add_pool("lp1d_p1", rand((2, 2, 6)), "lpnorm", [3], lp_order=1)
add_pool("lp2d_p3_dilations", rand((1, 1, 5, 5)), "lpnorm", [2, 2], dilations=[2, 2], lp_order=3)
add_pool("lp3d_f16", rand((1, 1, 3, 4, 4), np.float16), "lpnorm", [2, 2, 2], stride=[1, 2, 2])

add_global("global_avg", rand((2, 3, 3, 4)), "average")
add_global("global_max", rand((1, 3, 3, 4)), "max")
# onnx.reference's GlobalMaxPool reduces the wrong axes unless there are 2 spatial dims.
add_global("global_max_1d", rand((1, 3, 5)), "max", onnx=False)
add_global("global_max_3d", rand((1, 2, 2, 3, 3)), "max", onnx=False)
add_global("global_lp", rand((2, 2, 3, 3)), "lpnorm", lp_order=3, onnx=False)
add_global("global_avg_f16", rand((1, 4, 4, 4), np.float16), "average")

f32 = "float32"
x = [shape_only(f32, [1, 2, 5, 5])]
cases += [
    error_case("pool_bad_mode", "pooling", x, "mode='min'; expected average, max or lpnorm",
               {"mode": "min", "lengths": [2, 2]}),
    error_case("pool_no_lengths", "pooling", x, "lengths is empty; expected the kernel length of each of the 2"),
    error_case("pool_bad_lengths", "pooling", x, "lengths has 3 values; expected 2", {"lengths": [2, 2, 2]}),
    error_case("pool_zero_length", "pooling", x, "lengths has 0; expected values >= 1", {"lengths": [2, 0]}),
    error_case("pool_bad_padding", "pooling", x, "padding has 3 values",
               {"lengths": [2, 2], "padding": [1, 1, 1]}),
    error_case("pool_bad_dilations", "pooling", x, "dilations has 1 values; expected 2",
               {"lengths": [2, 2], "dilations": [2]}),
    error_case("pool_zero_stride", "pooling", x, "stride has 0", {"lengths": [2, 2], "stride": [0, 1]}),
    error_case("pool_kernel_too_big", "pooling", x,
               "spatial dim 1: kernel 8 is larger than the padded input 7 (5 + padding 1+1)",
               {"lengths": [2, 8], "padding": [1, 1]}),
    error_case("pool_global_with_lengths", "pooling", x, "global pooling takes no lengths",
               {"global": True, "lengths": [2, 2]}),
    error_case("pool_avg_int", "pooling", [shape_only("int8", [1, 1, 4, 4])], "expected a float type",
               {"lengths": [2, 2]}),
    error_case("pool_max_int32", "pooling", [shape_only("int32", [1, 1, 4, 4])],
               "expected a float type, int8 or uint8", {"mode": "max", "lengths": [2, 2]}),
    error_case("pool_lp_order", "pooling", x, "lp_order=0; expected >= 1",
               {"mode": "lpnorm", "lengths": [2, 2], "lp_order": 0}),
    error_case("pool_rank2", "pooling", [shape_only(f32, [2, 5])], "input 0 has 2 dims",
               {"lengths": [2]}),
]


def lrn(x, size, alpha=1e-4, beta=0.75, bias=1.0):
    v = x.astype(np.float64)
    sq = np.zeros_like(v)
    lo, hi = (size - 1) // 2, -(-(size - 1) // 2)
    for c in range(x.shape[1]):
        sq[:, c] = (v[:, max(0, c - lo):min(x.shape[1], c + hi + 1)] ** 2).sum(axis=1)
    return v / (bias + alpha / size * sq) ** beta


def add_lrn(name, x, size, **attrs):
    y = lrn(x, size, **attrs)
    cases.append(case(name, "lrn", [tensor(x)], [tensor(y.astype(x.dtype))], {"size": size, **attrs}))


add_lrn("lrn", rand((2, 5, 2, 2)) * 3, 3)
add_lrn("lrn_even_size", rand((1, 6, 2, 3)) * 3, 4, alpha=0.5, beta=0.5, bias=2.0)
add_lrn("lrn_size_above_channels", rand((1, 3, 3, 2)) * 3, 5, alpha=0.25, beta=1.0)
add_lrn("lrn_3d_input", rand((2, 4, 5)) * 3, 2, alpha=0.125)
add_lrn("lrn_f16", rand((1, 4, 3, 3), np.float16), 3, alpha=0.5)
add_lrn("lrn_f64", rand((1, 5, 2, 2), np.float64), 3, alpha=0.75, beta=0.25, bias=0.5)
cases += [
    error_case("lrn_size_zero", "lrn", [shape_only(f32, [1, 3, 2, 2])], "size=0; expected >= 1", {"size": 0}),
    error_case("lrn_int", "lrn", [shape_only("int32", [1, 3, 2, 2])], "expected a float type", {"size": 3}),
    error_case("lrn_rank1", "lrn", [shape_only(f32, [3])], "input 0 has 1 dims", {"size": 3}),
]
write("pooling", cases)
