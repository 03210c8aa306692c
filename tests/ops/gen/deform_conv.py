"""Cases for src/ops/deform_conv.cpp, computed with onnx's reference evaluator (ONNX DeformConv,
opset 19; the reference handles 2-D only)."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write
from onnx_oracle import run_node

r = rng(19)
cases = []


def add(name, x, w, b=None, with_mask=False, offset_scale=1.0, atol=1e-4, **attrs):
    k = w.shape[2:]
    og = attrs.get("offset_group", 1)
    pads = attrs.get("pads", [0, 0, 0, 0])
    st = attrs.get("strides", [1, 1])
    dl = attrs.get("dilations", [1, 1])
    out = [(x.shape[2 + d] + pads[d] + pads[d + 2] - (k[d] - 1) * dl[d] - 1) // st[d] + 1 for d in range(2)]
    offset = (r.standard_normal((x.shape[0], og * k[0] * k[1] * 2, *out)) * offset_scale).astype(x.dtype)
    mask = r.uniform(0, 1, (x.shape[0], og * k[0] * k[1], *out)).astype(x.dtype) if with_mask else None
    (y,) = run_node("DeformConv", [x, w, offset, b, mask], **attrs)
    ins = [x, w, offset] + ([b] if b is not None or mask is not None else []) + ([mask] if mask is not None else [])
    if b is None and mask is not None:
        ins[3] = np.zeros(w.shape[0], x.dtype)  # kiln's inputs are positional: a zero bias stands in
    cases.append(case(name, "deform_conv", [tensor(v) for v in ins], [tensor(y)], attrs, atol=atol))


def f32(*lens):
    return r.standard_normal(lens).astype(np.float32)


add("basic", f32(1, 1, 4, 4), f32(1, 1, 2, 2))
add("channels", f32(2, 3, 5, 4), f32(2, 3, 3, 2))
add("padding", f32(1, 2, 3, 3), f32(2, 2, 2, 2), pads=[1, 1, 1, 1])
add("strides_dilations", f32(1, 2, 6, 7), f32(3, 2, 2, 2), strides=[2, 1], dilations=[1, 2])
add("bias", f32(1, 2, 4, 4), f32(2, 2, 2, 2), b=f32(2))
add("mask", f32(1, 2, 4, 4), f32(2, 2, 2, 2), with_mask=True)
add("mask_and_bias", f32(2, 2, 4, 3), f32(1, 2, 2, 2), b=f32(1), with_mask=True)
add("group2", f32(1, 4, 4, 4), f32(4, 2, 2, 2), group=2)
add("offset_group2", f32(1, 4, 4, 4), f32(2, 4, 2, 2), offset_group=2, with_mask=True)
add("large_offsets", f32(1, 1, 5, 5), f32(1, 1, 3, 3), offset_scale=4.0, pads=[1, 1, 1, 1])
add("kernel_shape_attr", f32(1, 1, 4, 4), f32(1, 1, 2, 3), kernel_shape=[2, 3])
# The reference samples at float32 coordinates, so float64 agrees to about 1e-6 only.
add("f64", r.standard_normal((1, 2, 4, 4)), r.standard_normal((2, 2, 2, 2)), b=r.standard_normal(2), atol=1e-5)

f = "float32"
x, w = shape_only(f, [1, 2, 4, 4]), shape_only(f, [2, 2, 2, 2])
cases.append(error_case("offset_shape", "deform_conv", [x, w, shape_only(f, [1, 8, 2, 3])],
                        "offset is {1, 8, 2, 3}; expected {1, 8, 3, 3}"))
cases.append(error_case("group_mismatch", "deform_conv", [x, shape_only(f, [2, 1, 2, 2]), shape_only(f, [1, 8, 3, 3])],
                        "does not fit 2 input channels in 1 groups"))
cases.append(error_case("kernel_shape_mismatch", "deform_conv", [x, w, shape_only(f, [1, 8, 3, 3])],
                        "kernel_shape does not match W's spatial dims", {"kernel_shape": [3, 3]}))
cases.append(error_case("bias_shape", "deform_conv", [x, w, shape_only(f, [1, 8, 3, 3]), shape_only(f, [3])],
                        "B is {3}; expected {2}"))
cases.append(error_case("mask_shape", "deform_conv", [x, w, shape_only(f, [1, 8, 3, 3]), shape_only(f, [2]),
                                                      shape_only(f, [1, 3, 3, 3])], "mask is {1, 3, 3, 3}"))
cases.append(error_case("offset_groups_split", "deform_conv", [x, w, shape_only(f, [1, 24, 3, 3])],
                        "2 input channels do not split into 3 offset groups", {"offset_group": 3}))
cases.append(error_case("int_input", "deform_conv", [shape_only("int32", [1, 2, 4, 4]), shape_only("int32", [2, 2, 2, 2]),
                                                     shape_only("int32", [1, 8, 3, 3])], "expected a float type"))
write("deform_conv", cases)
