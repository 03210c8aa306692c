"""kiln: a deep-learning inference compiler.

    import numpy as np, kiln
    program = kiln.parse_onnx("model.onnx", dim_params={"batch": 1})
    program.compile()                   # the default target: gpu where a GPU is found, else cpu
    outputs = program.run({"x": np.ones((1, 3, 224, 224), np.float32)})
    print(outputs)
    program.save("model.kiln")          # kiln.load("model.kiln") runs it without compiling again
    print(program.perf_report())        # times per run, per instruction and by op

    # Compiled for "gpu": CUDA tensors (torch.cuda, anything with __cuda_array_interface__ or
    # DLPack) are read on the device, and outputs= writes results into the caller's buffers.
    y = torch.empty(1, 1000, device="cuda")
    gpu_program.run({"x": torch.randn(1, 3, 224, 224, device="cuda")}, outputs={"y": y})

    print(kiln.verify(kiln.parse_onnx("model.onnx")))   # default target against ref without passes

Errors are kiln.Error subclasses (ParseError, TargetError, CompileError, InputError, RunError,
FileError, CancelledError) carrying kiln's message, which names the node, input or option at fault.
Program.cancel(), from another thread, stops a compile or run with CancelledError.
"""
import os

# The cpu target's OpenMP pool spins briefly at barriers, then sleeps, unless told otherwise:
# threads spinning for long starve each other on shared cores, sleeping at once slows small
# kernels (see kiln's driver, src/driver/main.cpp). libgomp reads these when it loads.
if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    os.environ["OMP_WAIT_POLICY"] = "passive"
    os.environ["GOMP_SPINCOUNT"] = "1000"

from ._kiln import (  # noqa: E402
    Argument,
    CancelledError,
    CompileError,
    CompileOptions,
    DynamicDim,
    Error,
    FileError,
    InputError,
    InstructionTime,
    OutputCheck,
    ParseError,
    PerfReport,
    Program,
    RunError,
    Shape,
    TargetError,
    VerifyReport,
    built_targets,
    from_dlpack,
    load,
    onnx_ops,
    ops,
    parse_onnx,
    parse_text,
    verify,
)

Argument.from_dlpack = staticmethod(from_dlpack)

__version__ = "0.1.0"

__all__ = [
    "Argument", "CancelledError", "CompileError", "CompileOptions", "DynamicDim", "Error", "FileError", "InputError",
    "InstructionTime", "OutputCheck", "ParseError", "PerfReport", "Program", "RunError", "Shape", "TargetError",
    "VerifyReport", "built_targets", "from_dlpack", "load", "onnx_ops", "ops", "parse_onnx", "parse_text",
    "verify",
]
