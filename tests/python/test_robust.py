"""Bad input through the Python module: each gives a Python exception that says what was wrong,
never a crash or a silently wrong result."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import kiln


def relu_model():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="act")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.fixture
def program():
    p = kiln.parse_onnx(relu_model())
    p.compile("ref")
    return p


def test_verify_none_is_a_type_error():
    with pytest.raises(TypeError):
        kiln.verify(None)


def test_big_endian_arrays_are_read_by_value(program):
    x = np.array([[1.5, -2, 3], [-4, 5, -6]], dtype=">f4")
    np.testing.assert_array_equal(program.run({"x": x})["y"], np.maximum(x.astype(np.float32), 0))


def test_unknown_input_dims_names_are_an_error():
    with pytest.raises(kiln.ParseError, match=r"input_dims names 'X', which is not an input of the model \(inputs: x\)"):
        kiln.parse_onnx(relu_model(), input_dims={"X": [2, 3]})


@pytest.mark.parametrize("tol", ["rtol", "atol", "rms_tol"])
def test_negative_tolerances_are_an_error(tol):
    p = kiln.parse_onnx(relu_model())
    with pytest.raises(kiln.Error, match=rf"{tol} is -1; a tolerance must be 0 or more"):
        kiln.verify(p, **{tol: -1.0})


def test_shape_elements_overflow_is_an_error():
    with pytest.raises(kiln.Error, match=r"its element count exceeds 2\^63"):
        kiln.Shape("float32", [2**40, 2**40, 2**40])


def endless_loop_model():
    """y = Loop(M=2**62, cond=True, x), each iteration negating x: runs until cancelled."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"], name="keep_going"),
         helper.make_node("Neg", ["v_in"], ["v_out"], name="flip")], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [3])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "cond", "x"], ["y"], name="endless", body=body)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
        [helper.make_tensor("M", TensorProto.INT64, [], [2**62]), helper.make_tensor("cond", TensorProto.BOOL, [], [True])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_cancel_from_another_thread_stops_a_run():
    import threading
    p = kiln.parse_onnx(endless_loop_model())
    p.compile("ref")
    timer = threading.Timer(0.2, p.cancel)
    timer.start()
    with pytest.raises(kiln.CancelledError, match=r"\(node 'endless'\): iteration \d+: .*: cancelled"):
        p.run({"x": np.array([1, -2, 3], np.float32)})
    timer.join()
