"""Writes node test cases for ONNX If, Loop and Scan features that the ONNX backend tests leave
out (branches reading different outer values, an If on an input value whose branches return
different shapes or do not all apply to the inputs, Loop without a trip count or a cond, a trip
count known only at run time, Scan axes and directions, opset 8 Scan with a batch, subgraphs
nested in subgraphs), in the layout of the ONNX backend node tests, with expected outputs from
onnx.reference.
Usage: .venv/bin/python tests/conformance/generate_control_node_data.py OUT_DIR
then:  build/tests/kiln_onnx_conformance --data OUT_DIR
"""
import os
import shutil
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

r = np.random.default_rng(3)
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def write_case(out, name, nodes, inputs, outputs, feeds_list, opset=17, initializers=(), expect=None):
    """inputs/outputs: value infos; feeds_list: one dict of input arrays per test data set;
    expect(feeds) gives the outputs where onnx.reference cannot."""
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    os.makedirs(d)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for k, feeds in enumerate(feeds_list):
        ds = os.path.join(d, f"test_data_set_{k}")
        os.makedirs(ds)
        results = expect(feeds) if expect else ReferenceEvaluator(model).run(None, feeds)
        for kind, names, values in (("input", [i.name for i in inputs], [feeds[i.name] for i in inputs]),
                                    ("output", [o.name for o in outputs], results)):
            for j, (n, a) in enumerate(zip(names, values)):
                with open(os.path.join(ds, f"{kind}_{j}.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())


def f32(*shape):
    return r.standard_normal(shape).astype(np.float32)


def if_cases(out):
    # The branches read different outer values (x, y in one; y, z in the other), a constant, and
    # y under a second name (Identity).
    then_g = helper.make_graph([helper.make_node("Add", ["x", "y"], ["t0"]), helper.make_node("Sub", ["y2", "c"], ["t1"])],
                               "then", [], [vi("t0", F, [2, 3]), vi("t1", F, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Mul", ["y", "z"], ["e0"]), helper.make_node("Neg", ["z"], ["e1"])],
                               "else", [], [vi("e0", F, [2, 3]), vi("e1", F, [2, 3])])
    node = helper.make_node("If", ["cond"], ["o0", "o1"], then_branch=then_g, else_branch=else_g)
    ins = [vi("cond", B, []), vi("x", F, [2, 3]), vi("y", F, [2, 3]), vi("z", F, [2, 3])]
    feeds = [{"cond": np.array(v), "x": f32(2, 3), "y": f32(2, 3), "z": f32(2, 3)} for v in (True, False)]
    write_case(out, "test_kiln_if_different_captures", [helper.make_node("Identity", ["y"], ["y2"]), node], ins, [vi("o0", F, [2, 3]), vi("o1", F, [2, 3])], feeds,
               initializers=[numpy_helper.from_array(f32(2, 3), "c")])


    # A constant cond: only the branch that runs applies to x's shape (the other reshapes 6
    # elements to 7).
    then_g = helper.make_graph([helper.make_node("Reshape", ["x", "s6"], ["t"])], "then", [], [vi("t", F, [6])])
    else_g = helper.make_graph([helper.make_node("Reshape", ["x", "s7"], ["e"])], "else", [], [vi("e", F, [7])])
    node = helper.make_node("If", ["cond"], ["o"], then_branch=then_g, else_branch=else_g)
    inits = [numpy_helper.from_array(np.array(True), "cond"), numpy_helper.from_array(np.array([6], np.int64), "s6"),
             numpy_helper.from_array(np.array([7], np.int64), "s7")]
    write_case(out, "test_kiln_if_constant_cond", [node], [vi("x", F, [2, 3])], [vi("o", F, [6])],
               [{"x": f32(2, 3)}], initializers=inits)


def sample_rate_cases(out):
    """An If on an input value (a sample rate) choosing between branches written for different
    sizes: 10 ms frames of a 30 ms signal, 160 samples at 16 kHz, 441 at 44.1 kHz. The frames'
    energies then go through a consumer outside the If."""
    sizes = np.array([160], np.int64), np.array([441], np.int64)

    def branch(name, frame):
        return helper.make_graph([helper.make_node("Reshape", ["x", f"shape_{frame}"], [f"f_{name}"]),
                                  helper.make_node("Mul", [f"f_{name}", f"f_{name}"], [f"e_{name}"])],
                                 name, [], [vi(f"e_{name}", F, [3, frame])])

    inits = [numpy_helper.from_array(np.array([3, 160], np.int64), "shape_160"),
             numpy_helper.from_array(np.array([3, 441], np.int64), "shape_441"),
             numpy_helper.from_array(np.array(16000, np.int64), "sr16k")]
    nodes = [helper.make_node("Equal", ["sr", "sr16k"], ["is16k"]),
             helper.make_node("If", ["is16k"], ["e"], then_branch=branch("at16k", 160),
                              else_branch=branch("at44k", 441)),
             helper.make_node("ReduceSum", ["e"], ["energy"], axes=[1], keepdims=0)]
    sr = lambda v: np.array(v, np.int64)
    # x has 480 samples: the 44.1 kHz branch does not apply to it, and is checked only if taken.
    write_case(out, "test_kiln_if_sample_rate_untaken_branch_ill_shaped", nodes, [vi("sr", I64, []), vi("x", F, [480])],
               [vi("energy", F, [3])], [{"sr": sr(16000), "x": f32(480)}], opset=11, initializers=inits)
    # x's length is known only at run time: both branches apply, the If's output is [3, 160..441].
    write_case(out, "test_kiln_if_sample_rate_dynamic_length", nodes, [vi("sr", I64, []), vi("x", F, ["n"])],
               [vi("energy", F, [3])], [{"sr": sr(16000), "x": f32(480)}, {"sr": sr(44100), "x": f32(1323)}],
               opset=11, initializers=inits)
    # The branches return a scalar and a [1] (as AffineGrid's function body does): the If's output
    # has any rank until it runs, and its consumers run when it has.
    then_g = helper.make_graph([helper.make_node("ReduceSum", ["x"], ["t"], keepdims=0)], "then", [], [vi("t", F, [])])
    else_g = helper.make_graph([helper.make_node("ReduceMax", ["x"], ["m"], axes=[0])], "else", [],
                               [vi("m", F, [1])])
    nodes = [helper.make_node("If", ["c"], ["v"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Add", ["v", "x"], ["y"]), helper.make_node("Shape", ["v"], ["rank_shape"]),
             helper.make_node("Size", ["rank_shape"], ["rank"])]
    write_case(out, "test_kiln_if_branch_ranks_differ", nodes, [vi("c", B, []), vi("x", F, [4])],
               [vi("y", F, [4]), vi("rank", I64, [])],
               [{"c": np.array(True), "x": f32(4)}, {"c": np.array(False), "x": f32(4)}], opset=11)


def loop_cases(out):
    # No trip count: acc += inc until sum(acc) reaches limit; inc and limit are outer values.
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "inc"], ["acc_out"]),
         helper.make_node("ReduceSum", ["acc_out"], ["s"], keepdims=0),
         helper.make_node("Less", ["s", "limit"], ["cond_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [3])],
        [vi("cond_out", B, []), vi("acc_out", F, [3]), vi("scan", F, [3])])
    node = helper.make_node("Loop", ["", "cond", "acc"], ["acc_final", "scans"], body=body)
    ins = [vi("cond", B, []), vi("acc", F, [3]), vi("inc", F, [3]), vi("limit", F, [])]
    feeds = [{"cond": np.array(True), "acc": np.zeros(3, np.float32), "inc": np.abs(f32(3)) + 0.5,
              "limit": np.array(6.0, np.float32)}]
    write_case(out, "test_kiln_loop_no_trip_count", [node], ins, [vi("acc_final", F, [3]), vi("scans", F, None)], feeds)

    # No cond, a trip count given at run time; the body reads the iteration number.
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["v_in", "fi"], ["t"]),
         helper.make_node("Add", ["v_in", "t"], ["v_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["t"], ["scan"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("v_in", F, [2])],
        [vi("cond_out", B, []), vi("v_out", F, [2]), vi("scan", F, [2])])
    node = helper.make_node("Loop", ["m", "", "v"], ["v_final", "scans"], body=body)
    ins = [vi("m", I64, []), vi("v", F, [2])]
    feeds = [{"m": np.array(n, np.int64), "v": f32(2)} for n in (4, 0)]

    def expect(feeds):   # onnx.reference runs no iteration when cond is absent
        v, scans = feeds["v"], []
        for i in range(int(feeds["m"])):
            t = v * np.float32(i)
            v = v + t
            scans.append(t)
        return [v, np.array(scans, np.float32).reshape(len(scans), 2)]

    write_case(out, "test_kiln_loop_runtime_trip_count_no_cond", [node], ins,
               [vi("v_final", F, [2]), vi("scans", F, None)], feeds, expect=expect)

    # An If inside the Loop body whose branch reads a value of the main graph.
    then_g = helper.make_graph([helper.make_node("Add", ["v_in", "outer"], ["b"])], "then", [], [vi("b", F, [2])])
    else_g = helper.make_graph([helper.make_node("Sub", ["v_in", "outer"], ["b2"])], "else", [], [vi("b2", F, [2])])
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Less", ["fi", "half"], ["first"]),
         helper.make_node("If", ["first"], ["v_out"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("v_in", F, [2])],
        [vi("cond_out", B, []), vi("v_out", F, [2])])
    node = helper.make_node("Loop", ["m", "cond", "v"], ["v_final"], body=body)
    ins = [vi("cond", B, []), vi("v", F, [2]), vi("outer", F, [2])]
    feeds = [{"cond": np.array(True), "v": f32(2), "outer": f32(2)}]
    inits = [numpy_helper.from_array(np.array(5, np.int64), "m"), numpy_helper.from_array(np.array(2.0, np.float32), "half")]
    write_case(out, "test_kiln_loop_nested_if_reads_main_graph", [node], ins, [vi("v_final", F, [2])], feeds,
               initializers=inits)


def scan_cases(out):
    # Two scan inputs along axes 1 (read in reverse) and 0; outputs along axis 1 (one reversed)
    # and 0; the body reads an outer value w.
    body = helper.make_graph(
        [helper.make_node("Mul", ["a", "w"], ["aw"]),
         helper.make_node("Add", ["s_in", "aw"], ["s_out"]),
         helper.make_node("Sub", ["s_out", "b"], ["y0"]),
         helper.make_node("Identity", ["a"], ["y1"])],
        "body", [vi("s_in", F, [2]), vi("a", F, [2]), vi("b", F, [2])],
        [vi("s_out", F, [2]), vi("y0", F, [2]), vi("y1", F, [2])])
    node = helper.make_node("Scan", ["s", "xa", "xb"], ["s_final", "ys0", "ys1"], body=body, num_scan_inputs=2,
                            scan_input_axes=[1, 0], scan_input_directions=[1, 0], scan_output_axes=[1, -2],
                            scan_output_directions=[1, 0])
    ins = [vi("s", F, [2]), vi("xa", F, [2, 4]), vi("xb", F, [4, 2]), vi("w", F, [2])]
    feeds = [{"s": f32(2), "xa": f32(2, 4), "xb": f32(4, 2), "w": f32(2)}]

    def expect(feeds):   # onnx.reference supports forward directions only
        s, y0, y1 = feeds["s"], [], []
        for t in range(4):
            a, b = feeds["xa"][:, 3 - t], feeds["xb"][t]
            s = s + a * feeds["w"]
            y0.append(s - b)
            y1.append(a)
        return [s, np.stack(y0[::-1], axis=1), np.stack(y1, axis=0)]

    write_case(out, "test_kiln_scan16_axes_directions", [node], ins,
               [vi("s_final", F, [2]), vi("ys0", F, [2, 4]), vi("ys1", F, [4, 2])], feeds, opset=16, expect=expect)

    # Opset 8: a batch of 2 (every input and output has it first), the scan input read in reverse.
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["y"])],
        "body", [vi("s_in", F, [3]), vi("x", F, [3])], [vi("s_out", F, [3]), vi("y", F, [3])])
    node = helper.make_node("Scan", ["", "s", "xs"], ["s_final", "ys"], body=body, num_scan_inputs=1, directions=[1])
    ins = [vi("s", F, [2, 3]), vi("xs", F, [2, 4, 3])]
    feeds = [{"s": f32(2, 3), "xs": f32(2, 4, 3)}]

    def expect(feeds):   # per batch entry: a running sum over the reversed sequence
        sums = feeds["s"][:, None, :] + np.cumsum(feeds["xs"][:, ::-1, :], axis=1)
        return [sums[:, -1, :], sums]

    write_case(out, "test_kiln_scan8_batch_reverse", [node], ins, [vi("s_final", F, [2, 3]), vi("ys", F, [2, 4, 3])],
               feeds, opset=8, expect=expect)


if __name__ == "__main__":
    if_cases(sys.argv[1])
    sample_rate_cases(sys.argv[1])
    loop_cases(sys.argv[1])
    scan_cases(sys.argv[1])
