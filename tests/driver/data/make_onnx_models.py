"""Writes the small ONNX models, .npy files and test data of the driver tests (tests/driver/
driver_onnx_test.cpp) into tests/driver/data/onnx/, with the outputs numpy computes for them.
The files are committed; run this again only to change them:

    /work/main/.venv/bin/python tests/driver/data/make_onnx_models.py

Needs onnx (1.23.2) and numpy. Everything is seeded, so a rerun writes the same bytes.
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx")
F32 = np.float32


def save_model(graph, name, opset=17, domains=(), infer_shapes=False):
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="kiln driver tests")
    model.ir_version = 8
    if infer_shapes:   # value_info for every intermediate, as exporters write
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.save(model, os.path.join(OUT, name))
    return model


def npy(name, array):
    np.save(os.path.join(OUT, name), array)


def mlp(rng):
    """x {batch, 4} -> MatMul 4x8 -> Add -> Relu -> MatMul 8x3 -> Add -> y; Softmax(y) -> out/probs.

    The second output's name has a '/', which --save-outputs turns into '_'. The intermediates'
    value_info lets kiln parse the model with a range for the batch (--dim-param batch=1:64)."""
    w1 = rng.standard_normal((4, 8)).astype(F32)
    b1 = rng.standard_normal(8).astype(F32)
    w2 = rng.standard_normal((8, 3)).astype(F32)
    b2 = rng.standard_normal(3).astype(F32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="fc1_bias"),
        helper.make_node("Relu", ["h1"], ["h2"], name="relu"),
        helper.make_node("MatMul", ["h2", "w2"], ["h3"], name="fc2"),
        helper.make_node("Add", ["h3", "b2"], ["y"], name="fc2_bias"),
        helper.make_node("Softmax", ["y"], ["out/probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3]),
         helper.make_tensor_value_info("out/probs", TensorProto.FLOAT, ["batch", 3])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))])
    save_model(graph, "mlp.onnx", infer_shapes=True)

    def forward(x):
        y = (np.maximum(x @ w1 + b1, 0) @ w2 + b2).astype(F32)
        e = np.exp(y - y.max(axis=1, keepdims=True))
        return y, (e / e.sum(axis=1, keepdims=True)).astype(F32)

    x = rng.uniform(-1, 1, (2, 4)).astype(F32)
    y, probs = forward(x)
    npy("mlp_x.npy", x)
    npy("mlp_y.npy", y)
    npy("mlp_probs.npy", probs)
    # Inputs that must be refused: a fixed dim differs, the dtype differs, Fortran order.
    npy("mlp_x_5cols.npy", rng.uniform(-1, 1, (2, 5)).astype(F32))
    npy("mlp_x_f64.npy", x.astype(np.float64))
    npy("mlp_x_fortran.npy", np.asfortranarray(rng.uniform(-1, 1, (4, 4)).astype(F32)))
    npy("mlp_x_big_endian.npy", x.astype(">f4"))
    with open(os.path.join(OUT, "mlp_x_v2.npy"), "wb") as f:   # format version 2.0: a 4-byte header length
        np.lib.format.write_array(f, x, version=(2, 0))

    # An ONNX test_data_set folder with a batch of 3 (the test data sizes the batch dim).
    data = os.path.join(OUT, "mlp_test_data", "test_data_set_0")
    shutil.rmtree(os.path.dirname(data), ignore_errors=True)
    os.makedirs(data)
    tx = rng.uniform(-1, 1, (3, 4)).astype(F32)
    for name, a in (("input_0", tx),) + tuple(zip(("output_0", "output_1"), forward(tx))):
        proto = numpy_helper.from_array(a, {"input_0": "x", "output_0": "y", "output_1": "out/probs"}[name])
        with open(os.path.join(data, name + ".pb"), "wb") as f:
            f.write(proto.SerializeToString())


def unsupported():
    """Relu, then two ops kiln does not know (named nodes, two domains)."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu_0"),
        helper.make_node("Frobnicate", ["a"], ["b"], name="frob_1"),
        helper.make_node("Twiddle", ["b"], ["y"], name="twiddle_2", domain="com.example"),
    ]
    graph = helper.make_graph(nodes, "unsupported",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    save_model(graph, "unsupported.onnx", domains=("com.example",))


def external_data(rng):
    """y = x * w with w stored in ext.onnx.data next to the model."""
    w = rng.uniform(-2, 2, (2, 3)).astype(F32)
    graph = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["y"], name="scale")], "ext",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                              [numpy_helper.from_array(w, "w")])
    opsets = [helper.make_opsetid("", 17)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="kiln driver tests")
    model.ir_version = 8
    convert_model_to_external_data(model, all_tensors_to_one_file=True, location="ext.onnx.data",
                                   size_threshold=0)
    data = os.path.join(OUT, "ext.onnx.data")
    if os.path.exists(data):   # onnx.save appends to an existing data file
        os.remove(data)
    onnx.save(model, os.path.join(OUT, "ext.onnx"))
    x = rng.uniform(-1, 1, (2, 3)).astype(F32)
    npy("ext_x.npy", x)
    npy("ext_y.npy", (x * w).astype(F32))


TYPES = {  # input name: numpy dtype, shape
    "t_f16": (np.float16, (2, 3)),
    "t_f64": (np.float64, (3,)),
    "t_i8": (np.int8, (2, 2)),
    "t_u16": (np.uint16, (4,)),
    "t_i64": (np.int64, (2, 1, 2)),
    "t_bool": (np.bool_, (5,)),
    "t_scalar": (np.float32, ()),
}


def types(rng):
    """Identity for one input of each dtype: --save-outputs writes back the bytes --input read."""
    nodes, inputs, outputs = [], [], []
    for name, (dt, shape) in TYPES.items():
        elem = helper.np_dtype_to_tensor_dtype(np.dtype(dt))
        out = "o" + name[1:]
        nodes.append(helper.make_node("Identity", [name], [out], name="id" + name[1:]))
        inputs.append(helper.make_tensor_value_info(name, elem, list(shape)))
        outputs.append(helper.make_tensor_value_info(out, elem, list(shape)))
        if dt == np.bool_:
            a = rng.integers(0, 2, shape).astype(dt)
        elif np.issubdtype(dt, np.integer):
            info = np.iinfo(dt)
            a = rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
        else:
            a = rng.uniform(-10, 10, shape).astype(dt)
        npy("types_" + name + ".npy", a)
    save_model(helper.make_graph(nodes, "types", inputs, outputs), "types.onnx")


def bf16():
    """An output numpy has no dtype for."""
    graph = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], name="to_bf16", to=TensorProto.BFLOAT16)],
                              "bf16", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [2])])
    save_model(graph, "bf16.onnx")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20240611)
    mlp(rng)
    unsupported()
    external_data(rng)
    types(rng)
    bf16()
    with open(os.path.join(OUT, "not_npy.npy"), "w") as f:
        f.write("this is not a numpy file\n")
    with open(os.path.join(OUT, "mlp_x.npy"), "rb") as f, open(os.path.join(OUT, "truncated.npy"), "wb") as g:
        g.write(f.read()[:-5])


if __name__ == "__main__":
    main()
