"""Cases for src/ops/control.cpp (if, loop), written as text IR with named inputs; the expected
outputs are computed by running the same control flow in numpy."""
import numpy as np
from caselib import rng, tensor, write

r = rng(7)
cases = []


def ir_case(name, op, ir, inputs, outputs=None, error=None):
    c = {"name": name, "op": op, "ir": ir, "inputs": {k: tensor(v) for k, v in inputs.items()}}
    if error is None:
        c["outputs"] = [tensor(o) for o in outputs]
    else:
        c["error"] = error
    return c


def branches(t, then_body, else_body):
    params = f"a = @param:a -> {t}, {{2, 3}}\nb = @param:b -> {t}, {{2, 3}}\n"
    return (f'\nmodule: "then_b"\n{params}{then_body}'
            f'\nmodule: "else_b"\n{params}{else_body}')


def if_program(t, cond_lens, then_body, else_body):
    cond = "{}" if not cond_lens else "{" + ", ".join(map(str, cond_lens)) + "}"
    return (f'module: "main"\n'
            f'c = @param:c -> bool_type, {cond}\n'
            f'x = @param:x -> {t}, {{2, 3}}\n'
            f'y = @param:y -> {t}, {{2, 3}}\n'
            f'@0 = if(c,x,y), [then_b, else_b]\n'
            f'@1 = @return(@0)\n' + branches(t, then_body, else_body))


# The else branch returns its parameter itself: a column-major input comes back in standard layout.
then_body = "@0 = add(a,b)\n@1 = neg(a)\n@2 = @return(@0,@1)\n"
else_body = "@0 = mul(a,b)\n@1 = @return(@0,b)\n"
x = r.standard_normal((2, 3)).astype(np.float32)
y = r.standard_normal((2, 3)).astype(np.float32)
for cond, lens in ((True, ()), (False, ()), (True, (1,)), (False, (1,))):
    name = f"if_{'then' if cond else 'else'}" + ("_1_element_cond" if lens else "")
    outs = [x + y, -x] if cond else [x * y, y]
    cases.append(ir_case(name, "if", if_program("float_type", lens, then_body, else_body),
                         {"c": np.array(cond).reshape(lens), "x": x, "y": y}, outs))
xd, yd = r.standard_normal((2, 3)), r.standard_normal((2, 3))
cases.append(ir_case("if_then_f64", "if", if_program("double_type", (), then_body, else_body),
                     {"c": np.array(True), "x": xd, "y": yd}, [xd + yd, -xd]))

# int4 values travel packed into the branch and back out.
xi = r.integers(-8, 8, (2, 3)).astype(np.int8)
yi = r.integers(-8, 8, (2, 3)).astype(np.int8)
int4_ir = if_program("int4_type", (), "@0 = @return(a)\n", "@0 = @return(b)\n")
for cond in (True, False):
    c = ir_case(f"if_int4_{'then' if cond else 'else'}", "if", int4_ir,
                {"c": np.array(cond), "x": xi, "y": yi}, [xi if cond else yi])
    for k in ("x", "y"):
        c["inputs"][k]["type"] = "int4"
    c["outputs"][0]["type"] = "int4"
    cases.append(c)

# Branches that return different dims or ranks: the output's type is their join (ranges, or any
# rank), and the branch that runs gives the value its shape.
for name, else_body, else_out in (
        ("if_branch_dims_differ", "@0 = transpose[permutation={1, 0}](b)\n@1 = @return(@0)\n", lambda v: v.T),
        ("if_branch_ranks_differ", "@0 = reshape[dims={6}](b)\n@1 = @return(@0)\n", lambda v: v.reshape(6))):
    for cond in (True, False):
        cases.append(ir_case(f"{name}_{'then' if cond else 'else'}", "if",
                             if_program("float_type", (), "@0 = @return(a)\n", else_body),
                             {"c": np.array(cond), "x": x, "y": y}, [x if cond else else_out(y)]))
cases.append(ir_case("if_branch_types_differ", "if",
                     if_program("float_type", (), "@0 = @return(a)\n",
                                "@0 = convert[target_type=double_type](b)\n@1 = @return(@0)\n"),
                     {}, error="branches return different types: output 0 is float_type, {2, 3}"))
cases.append(ir_case("if_branch_count_differs", "if",
                     if_program("float_type", (), "@0 = @return(a,b)\n", "@0 = @return(b)\n"),
                     {}, error="branch 'then_b' returns 2 values but 'else_b' returns 1"))
cases.append(ir_case("if_cond_not_bool", "if",
                     if_program("float_type", (), "@0 = @return(a)\n", "@0 = @return(b)\n")
                     .replace("c = @param:c -> bool_type", "c = @param:c -> float_type"),
                     {}, error="input 0 (cond) is float_type, {}, {}; expected a bool_type scalar"))
