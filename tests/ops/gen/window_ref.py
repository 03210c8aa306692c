"""numpy references for the sliding-window ops (convolution, deconvolution, pooling), written
tap by tap (strided slices of the padded input) rather than element by element like kiln's
loops, plus a check against onnx.reference where that evaluator is right for the case."""
import itertools

import numpy as np
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator


def onnx_run(op_type, inputs, opset=19, **attrs):
    """Runs one ONNX node with onnx's reference evaluator; returns its first output."""
    names = [f"in{i}" for i in range(len(inputs))]
    node = helper.make_node(op_type, names, ["out"], **attrs)
    graph = helper.make_graph(
        [node], "one_node",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
         for n, x in zip(names, inputs)],
        [helper.make_tensor_value_info("out", TensorProto.UNDEFINED, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return ReferenceEvaluator(model).run(None, dict(zip(names, inputs)))[0]


def check_onnx(expected, op_type, inputs, **attrs):
    """Asserts that onnx.reference agrees with our float64 result."""
    got = onnx_run(op_type, [x.astype(np.float64) for x in inputs], **attrs)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9, err_msg=f"{op_type} {attrs}")


def split_pads(padding, dims):
    """kiln's padding attribute as (begins, ends)."""
    padding = list(padding or [0] * dims)
    if len(padding) == dims:
        return padding, padding
    return padding[:dims], padding[dims:]


def taps_slices(kernel, out, stride, dilation):
    """For each kernel tap: the tap and the strided slice of the padded input it reads."""
    for taps in itertools.product(*[range(k) for k in kernel]):
        yield taps, tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                          for t, o, s, d in zip(taps, out, stride, dilation))


def conv(x, w, padding=None, stride=None, dilation=None, group=1):
    dims = x.ndim - 2
    stride, dilation = stride or [1] * dims, dilation or [1] * dims
    pb, pe = split_pads(padding, dims)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(zip(pb, pe)))
    kernel = w.shape[2:]
    out = [(xp.shape[2 + d] - (kernel[d] - 1) * dilation[d] - 1) // stride[d] + 1 for d in range(dims)]
    y = np.zeros((x.shape[0], w.shape[0], *out))
    cpg, mpg = x.shape[1] // group, w.shape[0] // group
    for taps, sl in taps_slices(kernel, out, stride, dilation):
        xs = xp[(slice(None), slice(None)) + sl]
        for g in range(group):
            wg = w[g * mpg:(g + 1) * mpg, :][(slice(None), slice(None)) + taps].astype(np.float64)
            y[:, g * mpg:(g + 1) * mpg] += np.einsum("nc...,mc->nm...", xs[:, g * cpg:(g + 1) * cpg], wg)
    return y


def deconv(x, w, padding=None, stride=None, dilation=None, output_padding=None, group=1):
    """Scatters every input element's products into the full output, then crops the padding."""
    dims = x.ndim - 2
    stride, dilation = stride or [1] * dims, dilation or [1] * dims
    output_padding = output_padding or [0] * dims
    pb, pe = split_pads(padding, dims)
    kernel, n = w.shape[2:], x.shape[2:]
    full = [stride[d] * (n[d] - 1) + output_padding[d] + (kernel[d] - 1) * dilation[d] + 1 for d in range(dims)]
    cpg, mpg = x.shape[1] // group, w.shape[1]
    y = np.zeros((x.shape[0], mpg * group, *full))
    for taps in itertools.product(*[range(k) for k in kernel]):
        sl = tuple(slice(t * d, t * d + (m - 1) * s + 1, s) for t, m, s, d in zip(taps, n, stride, dilation))
        for g in range(group):
            xg = x[:, g * cpg:(g + 1) * cpg].astype(np.float64)
            wg = w[g * cpg:(g + 1) * cpg][(slice(None), slice(None)) + taps].astype(np.float64)
            y[(slice(None), slice(g * mpg, (g + 1) * mpg)) + sl] += np.einsum("nc...,cm->nm...", xg, wg)
    return y[(slice(None), slice(None)) + tuple(slice(b, f - e) for b, f, e in zip(pb, full, pe))]


def pool_len(n, k, pb, pe, s, d, ceil):
    span = (k - 1) * d + 1
    q, r = divmod(n + pb + pe - span, s)
    length = q + 1 + (1 if ceil and r else 0)
    if ceil and (length - 1) * s >= n + pb:   # the last window would start in the end padding
        length -= 1
    return length


def pool(x, mode, lengths, padding=None, stride=None, dilations=None, ceil_mode=False,
         count_include_pad=False, p=2):
    dims = x.ndim - 2
    stride, dilations = stride or [1] * dims, dilations or [1] * dims
    pb, pe = split_pads(padding, dims)
    n = x.shape[2:]
    out = [pool_len(n[d], lengths[d], pb[d], pe[d], stride[d], dilations[d], ceil_mode) for d in range(dims)]
    # Pad past the end padding too, for ceil_mode's partial windows; masks say what each place is.
    extra = [max(0, (out[d] - 1) * stride[d] + (lengths[d] - 1) * dilations[d] + 1 - n[d] - pb[d] - pe[d])
             for d in range(dims)]
    widths = [(0, 0), (0, 0)] + [(pb[d], pe[d] + extra[d]) for d in range(dims)]
    xp = np.pad(x.astype(np.float64), widths)
    real = np.pad(np.ones(x.shape), widths)
    padded_lens = [n[d] + pb[d] + pe[d] for d in range(dims)]
    in_padded = np.pad(np.ones(x.shape[:2] + tuple(padded_lens)), [(0, 0), (0, 0)] + [(0, e) for e in extra])
    vals, reals, counted = [], [], []
    for _, sl in taps_slices(lengths, out, stride, dilations):
        idx = (slice(None), slice(None)) + sl
        vals.append(xp[idx])
        reals.append(real[idx])
        counted.append(in_padded[idx] if count_include_pad else real[idx])
    vals, reals, counted = np.array(vals), np.array(reals), np.array(counted)
    if mode == "max":
        return np.where(reals > 0, vals, -np.inf).max(axis=0)
    if mode == "lpnorm":
        return (np.abs(vals) ** p * reals).sum(axis=0) ** (1.0 / p)
    return (vals * reals).sum(axis=0) / counted.sum(axis=0)
