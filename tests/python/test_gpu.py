"""The Python module with torch.cuda tensors: inputs read on the device (zero copy through the
host), outputs written into caller CUDA tensors, each against PyTorch on fresh random inputs; the
ref target refuses CUDA tensors with kiln.RunError. Skips where torch has no CUDA or kiln no gpu
target. On the GPU machine `scripts/gpu-test.sh python DIR` runs it (also without pytest)."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import kiln

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or "gpu" not in kiln.built_targets():
    pytest.skip("needs torch with CUDA and kiln's gpu target", allow_module_level=True)

RNG = np.random.default_rng(11)
W = RNG.standard_normal((64, 32)).astype(np.float32)
B = RNG.standard_normal(32).astype(np.float32)


def dense_model():
    """y = relu(x @ W + B), x [8, 64]."""
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"], name="fc"),
             helper.make_node("Add", ["m", "B"], ["s"], name="bias"),
             helper.make_node("Relu", ["s"], ["y"], name="act")]
    graph = helper.make_graph(nodes, "dense", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 32])],
                              [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def compiled(target):
    p = kiln.parse_onnx(dense_model())
    p.compile(target)
    return p


def want(x):
    return torch.relu(x.double().cpu() @ torch.from_numpy(W).double() + torch.from_numpy(B).double())


def close(got, x):
    got = torch.as_tensor(got).double().cpu()
    assert torch.allclose(got, want(x), rtol=1e-4, atol=1e-4), (got - want(x)).abs().max()


def test_cuda_inputs_and_outputs():
    p = compiled("gpu")
    for seed in range(3):
        torch.manual_seed(seed)
        x = torch.randn(8, 64, device="cuda")
        close(p.run({"x": x})["y"], x)              # host numpy output
        y = torch.full((8, 32), float("nan"), device="cuda")
        out = p.run({"x": x}, outputs={"y": y})     # written on the device
        assert out["y"] is y
        close(y, x)
        y2 = torch.empty(8, 32, device="cuda")
        p.run({"x": x * 2}, outputs=[y2])           # a temporary: its stream work must finish first
        close(y2, x * 2)


def test_cuda_input_through_dlpack_only():
    class OnlyDlpack:   # a producer without __cuda_array_interface__
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    p = compiled("gpu")
    x = torch.randn(8, 64, device="cuda")
    close(p.run({"x": OnlyDlpack(x)})["y"], x)


def loop_model():
    """y = tanh(v) after 3 iterations of v <- v + 0.5 * v * v from v = x, x [8, 64]: a Loop, so the
    program runs an instruction at a time on the gpu."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Mul", ["v", "v"], ["sq"]),
         helper.make_node("Mul", ["sq", "half"], ["step"]),
         helper.make_node("Add", ["v", "step"], ["v_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [8, 64])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [8, 64])],
        [numpy_helper.from_array(np.array(0.5, np.float32), "half")])
    nodes = [helper.make_node("Loop", ["trips", "go", "x"], ["v"], body=body, name="loop"),
             helper.make_node("Tanh", ["v"], ["y"], name="act")]
    graph = helper.make_graph(nodes, "loop", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 64])],
                              [numpy_helper.from_array(np.array(3, np.int64), "trips"),
                               numpy_helper.from_array(np.array(True), "go")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_cuda_tensors_on_a_program_with_a_loop():
    p = kiln.parse_onnx(loop_model())
    p.compile("gpu")
    for seed in range(3):
        torch.manual_seed(seed)
        x = torch.rand(8, 64, device="cuda") * 0.5
        v = x.double().cpu()
        for _ in range(3):
            v = v + 0.5 * v * v
        want = torch.tanh(v)
        y = torch.full((8, 64), float("nan"), device="cuda")
        out = p.run({"x": x}, outputs={"y": y})
        assert out["y"] is y
        assert torch.allclose(y.double().cpu(), want, rtol=1e-5, atol=1e-6), (y.double().cpu() - want).abs().max()
        assert torch.allclose(torch.as_tensor(p.run({"x": x})["y"]).double(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(kiln.InputError, match="output 'y' computes"):
        p.run({"x": x}, outputs=[torch.empty(8, 63, device="cuda")])


def test_errors_name_the_buffer():
    p = compiled("gpu")
    with pytest.raises(kiln.InputError, match="input 'x' is float16, expected float32"):
        p.run({"x": torch.randn(8, 64, device="cuda", dtype=torch.float16)})
    with pytest.raises(kiln.RunError, match="must be contiguous"):
        p.run({"x": torch.randn(64, 8, device="cuda").t()})
    with pytest.raises(kiln.InputError, match="output 'y' computes"):
        p.run({"x": torch.randn(8, 64, device="cuda")}, outputs=[torch.empty(8, 31, device="cuda")])
    ref = compiled("ref")
    with pytest.raises(kiln.RunError, match="input 'x' is device memory"):
        ref.run({"x": torch.randn(8, 64, device="cuda")})


if __name__ == "__main__":
    for name, f in list(globals().items()):
        if name.startswith("test_"):
            f()
            print("passed", name)