cases.append(ir_case("if_cond_two_elements", "if",
                     if_program("float_type", (2,), "@0 = @return(a)\n", "@0 = @return(b)\n"),
                     {}, error="input 0 (cond) is bool_type, {2}, {1}; expected a bool_type scalar"))
cases.append(ir_case("if_branch_parameters", "if",
                     'c = @param:c -> bool_type, {}\nx = @param:x -> float_type, {2, 3}\n'
                     '@0 = if(c,x), [then_b, else_b]\n@1 = @return(@0)\n' +
                     branches("float_type", "@0 = @return(a)\n", "@0 = @return(a)\n"),
                     {}, error="then branch 'then_b' takes 2 parameters; expected 1"))


def loop_program(max_iterations, carried, body, cond_lens=()):
    """carried: [(name, shape text)]; body: instructions after the body's parameters."""
    cond = "{" + ", ".join(map(str, cond_lens)) + "}"
    params = "".join(f"{n} = @param:{n} -> {s}\n" for n, s in carried)
    names = ",".join(n for n, _ in carried)
    return (f'n = @param:n -> int64_type, {{}}\n'
            f'c = @param:c -> bool_type, {cond}\n' + params +
            f'@0 = loop[max_iterations={max_iterations}](n,c,{names}), [body]\n'
            f'@1 = @return(@0)\n'
            f'\nmodule: "body"\n'
            f'i = @param:i -> int64_type, {{}}\n'
            f'cond = @param:cond -> bool_type, {cond}\n' + params + body)


# A running sum acc += inc * i, scanned: the iteration number, the carried values and a scan output.
sum_body = ("@0 = convert[target_type=float_type](i)\n@1 = mul(inc,@0)\n@2 = add(acc,@1)\n"
            "@3 = @return(cond,@2,inc,@2)\n")
sum_carried = [("acc", "float_type, {3}"), ("inc", "float_type, {3}")]
acc0 = r.standard_normal(3).astype(np.float32)
inc = r.standard_normal(3).astype(np.float32)
for trips in (4, 1, 0):
    acc, scan = acc0.copy(), []
    for i in range(trips):
        acc = (acc + inc * np.float32(i)).astype(np.float32)
        scan.append(acc)
    scan = np.array(scan, np.float32).reshape(trips, 3)
    cases.append(ir_case(f"loop_running_sum_{trips}_trips", "loop", loop_program(8, sum_carried, sum_body),
                         {"n": np.array(trips, np.int64), "c": np.array(True), "acc": acc0, "inc": inc},
                         [acc, inc, scan]))

# v doubles until it reaches 100: the body's cond stops the loop before the trip count does.
double_body = ("@0 = @literal{2} -> int64_type, {}, {}\n@1 = mul(v,@0)\n"
               "@2 = @literal{100} -> int64_type, {}, {}\n@3 = less(@1,@2)\n@4 = @return(@3,@1,@1)\n")


def doubling(v, trips, cond):
    scan = []
    for _ in range(trips):
        if not cond:
            break
        v *= 2
        scan.append(v)
        cond = v < 100
    return v, np.array(scan, np.int64)


for name, trips, cond in (("loop_stops_on_cond", 100, True), ("loop_stops_on_trip_count", 3, True),
                          ("loop_cond_false_at_start", 100, False)):
    v, scan = doubling(3, trips, cond)
    cases.append(ir_case(name, "loop", loop_program(10, [("v", "int64_type, {}")], double_body, (1,)),
                         {"n": np.array(trips, np.int64), "c": np.array([cond]), "v": np.array(3, np.int64)},
                         [np.array(v, np.int64), scan]))

cases.append(ir_case("loop_past_max_iterations", "loop", loop_program(2, sum_carried, sum_body),
                     {"n": np.array(5, np.int64), "c": np.array(True), "acc": acc0, "inc": inc},
                     error="the loop runs past max_iterations=2"))
cases.append(ir_case("loop_cond_not_bool", "loop",
                     loop_program(8, sum_carried, sum_body)
                     .replace("c = @param:c -> bool_type", "c = @param:c -> int32_type"),
                     {}, error="input 1 (cond) is int32_type, {}, {}; expected a bool_type scalar"))
cases.append(ir_case("loop_carried_shape_changes", "loop",
                     loop_program(8, sum_carried, "@0 = reduce_sum[axes={0}](acc)\n@1 = @return(cond,@0,inc)\n"),
                     {}, error="body output 1 (carried value 0) is float_type, {1}, {1} but its body parameter is float_type, {3}"))
cases.append(ir_case("loop_body_returns_too_few", "loop",
                     loop_program(8, sum_carried, "@0 = @return(cond,acc)\n"),
                     {}, error="body 'body' returns 2 values; expected cond, 2 carried values"))
cases.append(ir_case("loop_negative_max_iterations", "loop", loop_program(-1, sum_carried, sum_body),
                     {}, error="max_iterations=-1 is negative"))

write("control", cases)
