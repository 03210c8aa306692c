"""Cases for src/ops/normalization.cpp, computed with onnx's reference evaluator on a one-node
model. Inputs go in as float64 and the result is rounded once to the case's type, which is
what kiln does (statistics in double)."""
import numpy as np
import onnx
from onnx import helper
from onnx.reference import ReferenceEvaluator
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(17)
cases = []
OPSET = 23   # RMSNormalization is opset 23; GroupNormalization's per-channel form is opset 21


def onnx_run(op_type, inputs, attrs):
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op_type, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, onnx.TensorProto.DOUBLE, None) for n in names],
        [helper.make_tensor_value_info("y", onnx.TensorProto.DOUBLE, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    return ReferenceEvaluator(model).run(None, {n: a.astype(np.float64) for n, a in zip(names, inputs)})[0]


def add(name, op, onnx_op, inputs, attrs=None, onnx_attrs=None, **tol):
    attrs = attrs or {}
    y = onnx_run(onnx_op, inputs, attrs if onnx_attrs is None else onnx_attrs).astype(inputs[0].dtype)
    cases.append(case(name, op, [tensor(a) for a in inputs], [tensor(y)], attrs, **tol))


def normal(*lens, dtype=np.float32, scale=1.0, shift=0.0):
    return (r.standard_normal(lens) * scale + shift).astype(dtype)


def positive(*lens, dtype=np.float32):
    return r.uniform(0.5, 2.0, lens).astype(dtype)


# batch_norm_inference: ONNX BatchNormalization in inference mode.
for lens in [(2, 3), (2, 3, 4), (2, 3, 2, 2), (1, 2, 2, 2, 3)]:
    c = lens[1]
    ins = [normal(*lens, scale=2, shift=1), normal(c), normal(c), normal(c), positive(c)]
    add(f"batch_norm_{len(lens)}d", "batch_norm_inference", "BatchNormalization", ins)
add("batch_norm_epsilon", "batch_norm_inference", "BatchNormalization",
    [normal(2, 3, 4), normal(3), normal(3), normal(3), positive(3) * 0.01], {"epsilon": 0.1})
add("batch_norm_f16", "batch_norm_inference", "BatchNormalization",
    [normal(2, 4, 3, dtype=np.float16), normal(4, dtype=np.float16), normal(4, dtype=np.float16),
     normal(4, dtype=np.float16), positive(4, dtype=np.float16)])
# ONNX lets scale/bias and mean/var have their own types (T1, T2).
x = normal(2, 3, 4, dtype=np.float16)
ps = [normal(3), normal(3), normal(3, dtype=np.float64), positive(3, dtype=np.float64)]
y = onnx_run("BatchNormalization", [x] + ps, {}).astype(np.float16)
cases.append(case("batch_norm_mixed_types", "batch_norm_inference", [tensor(a) for a in [x] + ps], [tensor(y)]))

# instancenorm: statistics over the spatial dims of each (n, c).
for lens in [(2, 3, 5), (2, 3, 2, 3), (1, 2, 2, 2, 2)]:
    c = lens[1]
    add(f"instancenorm_{len(lens)}d", "instancenorm", "InstanceNormalization",
        [normal(*lens, scale=3, shift=2), normal(c), normal(c)])
add("instancenorm_epsilon", "instancenorm", "InstanceNormalization", [normal(2, 2, 6), normal(2), normal(2)],
    {"epsilon": 0.01})
add("instancenorm_f16", "instancenorm", "InstanceNormalization",
    [normal(2, 3, 8, dtype=np.float16), normal(3, dtype=np.float16), normal(3, dtype=np.float16)], rtol=4e-3)

# group_norm: ONNX GroupNormalization opset 21 (scale and bias per channel), in numpy: the
# reference evaluator runs its function body in float32 (stash_type).
def group_norm(x, scale, bias, num_groups, epsilon=1e-5):
    w = x.astype(np.float64)
    g = w.reshape(x.shape[0], num_groups, -1)
    g = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + np.float32(epsilon))
    per_channel = (-1,) + (1,) * (x.ndim - 2)
    y = g.reshape(x.shape) * scale.reshape(per_channel) + bias.reshape(per_channel)
    return y.astype(x.dtype)


def add_group_norm(name, x, scale, bias, attrs, **tol):
    y = group_norm(x, scale, bias, **attrs)
    cases.append(case(name, "group_norm", [tensor(x), tensor(scale), tensor(bias)], [tensor(y)], attrs, **tol))


for lens, groups in [((2, 6, 4), 3), ((2, 4, 2, 3), 2), ((1, 6, 3), 6), ((2, 4, 3), 1), ((3, 4), 2)]:
    c = lens[1]
    add_group_norm(f"group_norm_{len(lens)}d_{groups}groups", normal(*lens, scale=2, shift=-1), normal(c), normal(c),
                   {"num_groups": groups})
add_group_norm("group_norm_epsilon", normal(2, 4, 5), normal(4), normal(4), {"num_groups": 2, "epsilon": 0.05})
add_group_norm("group_norm_f16", normal(2, 4, 6, dtype=np.float16), normal(4, dtype=np.float16),
               normal(4, dtype=np.float16), {"num_groups": 2}, rtol=4e-3)

# layernorm: ONNX LayerNormalization, output Y.
add("layernorm_last", "layernorm", "LayerNormalization", [normal(3, 8, scale=2, shift=1), normal(8), normal(8)])
add("layernorm_no_bias", "layernorm", "LayerNormalization", [normal(3, 8), normal(8)])
add("layernorm_axis1", "layernorm", "LayerNormalization", [normal(2, 3, 4), normal(3, 4), normal(3, 4)], {"axis": 1})
add("layernorm_axis_neg2", "layernorm", "LayerNormalization", [normal(2, 3, 4), normal(3, 4), normal(4)],
    {"axis": -2})
add("layernorm_axis0", "layernorm", "LayerNormalization", [normal(2, 3, 4), normal(2, 3, 4)], {"axis": 0})
add("layernorm_scale_broadcast", "layernorm", "LayerNormalization", [normal(2, 3, 4), normal(1, 4), normal(3, 1)],
    {"axis": 1})
add("layernorm_epsilon", "layernorm", "LayerNormalization", [normal(4, 5), normal(5), normal(5)], {"epsilon": 0.1})
add("layernorm_f16", "layernorm", "LayerNormalization",
    [normal(3, 16, dtype=np.float16, scale=4), normal(16, dtype=np.float16), normal(16, dtype=np.float16)], rtol=4e-3)
add("layernorm_f64", "layernorm", "LayerNormalization", [normal(2, 6, dtype=np.float64), normal(6, dtype=np.float64)])

# rms_norm: ONNX RMSNormalization opset 23.
add("rms_norm_last", "rms_norm", "RMSNormalization", [normal(3, 8, shift=0.5), normal(8)])
add("rms_norm_axis1", "rms_norm", "RMSNormalization", [normal(2, 3, 4), normal(3, 4)], {"axis": 1})
add("rms_norm_axis_neg2_broadcast", "rms_norm", "RMSNormalization", [normal(2, 3, 4), normal(4)], {"axis": -2})
add("rms_norm_epsilon", "rms_norm", "RMSNormalization", [normal(4, 5) * 0.1, normal(5)], {"epsilon": 0.01})
add("rms_norm_f16", "rms_norm", "RMSNormalization", [normal(3, 16, dtype=np.float16), normal(16, dtype=np.float16)],
    rtol=4e-3)

# lp_normalization: ONNX LpNormalization in numpy (the reference evaluator leaves out the abs of
# the L1 norm); a zero vector stays zero, as in ONNX Runtime.
def add_lp(name, x, axis=-1, p=2, **tol):
    w = x.astype(np.float64)
    norm = np.sum(np.abs(w) ** p, axis=axis, keepdims=True) ** (1.0 / p)
    y = np.divide(w, norm, out=np.zeros_like(w), where=norm != 0).astype(x.dtype)
    attrs = {}
    if axis != -1:
        attrs["axis"] = axis
    if p != 2:
        attrs["p"] = p
    cases.append(case(name, "lp_normalization", [tensor(x)], [tensor(y)], attrs, **tol))


add_lp("lp_norm_p2", normal(3, 5))
add_lp("lp_norm_p1_axis0", normal(3, 5), axis=0, p=1)
add_lp("lp_norm_axis1_3d", normal(2, 4, 3), axis=1)
add_lp("lp_norm_f16", normal(4, 6, dtype=np.float16), p=1)
z = normal(3, 4)
z[1] = 0
add_lp("lp_norm_zero_vector", z)

# mean_variance_normalization: ONNX MeanVarianceNormalization's function body in numpy (the
# reference evaluator runs that body in float32 only).
def mvn(x, axes=(0, 2, 3)):
    axes = tuple(axes)
    w = x.astype(np.float64)
    mean = np.mean(w, axis=axes, keepdims=True)
    std = np.sqrt(np.mean(w * w, axis=axes, keepdims=True) - mean * mean)
    return ((w - mean) / (std + 1e-9)).astype(x.dtype)


def add_mvn(name, x, axes=None, **tol):
    attrs = {} if axes is None else {"axes": axes}
    y = mvn(x) if axes is None else mvn(x, axes)
    cases.append(case(name, "mean_variance_normalization", [tensor(x)], [tensor(y)], attrs, **tol))


add_mvn("mvn_default_axes", normal(2, 3, 2, 3, scale=2))
add_mvn("mvn_axes_23", normal(2, 3, 4, 2), [2, 3])
add_mvn("mvn_neg_axis_3d", normal(3, 4, 5), [-1])
add_mvn("mvn_f16", normal(2, 6, dtype=np.float16), [0, 1], rtol=4e-3)

f = lambda *lens: shape_only("float32", lens)
cases += [
    error_case("batch_norm_rank1", "batch_norm_inference", [f(3)] + [f(3)] * 4, "has 1 dims"),
    error_case("batch_norm_four_inputs", "batch_norm_inference", [f(2, 3)] + [f(3)] * 3, "expected 5 inputs, got 4"),
    error_case("batch_norm_scale_shape", "batch_norm_inference", [f(2, 3, 4), f(4), f(3), f(3), f(3)],
               "input 1 (scale) has lens {4}; expected {3}"),
    error_case("batch_norm_var_rank", "batch_norm_inference", [f(2, 3, 4), f(3), f(3), f(3), f(1, 3)],
               "input 4 (var) has lens {1, 3}"),
    error_case("batch_norm_int", "batch_norm_inference", [shape_only("int32", [2, 3])] + [f(3)] * 4,
               "expected a float type"),
    error_case("batch_norm_bias_type", "batch_norm_inference",
               [f(2, 3), f(3), shape_only("float16", [3]), f(3), f(3)], "input 2 (bias) is half_type"),
    error_case("instancenorm_bias_shape", "instancenorm", [f(2, 3, 4), f(3), f(2)], "input 2 (bias) has lens {2}"),
    error_case("instancenorm_two_inputs", "instancenorm", [f(2, 3, 4), f(3)], "expected 3 inputs, got 2"),
    error_case("instancenorm_mixed_types", "instancenorm", [f(2, 3, 4), shape_only("float16", [3]), f(3)],
               "inputs must have the same type"),
    error_case("group_norm_not_divisible", "group_norm", [f(2, 6, 4), f(6), f(6)],
               "num_groups=4 does not divide the 6 channels", {"num_groups": 4}),
    error_case("group_norm_zero_groups", "group_norm", [f(2, 6, 4), f(6), f(6)], "num_groups=0",
               {"num_groups": 0}),
    error_case("group_norm_scale_per_group", "group_norm", [f(2, 6, 4), f(3), f(3)],
               "input 1 (scale) has lens {3}; expected {6}", {"num_groups": 3}),
    error_case("layernorm_axis_out_of_range", "layernorm", [f(2, 3), f(3)], "axis=2 is out of range", {"axis": 2}),
    error_case("layernorm_scale_shape", "layernorm", [f(2, 3), f(4)],
               "input 1 (scale) has lens {4}; expected lens that broadcast to {2, 3}"),
    error_case("layernorm_bias_rank", "layernorm", [f(2, 3), f(3), f(1, 2, 3)], "input 2 (bias) has lens {1, 2, 3}"),
    error_case("layernorm_one_input", "layernorm", [f(2, 3)], "expected 2 to 3 inputs, got 1"),
    error_case("rms_norm_scale_shape", "rms_norm", [f(2, 3), f(2)], "input 1 (scale) has lens {2}"),
    error_case("rms_norm_three_inputs", "rms_norm", [f(2, 3), f(3), f(3)], "expected 2 inputs, got 3"),
    error_case("lp_norm_p3", "lp_normalization", [f(2, 3)], "p=3; expected 1 or 2", {"p": 3}),
    error_case("lp_norm_int", "lp_normalization", [shape_only("int32", [2, 3])], "expected a float type"),
    error_case("mvn_default_axes_rank3", "mean_variance_normalization", [f(2, 3, 4)], "axes=3 is out of range"),
    error_case("mvn_repeated_axes", "mean_variance_normalization", [f(2, 3, 4)], "axes repeats axis",
               {"axes": [1, -2]}),
]

write("normalization", cases)
