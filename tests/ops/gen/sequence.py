"""Cases for src/ops/sequence.cpp (sequences and optionals), written as text IR whose inputs and
outputs are tensors: each program builds sequences or optionals from its inputs and reads them
back. The expected outputs are the same list operations done in numpy on random inputs."""
import numpy as np
from caselib import rng, tensor, write

r = rng(15)
cases = []


def ir_case(name, op, ir, inputs, outputs=None, error=None):
    c = {"name": name, "op": op, "ir": ir, "inputs": {k: tensor(v) for k, v in inputs.items()}}
    if error is None:
        c["outputs"] = [tensor(o) for o in outputs]
    else:
        c["error"] = error
    return c


def params(**kinds):
    return "".join(f"{n} = @param:{n} -> {t}\n" for n, t in kinds.items())


F23 = "float_type, {2, 3}"
x, y, z = (r.standard_normal((2, 3)).astype(np.float32) for _ in range(3))
xyz = {"x": x, "y": y, "z": z}

# SequenceConstruct then SequenceAt, from the front and from the back (negative position).
for pos in (1, -1, -3):
    ir = (params(x=F23, y=F23, z=F23, p="int64_type, {}") +
          "@0 = sequence_construct(x,y,z)\n@1 = sequence_at(@0,p)\n@2 = @return(@1)\n")
    want = [x, y, z][pos]
    cases.append(ir_case(f"construct_at_{pos}".replace("-", "neg"), "sequence_construct" if pos == 1 else "sequence_at",
                         ir, {**xyz, "p": np.array(pos, np.int64)}, [want]))
ir = params(x=F23, y=F23, p="int64_type, {}") + "@0 = sequence_construct(x,y)\n@1 = sequence_at(@0,p)\n@2 = @return(@1)\n"
cases.append(ir_case("at_out_of_range", "sequence_at", ir, {"x": x, "y": y, "p": np.array(2, np.int64)},
                     error="position 2 is out of range for a sequence of 2"))

# SequenceEmpty, SequenceInsert at the end and at the front, SequenceLength.
ir = (params(x=F23, y=F23, p="int32_type, {}") +
      "@0 = sequence_construct(x)\n@1 = sequence_insert(@0,y,p)\n@2 = sequence_insert(@1,x)\n"
      "@3 = sequence_length(@2)\n@4 = concat_from_sequence[axis=0](@2)\n@5 = @return(@3,@4)\n")
for op in ("sequence_insert", "sequence_length"):
    cases.append(ir_case(f"insert_front_{op}", op, ir, {"x": x, "y": y, "p": np.array(0, np.int32)},
                         [np.array(3, np.int64), np.concatenate([y, x, x], 0)]))
# An empty sequence has elements of unknown rank: what it holds is only counted here.
ir = (params(x=F23) + "@0 = sequence_empty[type=float_type]()\n@1 = sequence_length(@0)\n@2 = sequence_insert(@0,x)\n"
      "@3 = sequence_length(@2)\n@4 = @return(@1,@3)\n")
cases.append(ir_case("empty_then_insert", "sequence_empty", ir, {"x": x}, [np.array(0, np.int64), np.array(1, np.int64)]))
ir = (params(x=F23) + "@0 = sequence_empty[type=float_type]()\n@1 = sequence_insert(@0,x)\n"
      "@2 = sequence_insert(@1,x)\n@3 = sequence_erase(@2)\n@4 = sequence_erase(@3)\n@5 = sequence_length(@4)\n"
      "@6 = @return(@5)\n")
cases.append(ir_case("erase_to_empty", "sequence_erase", ir, {"x": x}, [np.array(0, np.int64)]))
ir = params(x=F23) + "@0 = sequence_empty[type=float_type]()\n@1 = sequence_erase(@0)\n@2 = sequence_length(@1)\n@3 = @return(@2)\n"
cases.append(ir_case("erase_from_empty", "sequence_erase", ir, {"x": x}, error="cannot erase from an empty sequence"))
ir = params(x=F23, y="int64_type, {2, 3}") + "@0 = sequence_construct(x)\n@1 = sequence_insert(@0,y)\n@2 = @return(@1)\n"
cases.append(ir_case("insert_other_type", "sequence_insert", ir, {"x": x, "y": np.zeros((2, 3), np.int64)},
                     error="input 1 is int64_type but the sequence holds float_type"))

# SequenceErase at a position, then ConcatFromSequence along an axis and stacked on a new axis.
ir = (params(x=F23, y=F23, z=F23, p="int64_type, {}") +
      "@0 = sequence_construct(x,y,z)\n@1 = sequence_erase(@0,p)\n@2 = concat_from_sequence[axis=1](@1)\n"
      "@3 = concat_from_sequence[axis=-1,new_axis=1](@0)\n@4 = @return(@2,@3)\n")
for op in ("sequence_erase", "concat_from_sequence"):
    cases.append(ir_case(f"erase_concat_{op}", op, ir, {**xyz, "p": np.array(-2, np.int64)},
                         [np.concatenate([x, z], 1), np.stack([x, y, z], -1)]))

