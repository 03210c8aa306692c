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
