"""Cases for src/ops/fused.cpp (pointwise, fused_reduce, fused_epilogue): text IR whose submodule is
the fused body; expected outputs computed by numpy from the same formulas."""
import numpy as np
from caselib import rng, tensor, write

r = rng(11)
cases = []


def ir_case(name, op, ir, inputs, outputs=None, error=None):
    c = {"name": name, "op": op, "ir": ir, "inputs": {k: tensor(v) for k, v in inputs.items()}}
    if error is None:
        c["outputs"] = [tensor(o) for o in outputs]
    else:
        c["error"] = error
    return c


def program(op, main_params, args, body_name, body):
    params = "".join(f"{n} = @param:{n} -> float_type, {{{', '.join(map(str, s))}}}\n" for n, s in main_params)
    return (f'module: "main"\n{params}@0 = {op}({",".join(args)}), [{body_name}]\n@1 = @return(@0)\n'
            f'\nmodule: "{body_name}"\n{body}')


def body_params(params):
    return "".join(f"{n} = @param:{n} -> float_type, {{{', '.join(map(str, s))}}}\n" for n, s in params)


# pointwise: (x + broadcast(b)) * 0.5, then tanh; b broadcast inside the body, 0.5 a literal.
pw_body = (body_params([("x0", (2, 3)), ("x1", (3,))]) +
           "@0 = multibroadcast[out_lens={2, 3}](x1)\n@1 = add(x0,@0)\n"
           "@2 = @literal{0.5} -> float_type, {}\n@3 = mul(@1,@2)\n@4 = tanh(@3)\n@5 = @return(@4)\n")
x = r.standard_normal((2, 3)).astype(np.float32)
b = r.standard_normal(3).astype(np.float32)
cases.append(ir_case("pointwise_add_mul_tanh", "pointwise",
                     program("pointwise", [("x", (2, 3)), ("b", (3,))], ["x", "b"], "pointwise0", pw_body),
                     {"x": x, "b": b}, [np.tanh((x + b) * np.float32(0.5))]))
cases.append(ir_case("pointwise_body_has_a_dot", "pointwise",
                     program("pointwise", [("x", (3, 3))], ["x"], "pointwise0",
                             body_params([("x0", (3, 3))]) + "@0 = dot(x0,x0)\n@1 = @return(@0)\n"),
                     {}, error="submodule 'pointwise0' @0 = dot is not a pointwise op or a broadcast view"))
cases.append(ir_case("pointwise_parameter_count", "pointwise",
                     program("pointwise", [("x", (2, 3))], ["x", "x"], "pointwise0", pw_body.replace("{3}", "{2, 3}")
                             .replace("@0 = multibroadcast[out_lens={2, 3}](x1)\n@1 = add(x0,@0)", "@1 = add(x0,x1)")
                             .replace("x1 = ", "x2 = @param:x2 -> float_type, {2, 3}\nx1 = ")),
                     {}, error="submodule 'pointwise0' takes 3 parameters but the op has 2 inputs"))
cases.append(ir_case("pointwise_parameter_shape", "pointwise",
                     program("pointwise", [("x", (2, 3)), ("b", (2,))], ["x", "b"], "pointwise0",
                             pw_body.replace("x1 = @param:x1 -> float_type, {3}", "x1 = @param:x1 -> float_type, {3}")),
                     {}, error="submodule 'pointwise0' parameter 1 'x1' is float_type, {3}, {1} but input 1 is float_type, {2}"))
cases.append(ir_case("pointwise_returns_two_values", "pointwise",
                     program("pointwise", [("x", (2, 3))], ["x"], "pointwise0",
                             body_params([("x0", (2, 3))]) + "@0 = neg(x0)\n@1 = @return(@0,@0)\n"),
                     {}, error="submodule 'pointwise0' must return one static tensor, returns 2 values"))

# fused_reduce: softmax over axis 1 (max, sub, exp, sum, div).
sm_body = (body_params([("x0", (3, 4))]) +
           "@0 = reduce_max[axes={1}](x0)\n@1 = multibroadcast[out_lens={3, 4}](@0)\n@2 = sub(x0,@1)\n"
           "@3 = exp(@2)\n@4 = reduce_sum[axes={1}](@3)\n@5 = multibroadcast[out_lens={3, 4}](@4)\n"
           "@6 = div(@3,@5)\n@7 = @return(@6)\n")
x = r.standard_normal((3, 4)).astype(np.float32)
e = np.exp(x - x.max(axis=1, keepdims=True))
cases.append(ir_case("fused_reduce_softmax", "fused_reduce",
                     program("fused_reduce[axes={1}]", [("x", (3, 4))], ["x"], "fused_reduce0", sm_body),
                     {"x": x}, [e / e.sum(axis=1, keepdims=True)]))
