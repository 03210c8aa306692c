"""kiln as an ONNX backend (the ``onnx.backend.base`` API).

    import kiln.onnx_backend as backend
    rep = backend.prepare(model, "CPU")        # an onnx.ModelProto, bytes, or a path
    outputs = rep.run([x])                     # a list of numpy arrays, in the model's output order

A model is parsed and compiled when it first runs: the inputs' shapes size its symbolic dims
(as the kiln driver does with ``--input``), and each new set of input shapes compiles once.
Device "CPU" runs on kiln's "cpu" target where built, else on "ref"; "CUDA" on "gpu".
"""
from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

import kiln

try:
    from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict
except ImportError as e:  # pragma: no cover - onnx is needed only for this module
    raise ImportError("kiln.onnx_backend needs the onnx package (pip install onnx)") from e


def _target_for(device: str) -> str:
    d = Device(device)
    built = kiln.built_targets()
    if d.type == DeviceType.CUDA:
        return "gpu"
    return "cpu" if "cpu" in built else "ref"


def _tensor_type(dtype: np.dtype) -> int:
    from onnx import helper

    if hasattr(helper, "np_dtype_to_tensor_dtype"):
        return helper.np_dtype_to_tensor_dtype(dtype)
    from onnx import mapping  # onnx < 1.14

    return mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def _model_bytes(model: Any) -> bytes:
    if isinstance(model, (bytes, bytearray)):
        return bytes(model)
    if isinstance(model, (str, os.PathLike)):
        with open(model, "rb") as f:
            return f.read()
    return model.SerializeToString()


class KilnRep(BackendRep):
    """A prepared model: runs it, compiling once per set of input shapes."""

    def __init__(self, model: bytes, input_names: Sequence[str], output_names: Sequence[str], target: str,
                 options: kiln.CompileOptions | None, parse_kwargs: dict[str, Any]) -> None:
        self._model = model
        self.input_names = list(input_names)
        self.output_names = list(output_names)
        self.target = target
        self._options = options
        self._parse_kwargs = parse_kwargs
        self._programs: dict[tuple, kiln.Program] = {}

    def _feeds(self, inputs: Any) -> dict[str, Any]:
        if isinstance(inputs, dict):
            items = list(inputs.items())
        else:
            if isinstance(inputs, np.ndarray) or not isinstance(inputs, (list, tuple)):
                inputs = [inputs]
            if len(inputs) > len(self.input_names):
                raise kiln.InputError(f"{len(inputs)} inputs given, the model has {len(self.input_names)}: "
                                      f"{', '.join(self.input_names)}")
            items = list(zip(self.input_names, inputs))
        feeds = {}
        for name, value in items:
            if isinstance(value, dict):
                raise kiln.InputError(f"input '{name}': map values are not supported")
            # A list is a sequence and None an empty optional: kiln checks them against the model.
            if value is None or isinstance(value, list):
                feeds[name] = None if value is None else [np.asarray(v) for v in value]
            else:
                feeds[name] = np.asarray(value)
        return feeds

    def program_for(self, feeds: dict[str, Any]) -> kiln.Program:
        """The compiled program for these inputs' shapes (parsed and compiled on first use)."""
        tensors = {name: a for name, a in feeds.items() if isinstance(a, np.ndarray)}
        key = tuple(sorted((name, a.shape) for name, a in tensors.items()))
        program = self._programs.get(key)
        if program is None:
            kwargs = dict(self._parse_kwargs)
            dims = {name: list(a.shape) for name, a in tensors.items()}
            dims.update(kwargs.pop("input_dims", None) or {})
            program = kiln.parse_onnx(self._model, input_dims=dims, **kwargs)
            program.compile(self.target, self._options)
            self._programs[key] = program
        return program

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        feeds = self._feeds(inputs)
        outputs = self.program_for(feeds).run(feeds)
        names = list(outputs.keys())
        return namedtupledict("Outputs", names)(*[outputs[n] for n in names])


class KilnBackend(Backend):
    """The onnx.backend.base.Backend over kiln. ``target`` (a class attribute, or a prepare keyword)
    picks the kiln target instead of the device's default."""

    target: str | None = None

    @classmethod
    def is_compatible(cls, model: Any, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: Any, device: str = "CPU", target: str | None = None,
                options: kiln.CompileOptions | None = None, input_dims: dict | None = None,
                dim_params: dict | None = None, default_dim: int | None = None,
                skip_unknown_operators: bool = False, **kwargs: Any) -> KilnRep:
        """Prepares `model` (ModelProto, bytes or path) to run on `device` ("CPU" or "CUDA")."""
        import onnx

        data = _model_bytes(model)
        proto = model if isinstance(model, onnx.ModelProto) else onnx.load_model_from_string(data)
        initializers = {t.name for t in proto.graph.initializer}
        inputs = [i.name for i in proto.graph.input if i.name not in initializers]
        outputs = [o.name for o in proto.graph.output]
        parse_kwargs = {"input_dims": input_dims, "dim_params": dim_params, "default_dim": default_dim,
                        "skip_unknown_operators": skip_unknown_operators}
        return KilnRep(data, inputs, outputs, target or cls.target or _target_for(device), options, parse_kwargs)

    @classmethod
    def run_model(cls, model: Any, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: Any, inputs: Any, device: str = "CPU", outputs_info: Any = None,
                 **kwargs: Any) -> tuple[Any, ...]:
        """Runs one node: wraps it in a model whose inputs take the given arrays' types and shapes."""
        import onnx
        from onnx import helper

        arrays = [np.asarray(a) for a in inputs]
        graph_inputs = [helper.make_tensor_value_info(n, _tensor_type(a.dtype), a.shape)
                        for n, a in zip(node.input, arrays)]
        graph_outputs = [helper.make_empty_tensor_value_info(n) for n in node.output]
        graph = helper.make_graph([node], "run_node", graph_inputs, graph_outputs)
        opset = kwargs.pop("opset_version", None)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)] if opset else None)
        return cls.run_model(model, arrays, device, **kwargs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        try:
            d = Device(device)
        except AttributeError:
            return False
        built = kiln.built_targets()
        if cls.target is not None:
            return cls.target in built and (d.type == DeviceType.CPU) == (cls.target != "gpu")
        return "gpu" in built if d.type == DeviceType.CUDA else True


prepare = KilnBackend.prepare
run_model = KilnBackend.run_model
run_node = KilnBackend.run_node
supports_device = KilnBackend.supports_device
is_compatible = KilnBackend.is_compatible