# SplitToSequence: by a scalar length (the last piece shorter), by listed lengths, and into
# length-1 pieces squeezed away (keepdims=0).
d = r.standard_normal((3, 7)).astype(np.float32)
D = "float_type, {3, 7}"
ir = (params(d=D, s="int64_type, {}", p="int64_type, {}") +
      "@0 = split_to_sequence[axis=1](d,s)\n@1 = sequence_length(@0)\n@2 = sequence_at(@0,p)\n"
      "@3 = concat_from_sequence[axis=1](@0)\n@4 = @return(@1,@2,@3)\n")
cases.append(ir_case("split_scalar", "split_to_sequence", ir, {"d": d, "s": np.array(3, np.int64), "p": np.array(-1, np.int64)},
                     [np.array(3, np.int64), d[:, 6:7], d]))
ir = (params(d=D, s="int64_type, {3}", p="int64_type, {}") +
      "@0 = split_to_sequence[axis=-1](d,s)\n@1 = sequence_at(@0,p)\n@2 = @return(@1)\n")
cases.append(ir_case("split_lengths", "split_to_sequence", ir, {"d": d, "s": np.array([2, 0, 5], np.int64), "p": np.array(2, np.int64)},
                     [d[:, 2:7]]))
cases.append(ir_case("split_lengths_bad_sum", "split_to_sequence", ir,
                     {"d": d, "s": np.array([2, 2, 2], np.int64), "p": np.array(0, np.int64)},
                     error="split sums to 6 but the axis has 7"))
ir = (params(d=D, p="int64_type, {}") +
      "@0 = split_to_sequence[axis=0,keepdims=0](d)\n@1 = sequence_at(@0,p)\n@2 = @return(@1)\n")
cases.append(ir_case("split_ones_squeezed", "split_to_sequence", ir, {"d": d, "p": np.array(1, np.int64)}, [d[1]]))
di = r.integers(-100, 100, (4, 2)).astype(np.int32)
ir = (params(d="int32_type, {4, 2}") +
      "@0 = split_to_sequence[axis=0](d)\n@1 = concat_from_sequence[axis=1,new_axis=0](@0)\n@2 = @return(@1)\n")
cases.append(ir_case("split_concat_int32", "split_to_sequence", ir, {"d": di}, [di.reshape(1, 8)]))

# SequenceMap: the body adds a tensor to each element and also returns each element's shape.
ir = ('module: "main"\n' + params(x=F23, y=F23, t="float_type, {3}") +
      "@0 = sequence_construct(x,y)\n@1 = sequence_map(@0,t), [body]\n@2 = get_tuple_elem[index=0](@1)\n"
      "@3 = get_tuple_elem[index=1](@1)\n@4 = concat_from_sequence[axis=0,new_axis=1](@2)\n"
      "@5 = concat_from_sequence[axis=0,new_axis=1](@3)\n@6 = @return(@4,@5)\n\n"
      'module: "body"\n' + params(e=F23, b="float_type, {3}") + "@0 = add(e,b)\n@1 = shape_of(e)\n@2 = @return(@0,@1)\n")
t = r.standard_normal(3).astype(np.float32)
cases.append(ir_case("map_add_shape", "sequence_map", ir, {"x": x, "y": y, "t": t},
                     [np.stack([x + t, y + t]), np.array([[2, 3], [2, 3]], np.int64)]))

# Optional: a value, and none (typed by its attribute).
ir = (params(x=F23) + "@0 = optional(x)\n@1 = optional_has_element(@0)\n@2 = optional_get_element(@0)\n"
      "@3 = optional[type={type: float_type, lens: {2, 3}}]()\n@4 = optional_has_element(@3)\n@5 = @return(@1,@2,@4)\n")
for op in ("optional", "optional_has_element", "optional_get_element"):
    cases.append(ir_case(f"optional_{op}", op, ir, {"x": x}, [np.array(True), x, np.array(False)]))
ir = params(x=F23) + "@0 = optional[type={type: float_type, lens: {2, 3}}]()\n@1 = optional_get_element(@0)\n@2 = @return(@1)\n"
cases.append(ir_case("optional_get_none", "optional_get_element", ir, {"x": x}, error="the optional is empty"))

# A loop carries a sequence that grows by one element per iteration (its type says nothing of
# its length); the result is read back as the stacked elements.
ir = ('module: "main"\n' + params(n="int64_type, {}", c="bool_type, {}", x=F23) +
      "@0 = sequence_construct(x)\n@1 = loop[max_iterations=10](n,c,@0,x), [body]\n"
      "@2 = get_tuple_elem[index=0](@1)\n@3 = concat_from_sequence[axis=0,new_axis=1](@2)\n@4 = @return(@3)\n\n"
      'module: "body"\n' + params(i="int64_type, {}", k="bool_type, {}", s="sequence_type, {float_type, {2, 3}}", v=F23) +
      "@0 = convert[target_type=float_type](i)\n@1 = add(v,@0)\n@2 = sequence_insert(s,@1)\n@3 = @return(k,@2,v)\n")
cases.append(ir_case("loop_grows_sequence", "sequence_insert", ir,
                     {"n": np.array(3, np.int64), "c": np.array(True), "x": x}, [np.stack([x, x, x + 1, x + 2])]))

write("sequence", cases)
