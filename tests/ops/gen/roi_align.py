"""Cases for src/ops/roi_align.cpp: roi_align computed with onnx's reference evaluator (ONNX
RoiAlign, opset 16); max_roi_pool (which onnx's reference lacks) with a numpy loop of Caffe's ROI
pooling, as ONNX MaxRoiPool describes."""
import math

import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write
from onnx_oracle import run_node

r = rng(10)
cases = []


def add(name, x, rois, idx, rtol=None, atol=None, **attrs):
    (y,) = run_node("RoiAlign", [x, rois, idx], opset=16, **attrs)
    cases.append(case(name, "roi_align", [tensor(x), tensor(rois), tensor(idx)], [tensor(y)], attrs, rtol=rtol,
                      atol=atol))


def regions(n, h, w, dtype=np.float32):
    lo = r.uniform(-1, [w - 1, h - 1], (n, 2))
    size = r.uniform(0.5, [w, h], (n, 2))
    return np.concatenate([lo, lo + size], axis=1).astype(dtype)


x = r.standard_normal((2, 3, 6, 7)).astype(np.float32)
rois = regions(4, 6, 7)
idx = np.array([0, 1, 1, 0], np.int64)
add("avg_default", x, rois, idx)
add("avg_2x3", x, rois, idx, output_height=2, output_width=3)
add("avg_sampling_2", x, rois, idx, output_height=3, output_width=2, sampling_ratio=2)
add("max", x, rois, idx, mode="max", output_height=2, output_width=2)
add("max_sampling_1", x, rois, idx, mode="max", output_height=3, output_width=3, sampling_ratio=1)
add("output_half_pixel", x, rois, idx, coordinate_transformation_mode="output_half_pixel", output_height=2,
    output_width=2)
add("spatial_scale", x, rois * 2, idx, spatial_scale=0.5, output_height=2, output_width=2)
big = np.array([[-3, -2, 12, 10], [5, 5, 5.2, 5.1]], np.float32)  # reaches far outside; tiny
add("outside_and_tiny", x, big, np.array([1, 0], np.int64), output_height=3, output_width=3)
add("large_bins", r.standard_normal((1, 2, 10, 10)).astype(np.float32), np.array([[0, 0, 9, 9]], np.float32),
    np.array([0], np.int64), output_height=2, output_width=2)
add("f64", x.astype(np.float64), rois.astype(np.float64), idx, output_height=2, output_width=2)
add("f16", x.astype(np.float16), rois.astype(np.float16), idx, output_height=2, output_width=2, rtol=1e-2, atol=1e-2)
add("int32_indices", x, rois, idx.astype(np.int32))
add("no_rois", x, np.zeros((0, 4), np.float32), np.zeros(0, np.int64), output_height=2, output_width=2)

f = "float32"
ins = [shape_only(f, [1, 2, 4, 4]), shape_only(f, [3, 4]), shape_only("int64", [3])]
cases.append(error_case("bad_mode", "roi_align", ins, "mode='mean'; expected avg or max", {"mode": "mean"}))
cases.append(error_case("bad_ctm", "roi_align", ins, "coordinate_transformation_mode='asymmetric'",
                        {"coordinate_transformation_mode": "asymmetric"}))
cases.append(error_case("rois_cols", "roi_align", [ins[0], shape_only(f, [3, 5]), ins[2]],
                        "rois' last dim is 5; expected 4"))
cases.append(error_case("index_count", "roi_align", [ins[0], ins[1], shape_only("int64", [2])],
                        "batch_indices has 2 values; expected 3"))
cases.append(error_case("zero_output", "roi_align", ins, "output_height and output_width must be >= 1",
                        {"output_height": 0}))
cases.append(error_case("float_indices", "roi_align", [ins[0], ins[1], shape_only(f, [3])],
                        "expected an integer type"))


def max_roi_pool(x, rois, pooled, scale):
    n_rois, (ph_n, pw_n) = rois.shape[0], pooled
    y = np.zeros((n_rois, x.shape[1], ph_n, pw_n), np.float64)
    h, w = x.shape[2:]
    rnd = lambda v: int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))
    for n, (b, x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        x1, y1, x2, y2 = (rnd(v * scale) for v in (x1, y1, x2, y2))
        rw, rh = max(x2 - x1 + 1, 1), max(y2 - y1 + 1, 1)
        for ph in range(ph_n):
            h0 = min(max(math.floor(ph * rh / ph_n) + y1, 0), h)
            h1 = min(max(math.ceil((ph + 1) * rh / ph_n) + y1, 0), h)
            for pw in range(pw_n):
                w0 = min(max(math.floor(pw * rw / pw_n) + x1, 0), w)
                w1 = min(max(math.ceil((pw + 1) * rw / pw_n) + x1, 0), w)
                if h0 < h1 and w0 < w1:
                    y[n, :, ph, pw] = x[int(b), :, h0:h1, w0:w1].max(axis=(1, 2))
    return y.astype(x.dtype)


def add_pool(name, x, rois, pooled, scale=1.0):
    y = max_roi_pool(x, rois, pooled, scale)
    cases.append(case("max_roi_pool_" + name, "max_roi_pool", [tensor(x), tensor(rois)], [tensor(y)],
                      {"pooled_shape": list(pooled), "spatial_scale": scale}))


px = r.standard_normal((2, 3, 8, 9)).astype(np.float32)
prois = np.array([[0, 0, 0, 8, 7], [1, 2, 1, 5, 6], [1, -2, -1, 3, 2], [0, 6.6, 5.4, 12, 10], [0, 4, 4, 4, 4]],
                 np.float32)
add_pool("2x2", px, prois, (2, 2))
add_pool("3x4", px, prois, (3, 4))
add_pool("scale", px, prois * np.array([1, 2, 2, 2, 2], np.float32), (2, 3), scale=0.5)
add_pool("1x1", px, prois, (1, 1))
add_pool("f64", px.astype(np.float64), prois.astype(np.float64), (2, 2))
cases.append(error_case("max_roi_pool_no_pooled_shape", "max_roi_pool", [shape_only(f, [1, 2, 4, 4]), shape_only(f, [3, 5])],
                        "pooled_shape has 0 values"))
cases.append(error_case("max_roi_pool_rois_cols", "max_roi_pool", [shape_only(f, [1, 2, 4, 4]), shape_only(f, [3, 4])],
                        "rois' last dim is 4; expected 5", {"pooled_shape": [2, 2]}))
write("roi_align", cases)
