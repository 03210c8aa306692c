"""The kiln Python module: parse, compile, run, shapes, arguments (buffer protocol, DLPack, torch
where present), verify, perf_report, ops lists, the ONNX backend API and the errors it raises."""
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import kiln
import kiln.onnx_backend as backend

RNG = np.random.default_rng(3)
W = RNG.standard_normal((4, 3)).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)


def mlp_model(batch="batch", op="Relu"):
    """y = act(x @ W + B) with x [batch, 4]; node names fc and act."""
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"], name="fc"),
             helper.make_node("Add", ["m", "B"], ["s"], name="bias"),
             helper.make_node(op, ["s"], ["y"], name="act")]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 3])],
                              [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def expected(x):
    return np.maximum(x @ W + B, 0)


@pytest.fixture
def model_path(tmp_path):
    path = tmp_path / "mlp.onnx"
    path.write_bytes(mlp_model().SerializeToString())
    return path


@pytest.fixture
def program(model_path):
    p = kiln.parse_onnx(model_path, dim_params={"batch": 2})
    p.compile()   # the default target: cpu without a GPU
    return p


def test_parse_compile_run(program):
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    out = program.run({"x": x})
    assert list(out) == ["y"]
    assert out["y"].dtype == np.float32
    np.testing.assert_allclose(out["y"], expected(x), rtol=1e-5, atol=1e-6)
    assert program.target in ("cpu", "gpu")


def test_parse_from_bytes_and_dynamic_range():
    nodes = [helper.make_node("Add", ["x", "B"], ["s"], name="bias"), helper.make_node("Relu", ["s"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
                              [numpy_helper.from_array(B, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    p = kiln.parse_onnx(model.SerializeToString(), dim_params={"batch": (1, 8)})
    shape = p.input_shapes()["x"]
    assert shape.dynamic and shape.ndim == 2
    assert (shape.dyn_dims[0].min, shape.dyn_dims[0].max, shape.dyn_dims[0].symbol) == (1, 8, "batch")
    p.compile("ref")
    for n in (1, 5):
        x = RNG.standard_normal((n, 3)).astype(np.float32)
        np.testing.assert_allclose(p.run({"x": x})["y"], np.maximum(x + B, 0), rtol=1e-6)
    with pytest.raises(kiln.InputError, match="input 'x' has lens {9, 3}"):
        p.run({"x": np.zeros((9, 3), np.float32)})


def test_input_dims_and_default_dim(model_path):
    p = kiln.parse_onnx(str(model_path), input_dims={"x": [3, 4]})
    assert p.input_shapes()["x"].lens == [3, 4]
    q = kiln.parse_onnx(model_path, default_dim=6)
    assert q.output_shapes()["y"].lens == [6, 3]
    assert q.input_names() == ["x"] and q.output_names() == ["y"]


def test_shapes_and_text_ir(program):
    s = program.input_shapes()["x"]
    assert (s.type, s.type_name, s.lens, s.strides) == ("float32", "float_type", [2, 4], [4, 1])
    assert s.dtype == np.float32 and s.elements() == 8 and s.bytes() == 32 and s.standard()
    assert str(s) == "float_type, {2, 4}, {4, 1}"
    text = str(program)
    assert "@return" in text and "relu" in text
    again = kiln.parse_text(text)
    assert str(again) == text


def test_print(program, capsys):
    program.print()
    assert "relu" in capsys.readouterr().out


def test_shape_constructor():
    s = kiln.Shape("float16", [2, 3], [1, 2])
    assert s.lens == [2, 3] and s.strides == [1, 2] and not s.standard()
    d = kiln.Shape(np.int64, [kiln.DynamicDim(1, 4, symbol="n"), 3])
    assert d.dynamic and d.dyn_dims[0].symbol == "n" and d.type == "int64"
    assert kiln.Shape("float32", [2]) == kiln.Shape(np.float32, [2])


def test_run_accepts_lists_and_strided_arrays(program):
    x = RNG.standard_normal((4, 2)).astype(np.float32).T   # transposed view: strides, no copy
    np.testing.assert_allclose(program.run({"x": x})["y"], expected(x), rtol=1e-5, atol=1e-6)
    lists = [[1, 2, 3, 4], [0, 0, 0, 0]]
    np.testing.assert_allclose(program.run({"x": lists})["y"], expected(np.array(lists, np.float32)), rtol=1e-5)


def test_outputs_do_not_alias_inputs():
    p = kiln.parse_text('x = @param:x -> float_type, {2}, {1}\n@0 = @return(x)\n')
    p.compile("ref")
    x = np.array([1, 2], np.float32)
    y = p.run({"x": x})["#output_0"]
    y[0] = 7
    assert x[0] == 1


def test_wrong_dtype_is_an_input_error(program):
    with pytest.raises(kiln.InputError, match=r"input 'x' is a float64 array, expected float32"):
        program.run({"x": np.zeros((2, 4))})


def test_wrong_shape_is_an_input_error(program):
    with pytest.raises(kiln.InputError, match=r"input 'x' has lens \{2, 5\}, expected float_type, \{2, 4\}"):
        program.run({"x": np.zeros((2, 5), np.float32)})
    with pytest.raises(ValueError):   # InputError is a ValueError too
        program.run({"x": np.zeros((3, 4), np.float32)})


def test_missing_and_unknown_inputs(program):
    with pytest.raises(kiln.InputError, match="missing input 'x'"):
        program.run({})
    with pytest.raises(kiln.InputError, match=r"unknown input 'z' \(the inputs are: x\)"):
        program.run({"x": np.zeros((2, 4), np.float32), "z": np.zeros(1, np.float32)})
    with pytest.raises(kiln.InputError, match="cannot convert"):
        program.run({"x": "not numbers"})


def test_unknown_target_names_the_built_ones(model_path):
    p = kiln.parse_onnx(model_path, default_dim=1)
    for target in ("tpu",):   # cpu is built everywhere, gpu wherever CUDA is
        with pytest.raises(kiln.TargetError, match=rf"target '{target}' is not built into this kiln \(built targets: .*ref"):
            p.compile(target)
    assert "ref" in kiln.built_targets()


def test_run_before_compile_and_compile_twice(model_path):
    p = kiln.parse_onnx(model_path, default_dim=1)
    with pytest.raises(kiln.RunError, match="not compiled"):
        p.run({"x": np.zeros((1, 4), np.float32)})
    p.compile()
    with pytest.raises(kiln.CompileError, match=f"already compiled for '{p.target}'"):
        p.compile("ref")


def test_corrupted_and_missing_files(tmp_path, model_path):
    bad = tmp_path / "bad.onnx"
    data = model_path.read_bytes()
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(kiln.ParseError, match="bad.onnx"):
        kiln.parse_onnx(bad, default_dim=1)
    with pytest.raises(kiln.ParseError, match="missing.onnx"):
        kiln.parse_onnx(tmp_path / "missing.onnx")
    with pytest.raises(kiln.ParseError):
        kiln.parse_onnx(b"\x08\x01garbage")
    with pytest.raises(kiln.ParseError, match="line 1"):
        kiln.parse_text("this is not IR")


def test_symbolic_dim_without_size(model_path):
    with pytest.raises(kiln.ParseError, match="'batch'"):
        kiln.parse_onnx(model_path)
    with pytest.raises(kiln.InputError, match="min > max"):
        kiln.parse_onnx(model_path, dim_params={"batch": (4, 2)})


def test_unknown_operator_names_the_node(tmp_path):
    data = mlp_model(op="NoSuchOp").SerializeToString()
    with pytest.raises(kiln.ParseError, match="act") as e:
        kiln.parse_onnx(data, default_dim=1)
    assert isinstance(e.value, kiln.Error) and isinstance(e.value, RuntimeError)
    p = kiln.parse_onnx(data, default_dim=1, skip_unknown_operators=True)
    p.compile("ref")
    with pytest.raises(kiln.RunError, match="act"):
        p.run({"x": np.zeros((1, 4), np.float32)})


def test_save_and_load(tmp_path, program, model_path):
    path = tmp_path / "mlp.kiln"
    program.save(path)
    loaded = kiln.load(str(path))
    assert loaded.target == program.target and loaded.output_names() == ["y"] and loaded.input_names() == ["x"]
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_array_equal(loaded.run({"x": x})["y"], program.run({"x": x})["y"])
    with pytest.raises(kiln.CompileError, match="already compiled"):
        loaded.compile("ref")
    fresh = kiln.parse_onnx(model_path, default_dim=1)
    with pytest.raises(kiln.CompileError, match="not compiled"):
        fresh.save(tmp_path / "fresh.kiln")


def test_load_errors(tmp_path, program, model_path):
    with pytest.raises(kiln.FileError, match="missing.kiln"):
        kiln.load(tmp_path / "missing.kiln")
    with pytest.raises(OSError):   # FileError is an OSError too
        kiln.load(model_path)       # an ONNX file is not a saved program
    path = tmp_path / "p.kiln"
    program.save(path)
    data = bytearray(path.read_bytes())
    (tmp_path / "short.kiln").write_bytes(data[: len(data) // 2])
    with pytest.raises(kiln.FileError, match="short.kiln"):
        kiln.load(tmp_path / "short.kiln")
    data[data.rindex(b"relu")] ^= 0x20   # inside the program section
    (tmp_path / "flipped.kiln").write_bytes(bytes(data))
    with pytest.raises(kiln.FileError, match="checksum"):
        kiln.load(tmp_path / "flipped.kiln")
    with pytest.raises(kiln.FileError):
        program.save(tmp_path / "no" / "such" / "dir.kiln")


def test_compile_options():
    o = kiln.CompileOptions(optimize=False, fast_math=False, exhaustive_tune=True, offload_copy=True, bf16=True)
    assert (o.optimize, o.fast_math, o.exhaustive_tune, o.offload_copy, o.precision) == (False, False, True, True, "bf16")
    assert kiln.CompileOptions().precision == "fp32"
    assert kiln.CompileOptions(fp16=True).precision == "fp16"
    with pytest.raises(kiln.InputError, match="fp16 or bf16, not both"):
        kiln.CompileOptions(fp16=True, bf16=True)
    p = kiln.parse_onnx(mlp_model(batch=2).SerializeToString())
    p.compile("ref", kiln.CompileOptions(optimize=False))
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(p.run({"x": x})["y"], expected(x), rtol=1e-5, atol=1e-6)


def test_argument_zero_copy_with_numpy():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = kiln.Argument(x)
    assert a.shape.lens == [2, 3] and a.shape.type == "float32"
    view = np.asarray(a)
    assert np.shares_memory(view, x)
    x[0, 0] = 42
    assert view[0, 0] == 42 and a.numpy()[0, 0] == 42
    mv = memoryview(a)
    assert mv.format == "f" and mv.shape == (2, 3)
    t = kiln.Argument(x.T)   # strided view stays a view
    assert t.shape.strides == [1, 3] and np.shares_memory(np.asarray(t), x)


def test_argument_dlpack_roundtrip_with_numpy():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    a = kiln.from_dlpack(x)
    assert a.shape.type == "int32" and a.shape.lens == [3, 4]
    y = np.from_dlpack(a)
    assert np.shares_memory(x, y)
    x[1, 1] = -7
    assert y[1, 1] == -7
    assert a.__dlpack_device__() == (1, 0)
    assert kiln.Argument.from_dlpack(x).shape.lens == [3, 4]


def test_argument_as_run_input(program):
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(program.run({"x": kiln.Argument(x)})["y"], expected(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(kiln.InputError, match="expected float32"):
        program.run({"x": kiln.Argument(np.zeros((2, 4), np.int32))})


def test_bfloat16_and_int4_through_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    p = kiln.parse_text('x = @param:x -> bf16_type, {3}, {1}\n@0 = add(x,x) -> bf16_type, {3}, {1}\n'
                        '@1 = @return(@0)\n')
    p.compile("ref")
    x = np.array([1.5, -2, 0.25], dtype=ml_dtypes.bfloat16)
    y = p.run({"x": x})["#output_0"]
    assert y.dtype == ml_dtypes.bfloat16 and y.astype(np.float32).tolist() == [3, -4, 0.5]
    q = kiln.Argument(np.array([-8, 7, 3], dtype=ml_dtypes.int4))
    assert q.shape.type == "int4" and q.numpy().astype(np.int8).tolist() == [-8, 7, 3]


def test_torch_tensors_when_present(program):
    torch = pytest.importorskip("torch")
    x = torch.randn(2, 4)
    a = kiln.from_dlpack(x)
    assert a.shape.lens == [2, 4]
    x[0, 0] = 5.0
    assert np.asarray(a)[0, 0] == 5.0
    out = program.run({"x": x})["y"]
    np.testing.assert_allclose(out, expected(x.numpy()), rtol=1e-5, atol=1e-6)
    back = torch.from_dlpack(kiln.Argument(np.ones((2, 2), np.float32)))
    assert back.sum().item() == 4


def test_verify_passes_and_reports_errors(model_path):
    p = kiln.parse_onnx(model_path, dim_params={"batch": 3})
    r = kiln.verify(p, target="ref", rtol=1e-3, atol=1e-5)
    assert r and r.passed and r.outputs[0].name == "y" and r.outputs[0].max_abs == 0
    o = r.outputs[0]
    assert (o.rtol, o.atol, o.rms_tol) == (1e-3, 1e-5, 1e-3)   # rms_tol by dtype: float32
    assert o.reason == "" and o.not_close == 0 and o.elements == 9
    assert "PASS" in str(r) and "RMS error 0" in str(r)
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    assert kiln.verify(p, {"x": x}, "ref", options=kiln.CompileOptions(optimize=True)).passed
    with pytest.raises(kiln.TargetError):
        kiln.verify(p, target="tpu")
    with pytest.raises(kiln.InputError, match="'x' has lens"):
        kiln.verify(p, {"x": np.zeros((2, 4), np.float32)})
    p.compile("ref")
    with pytest.raises(kiln.CompileError, match="program as parsed"):
        kiln.verify(p)


def test_verify_failure_names_the_worst_element(model_path):
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    fp16 = kiln.CompileOptions(fp16=True)
    p = kiln.parse_onnx(model_path, dim_params={"batch": 3})
    # On ref, whose fp16 results the test recomputes below (cpu computes in float32 without AVX512-FP16).
    ok = kiln.verify(p, {"x": x}, "ref", options=fp16)
    assert ok.passed and (ok.outputs[0].rtol, ok.outputs[0].atol, ok.outputs[0].rms_tol) == (4e-2, 4e-2, 8e-2)
    r = kiln.verify(p, {"x": x}, "ref", options=fp16, rtol=0, atol=1e-7, rms_tol=1e-7)
    assert not r and not r.outputs[0].passed and "FAILED" in str(r)
    o = r.outputs[0]
    assert (o.rtol, o.atol, o.rms_tol) == (0, 1e-7, 1e-7) and 0 < o.not_close <= o.elements == 9
    compiled = kiln.parse_onnx(model_path, dim_params={"batch": 3})
    compiled.compile("ref", fp16)
    got, want = compiled.run({"x": x})["y"], expected(x)
    diff = np.abs(got.astype(np.float64) - want)
    assert o.worst_index == np.unravel_index(np.argmax(diff), diff.shape)
    assert o.worst_got == got[o.worst_index]
    assert o.worst_ref == pytest.approx(want[o.worst_index], rel=1e-5)
    assert o.max_abs == pytest.approx(diff.max(), rel=1e-3) and o.rms > 0
    assert f"worst element [{o.worst_index[0]}, {o.worst_index[1]}]" in o.reason
    assert "not close" in o.reason and "worst element" in str(r)


def test_verify_counts_nan_and_inf():
    p = kiln.parse_text('x = @param:x -> float_type, {4}, {1}\n@0 = add(x,x) -> float_type, {4}, {1}\n'
                        '@1 = @return(@0)\n')
    x = np.array([1, np.nan, np.inf, -2], np.float32)
    r = kiln.verify(p, {"x": x})
    o = r.outputs[0]
    assert r.passed and (o.nan_got, o.nan_ref, o.inf_got, o.inf_ref) == (1, 1, 1, 1)
    assert "NaN: 1 got, 1 ref" in str(r)


def test_perf_report(program):
    r = program.perf_report(iterations=3)
    assert r.iterations == 3 and r.target == program.target and len(r.run_ms) == 3
    assert 0 < r.min_ms <= r.median_ms <= r.p90_ms <= r.p99_ms <= r.max_ms
    assert r.min_ms <= r.total_ms <= r.max_ms and r.rate == pytest.approx(1000 / r.total_ms)
    lines = [i.line for i in r.instructions]
    assert lines == str(program).split("\n\n")[0].splitlines()[1:-1]   # main as printed, but its return
    assert sum(i.ms for i in r.instructions) == pytest.approx(r.instructions_ms)
    assert sum(i.share for i in r.instructions) == pytest.approx(1)
    assert r.overhead_ms == pytest.approx(r.total_ms - r.instructions_ms)
    ops = {op: (ms, share) for op, ms, share in r.by_op}
    assert set(ops) == {i.op for i in r.instructions} and "@param" in ops
    assert [ms for ms, _ in ops.values()] == sorted((ms for ms, _ in ops.values()), reverse=True)
    assert sum(n for _, n in r.op_counts) == len(r.instructions) - 1   # instructions but the parameter
    text = str(r)
    assert "runs: mean" in text and "p99" in text and "per instruction:" in text and lines[-1] in text
    with pytest.raises(kiln.InputError, match="at least 1"):
        program.perf_report(iterations=0)
    with pytest.raises(kiln.RunError, match="not compiled"):
        kiln.parse_text('x = @param:x -> float_type, {2}, {1}\n@0 = @return(x)\n').perf_report()


def test_ops_lists():
    ops = kiln.ops()
    assert "convolution" in ops and "relu" in ops and ops == sorted(ops)
    onnx_ops = kiln.onnx_ops()
    assert "Conv" in onnx_ops and "com.microsoft:Gelu" in onnx_ops


def test_onnx_backend_api(model_path):
    assert backend.supports_device("CPU")
    assert backend.supports_device("CUDA") == ("gpu" in kiln.built_targets())
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    rep = backend.prepare(mlp_model(), "CPU")
    (y,) = rep.run([x])
    np.testing.assert_allclose(y, expected(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rep.run({"x": x[:2]})["y"], expected(x[:2]), rtol=1e-5, atol=1e-6)
    (z,) = backend.run_model(str(model_path), [x])
    np.testing.assert_allclose(z, expected(x), rtol=1e-5, atol=1e-6)
    node = helper.make_node("Relu", ["a"], ["b"])
    (r,) = backend.run_node(node, [np.array([-1.0, 2.0], np.float32)])
    assert r.tolist() == [0.0, 2.0]
    with pytest.raises(kiln.InputError, match="2 inputs given"):
        rep.run([x, x])


def test_readme_example_runs(tmp_path, model_path):
    readme = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
    text = open(readme).read()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    os.chdir(tmp_path)
    (tmp_path / "model.onnx").write_bytes(model_path.read_bytes())
    exec(compile(code, "README.md", "exec"), {})


def test_sequences_and_optionals_in_and_out():
    """A sequence input is a list of arrays and comes back as one; an optional is None or its value."""
    seq = helper.make_tensor_sequence_value_info
    nodes = [helper.make_node("SequenceInsert", ["s", "t"], ["grown"]),
             helper.make_node("SequenceLength", ["grown"], ["n"]),
             helper.make_node("OptionalHasElement", ["o"], ["has"])]
    graph = helper.make_graph(
        nodes, "seq",
        [seq("s", TensorProto.FLOAT, [2]), helper.make_tensor_value_info("t", TensorProto.FLOAT, [2]),
         helper.make_value_info("o", helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))],
        [seq("grown", TensorProto.FLOAT, None), helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_tensor_value_info("has", TensorProto.BOOL, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    p = kiln.parse_onnx(model.SerializeToString())
    p.compile("ref")
    a, b, t = (RNG.standard_normal(2).astype(np.float32) for _ in range(3))
    for o, has in ((None, False), (a, True)):
        out = p.run({"s": [a, b], "t": t, "o": o})
        assert isinstance(out["grown"], list) and len(out["grown"]) == 3
        for got, want in zip(out["grown"], [a, b, t]):
            np.testing.assert_array_equal(got, want)
        assert out["n"] == 3 and bool(out["has"]) == has
    with pytest.raises(kiln.InputError, match="input 's' element 1"):
        p.run({"s": [a, np.zeros(3, np.float32)], "t": t, "o": None})


def test_strings_in_and_out():
    """A string tensor is a numpy object array of str: in (str, bytes, or 'U' arrays) and out, on ref
    and cpu; a number where a string belongs is an input error naming the input."""
    nodes = [helper.make_node("StringConcat", ["a", "b"], ["ab"]),
             helper.make_node("Cast", ["x"], ["xs"], to=TensorProto.STRING),
             helper.make_node("Equal", ["a", "b"], ["same"])]
    graph = helper.make_graph(
        nodes, "strings",
        [helper.make_tensor_value_info("a", TensorProto.STRING, [2, 2]),
         helper.make_tensor_value_info("b", TensorProto.STRING, [2]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("ab", TensorProto.STRING, [2, 2]),
         helper.make_tensor_value_info("xs", TensorProto.STRING, [3]),
         helper.make_tensor_value_info("same", TensorProto.BOOL, [2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    a = np.array([["café", "x"], ["", "b"]], object)
    for target in [t for t in ("ref", "cpu") if t in kiln.built_targets()]:
        p = kiln.parse_onnx(model.SerializeToString())
        p.compile(target)
        for b in (np.array(["!", "b"], object), np.array(["!", "b"]), [b"!", b"b"]):
            out = p.run({"a": a, "b": b, "x": np.array([0.1, -2.0, np.inf], np.float32)})
            assert out["ab"].dtype == object
            assert out["ab"].tolist() == [["café!", "xb"], ["!", "bb"]]
            assert out["xs"].tolist() == ["0.1", "-2.0", "INF"]
            assert out["same"].tolist() == [[False, False], [False, True]]
        with pytest.raises(kiln.InputError, match="'b'"):
            p.run({"a": a, "b": np.zeros(2, np.float32), "x": np.zeros(3, np.float32)})
    (got,) = backend.run_node(helper.make_node("StringSplit", ["s"], ["y", "n"], delimiter="-"),
                              [np.array(["a-b", "c"], object)], opset_version=20)[:1]
    assert got.tolist() == [["a", "b"], ["c", ""]]
