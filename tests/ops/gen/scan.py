"""Cases for src/ops/scan.cpp, written as text IR with named inputs; the expected outputs come
from a numpy scan (ONNX Scan semantics) over a numpy version of each body."""
import numpy as np
from caselib import rng, tensor, write

r = rng(11)
cases = []


def ir_case(name, ir, inputs, outputs=None, error=None):
    c = {"name": name, "op": "scan", "ir": ir, "inputs": {k: tensor(v) for k, v in inputs.items()}}
    if error is None:
        c["outputs"] = [tensor(o) for o in outputs]
    else:
        c["error"] = error
    return c


def lens_text(lens):
    return "{" + ", ".join(map(str, lens)) + "}"


def ints_text(xs):
    return "{" + ", ".join(map(str, xs)) + "}"


def program(type_name, inputs, body_params, body, attrs):
    """inputs: [(name, lens)] of the op; body_params: [(name, lens)]; body: instructions."""
    params = "".join(f"{n} = @param:{n} -> {type_name}, {lens_text(l)}\n" for n, l in inputs)
    names = ",".join(n for n, _ in inputs)
    attr_text = ",".join(f"{k}={ints_text(v) if isinstance(v, list) else v}" for k, v in attrs.items())
    bparams = "".join(f"{n} = @param:{n} -> {type_name}, {lens_text(l)}\n" for n, l in body_params)
    return (f'module: "main"\n{params}@0 = scan[{attr_text}]({names}), [body]\n@1 = @return(@0)\n'
            f'\nmodule: "body"\n{bparams}{body}')


def numpy_scan(fn, states, scans, extras, in_axes, in_dirs, out_axes, out_dirs):
    """ONNX Scan: fn(states, slices, extras) -> (states, outputs)."""
    n = scans[0].shape[in_axes[0]]
    parts = None
    for t in range(n):
        slices = [np.take(x, n - 1 - t if d else t, axis=a) for x, a, d in zip(scans, in_axes, in_dirs)]
        states, outs = fn(states, slices, extras)
        parts = parts or [[] for _ in outs]
        for p, o in zip(parts, outs):
            p.append(o)
    stacked = []
    for p, a, d in zip(parts, out_axes, out_dirs):
        s = np.stack(p[::-1] if d else p, axis=0)
        stacked.append(np.moveaxis(s, 0, a if a >= 0 else a + s.ndim))
    return list(states) + stacked


# A running sum over the rows of x: the final sum and every partial sum.
for t, dt in (("float_type", np.float32), ("double_type", np.float64), ("int32_type", np.int32)):
    s0 = r.integers(-5, 5, 3).astype(dt) if dt == np.int32 else r.standard_normal(3).astype(dt)
    x = r.integers(-5, 5, (4, 3)).astype(dt) if dt == np.int32 else r.standard_normal((4, 3)).astype(dt)
    ir = program(t, [("s", [3]), ("x", [4, 3])], [("acc", [3]), ("row", [3])],
                 "@0 = add(acc,row)\n@1 = @return(@0,@0)\n", {"num_states": 1, "num_scan_inputs": 1})
    outs = numpy_scan(lambda st, sl, ex: ([st[0] + sl[0]], [st[0] + sl[0]]), [s0], [x], [], [0], [0], [0], [0])
    cases.append(ir_case(f"scan_running_sum_{t.split('_')[0]}", ir, {"s": s0, "x": x}, outs))

# Two scan inputs along different axes (one read in reverse), an extra input, outputs along
# other axes (one stacked in reverse), negative axes.
a = r.standard_normal((2, 5)).astype(np.float32)
b = r.standard_normal((5, 2)).astype(np.float32)
w = r.standard_normal(2).astype(np.float32)
acc0 = r.standard_normal(2).astype(np.float32)
attrs = {"num_states": 1, "num_scan_inputs": 2, "scan_input_axes": [-1, 0], "scan_input_directions": [1, 0],
         "scan_output_axes": [-1, 0], "scan_output_directions": [0, 1]}
body = "@0 = mul(ai,w2)\n@1 = add(acc,@0)\n@2 = sub(@1,bi)\n@3 = @return(@1,@2,ai)\n"
ir = program("float_type", [("acc0", [2]), ("a", [2, 5]), ("b", [5, 2]), ("w", [2])],
             [("acc", [2]), ("ai", [2]), ("bi", [2]), ("w2", [2])], body, attrs)


def mixed(st, sl, ex):
    acc = st[0] + sl[0] * ex[0]
    return [acc], [acc - sl[1], sl[0]]