# mean and variance over the last axis, keepdims=false, the variance's rsqrt added as a consumer.
mv_body = (body_params([("x0", (2, 5))]) +
           "@0 = reduce_mean[axes={-1},keepdims=false](x0)\n@1 = broadcast[axis=0,out_lens={2, 5}](@0)\n"
           "@2 = sub(x0,@1)\n@3 = mul(@2,@2)\n@4 = reduce_mean[axes={1},keepdims=false](@3)\n"
           "@5 = rsqrt(@4)\n@6 = @return(@5)\n")
x = r.standard_normal((2, 5)).astype(np.float32)
cases.append(ir_case("fused_reduce_mean_variance", "fused_reduce",
                     program("fused_reduce[axes={1}]", [("x", (2, 5))], ["x"], "fused_reduce0", mv_body),
                     {"x": x}, [1 / np.sqrt(x.var(axis=1))]))
cases.append(ir_case("fused_reduce_axes_differ", "fused_reduce",
                     program("fused_reduce[axes={0}]", [("x", (3, 4))], ["x"], "fused_reduce0", sm_body),
                     {}, error="submodule 'fused_reduce0' @0 = reduce_max reduces axes {1} but the op's axes are {0}"))
cases.append(ir_case("fused_reduce_without_reduction", "fused_reduce",
                     program("fused_reduce[axes={1}]", [("x", (2, 3))], ["x"], "fused_reduce0",
                             body_params([("x0", (2, 3))]) + "@0 = neg(x0)\n@1 = @return(@0)\n"),
                     {}, error="submodule 'fused_reduce0' has no reduction"))

# fused_epilogue: relu(dot(a, w) + broadcast(bias)) + residual.
ep_body = (body_params([("x0", (2, 4)), ("x1", (4, 3)), ("x2", (3,)), ("x3", (2, 3))]) +
           "@0 = dot(x0,x1)\n@1 = multibroadcast[out_lens={2, 3}](x2)\n@2 = add(@0,@1)\n@3 = relu(@2)\n"
           "@4 = add(@3,x3)\n@5 = @return(@4)\n")
a = r.standard_normal((2, 4)).astype(np.float32)
w = r.standard_normal((4, 3)).astype(np.float32)
bias = r.standard_normal(3).astype(np.float32)
res = r.standard_normal((2, 3)).astype(np.float32)
ep_main = [("a", (2, 4)), ("w", (4, 3)), ("bias", (3,)), ("res", (2, 3))]
cases.append(ir_case("fused_epilogue_dot_bias_relu_residual", "fused_epilogue",
                     program("fused_epilogue", ep_main, ["a", "w", "bias", "res"], "fused_epilogue0", ep_body),
                     {"a": a, "w": w, "bias": bias, "res": res}, [np.maximum(a @ w + bias, 0) + res]))
cases.append(ir_case("fused_epilogue_two_dots", "fused_epilogue",
                     program("fused_epilogue", [("a", (3, 3))], ["a"], "fused_epilogue0",
                             body_params([("x0", (3, 3))]) + "@0 = dot(x0,x0)\n@1 = dot(@0,x0)\n@2 = @return(@1)\n"),
                     {}, error="submodule 'fused_epilogue0' has a second dot; expected one dot, gemm or convolution"))
cases.append(ir_case("fused_epilogue_prologue", "fused_epilogue",
                     program("fused_epilogue", [("a", (3, 3))], ["a"], "fused_epilogue0",
                             body_params([("x0", (3, 3))]) + "@0 = neg(x0)\n@1 = dot(@0,x0)\n@2 = @return(@1)\n"),
                     {}, error="submodule 'fused_epilogue0' @1 = dot takes a computed input"))
cases.append(ir_case("fused_epilogue_no_contraction", "fused_epilogue",
                     program("fused_epilogue", [("a", (3, 3))], ["a"], "fused_epilogue0",
                             body_params([("x0", (3, 3))]) + "@0 = neg(x0)\n@1 = @return(@0)\n"),
                     {}, error="submodule 'fused_epilogue0' has no dot, gemm or convolution"))
cases.append(ir_case("fused_epilogue_returns_a_side_value", "fused_epilogue",
                     program("fused_epilogue", [("a", (3, 3))], ["a"], "fused_epilogue0",
                             body_params([("x0", (3, 3))]) + "@0 = dot(x0,x0)\n@1 = neg(x0)\n@2 = add(@0,@1)\n"
                             "@3 = @return(@1)\n"),
                     {}, error="submodule 'fused_epilogue0' returns a value that does not depend on its dot"))

write("fused", cases)