outs = numpy_scan(mixed, [acc0], [a, b], [w], [1, 0], [1, 0], [1, 0], [0, 1])
cases.append(ir_case("scan_axes_directions_extra_input", ir, {"acc0": acc0, "a": a, "b": b, "w": w}, outs))

# No state: scan outputs only; a 2-D slice whose output goes in the middle.
x = r.standard_normal((3, 2, 4)).astype(np.float32)
ir = program("float_type", [("x", [3, 2, 4])], [("xi", [2, 4])],
             "@0 = neg(xi)\n@1 = @return(@0)\n",
             {"num_states": 0, "num_scan_inputs": 1, "scan_input_axes": [0], "scan_output_axes": [1]})
outs = numpy_scan(lambda st, sl, ex: ([], [-sl[0]]), [], [x], [], [0], [0], [1], [0])
cases.append(ir_case("scan_no_state_output_axis_1", ir, {"x": x}, outs))

# Two states (sum and product) of int64 along axis 1.
x = r.integers(-3, 4, (2, 3)).astype(np.int64)
s0, p0 = np.array([1, 2], np.int64), np.array([1, -1], np.int64)
ir = program("int64_type", [("s", [2]), ("p", [2]), ("x", [2, 3])], [("si", [2]), ("pi", [2]), ("xi", [2])],
             "@0 = add(si,xi)\n@1 = mul(pi,xi)\n@2 = @return(@0,@1,@1)\n",
             {"num_states": 2, "num_scan_inputs": 1, "scan_input_axes": [1]})
outs = numpy_scan(lambda st, sl, ex: ([st[0] + sl[0], st[1] * sl[0]], [st[1] * sl[0]]), [s0, p0], [x], [], [1], [0], [0], [0])
cases.append(ir_case("scan_two_states_int64", ir, {"s": s0, "p": p0, "x": x}, outs))

# Errors.
sum_body = "@0 = add(acc,row)\n@1 = @return(@0,@0)\n"
sum_params = [("acc", [3]), ("row", [3])]
base = {"num_states": 1, "num_scan_inputs": 1}


def err(name, inputs, params, body, attrs, error):
    cases.append(ir_case(name, program("float_type", inputs, params, body, attrs), {}, error=error))


err("scan_lengths_differ", [("s", [3]), ("x", [4, 3]), ("y", [5, 3])], sum_params + [("y", [3])], sum_body,
    {"num_states": 1, "num_scan_inputs": 2}, "scan input 1 has length 5 along its scan axis but scan input 0 has 4")
err("scan_body_parameter_count", [("s", [3]), ("x", [4, 3])], sum_params + [("z", [3])], sum_body, base,
    "body 'body' takes 3 parameters; expected 2")
err("scan_body_parameter_shape", [("s", [3]), ("x", [3, 4])], sum_params, sum_body, base,
    "body 'body' parameter 1 'row' is float_type, {3}, {1} but receives float_type, {4}, {1}")
err("scan_state_shape_changes", [("s", [3]), ("x", [4, 3])], sum_params,
    "@0 = reduce_sum[axes={0}](acc)\n@1 = @return(@0,row)\n", base,
    "body output 0 (state 0) is float_type, {1}, {1} but its initial value is float_type, {3}, {1}")
err("scan_bad_direction", [("s", [3]), ("x", [4, 3])], sum_params, sum_body,
    dict(base, scan_input_directions=[2]), "scan_input_directions has 2; expected 0 (forward) or 1 (reverse)")
err("scan_axes_length", [("s", [3]), ("x", [4, 3])], sum_params, sum_body,
    dict(base, scan_input_axes=[0, 1]), "scan_input_axes has 2 entries; expected 1")
err("scan_axis_out_of_range", [("s", [3]), ("x", [4, 3])], sum_params, sum_body,
    dict(base, scan_input_axes=[2]), "scan_input_axes")
err("scan_output_axis_out_of_range", [("s", [3]), ("x", [4, 3])], sum_params, sum_body,
    dict(base, scan_output_axes=[3]), "scan_output_axes")
err("scan_no_scan_inputs", [("s", [3]), ("x", [4, 3])], sum_params, sum_body,
    {"num_states": 2, "num_scan_inputs": 0}, "num_scan_inputs=0; expected at least 1")
err("scan_too_few_inputs", [("s", [3]), ("x", [4, 3])], sum_params, sum_body,
    {"num_states": 2, "num_scan_inputs": 1}, "has 2 inputs; expected 2 states and 1 scan inputs at least")
err("scan_scalar_scan_input", [("s", [3]), ("x", [])], [("acc", [3]), ("row", [])], sum_body, base,
    "scan input 0 (input 1) is a scalar; it needs a scan axis")

write("scan", cases)
