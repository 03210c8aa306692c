# Type stubs for the kiln package (the _kiln extension's API, re-exported).
import os
from typing import Any, Mapping, Sequence

import numpy as np

__version__: str

class Error(RuntimeError): ...
class ParseError(Error): ...
class TargetError(Error, ValueError): ...
class CompileError(Error): ...
class InputError(Error, ValueError): ...
class RunError(Error): ...
class FileError(Error, OSError): ...
class CancelledError(Error): ...

class DynamicDim:
    min: int
    max: int
    optimals: list[int]
    symbol: str
    def __init__(self, min: int, max: int, optimals: Sequence[int] = ..., symbol: str = "") -> None: ...
    def is_fixed(self) -> bool: ...

class Shape:
    def __init__(self, type: str | np.dtype[Any] | type, lens: Sequence[int | DynamicDim | tuple[int, int]],
                 strides: Sequence[int] | None = None) -> None: ...
    @property
    def type(self) -> str: ...
    @property
    def type_name(self) -> str: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    @property
    def lens(self) -> list[int]: ...
    @property
    def strides(self) -> list[int]: ...
    @property
    def dynamic(self) -> bool: ...
    @property
    def dyn_dims(self) -> list[DynamicDim]: ...
    @property
    def ndim(self) -> int: ...
    def elements(self) -> int: ...
    def bytes(self) -> int: ...
    def standard(self) -> bool: ...
    def scalar(self) -> bool: ...

class Argument:
    def __init__(self, array: Any) -> None: ...
    @property
    def shape(self) -> Shape: ...
    def numpy(self) -> np.ndarray: ...
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray: ...
    def __dlpack__(self, **kwargs: Any) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    @staticmethod
    def from_dlpack(tensor: Any) -> Argument: ...

class CompileOptions:
    optimize: bool
    fast_math: bool
    exhaustive_tune: bool
    offload_copy: bool
    kernel_cache: bool
    allow_tf32: bool
    device: int
    def __init__(self, *, optimize: bool = True, fast_math: bool = True, exhaustive_tune: bool = False,
                 offload_copy: bool = False, fp16: bool = False, bf16: bool = False, kernel_cache: bool = True,
                 allow_tf32: bool = False, device: int = 0) -> None: ...
    @property
    def precision(self) -> str: ...

class OutputCheck:
    """How one output compared in verify(): passed when the relative RMS error is at most rms_tol
    and every element is within atol + rtol * |ref| (NaN matches only NaN, an infinity only the
    same infinity)."""
    name: str
    passed: bool
    reason: str          # why it failed, on one line ("" when it passed)
    mismatch: str        # set when types or lens differ (then nothing else is compared)
    rms: float           # relative RMS error sqrt(sum (got - ref)^2 / sum ref^2)
    max_abs: float       # the largest |got - ref|
    elements: int
    not_close: int       # elements failing the allclose test
    worst_index: tuple[int, ...]   # the element with the largest |got - ref|
    worst_got: float
    worst_ref: float
    nan_got: int
    nan_ref: int
    inf_got: int
    inf_ref: int
    rtol: float          # the tolerances used: given, or by dtype and precision
    atol: float
    rms_tol: float

class VerifyReport:
    passed: bool
    seed: int
    outputs: list[OutputCheck]
    def __bool__(self) -> bool: ...

class InstructionTime:
    line: str            # the compiled instruction (or kernel) as printed
    op: str
    ms: float            # interquartile mean over the timed runs
    share: float         # of the instructions' total, 0..1

class PerfReport:
    """Program.perf_report()'s timings, in milliseconds."""
    target: str
    iterations: int
    mean_ms: float
    min_ms: float
    median_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    run_ms: list[float]                          # each whole run, sorted
    total_ms: float                              # the mean of the middle half of the runs
    rate: float                                  # runs per second (1000 / total_ms)
    instructions_ms: float                       # the instructions' total
    overhead_ms: float                           # total_ms - instructions_ms
    instructions: list[InstructionTime]          # main's, in order; empty when the target cannot time them
    by_op: list[tuple[str, float, float]]        # (op, ms, share), largest first
    op_counts: list[tuple[str, int]]             # (op, instructions of main), most first

class Program:
    @property
    def target(self) -> str | None: ...
    def compile(self, target: str = "", options: CompileOptions | None = None) -> None: ...
    def run(self, inputs: Mapping[str, Any],
            outputs: Sequence[Any] | Mapping[str, Any] | None = None) -> dict[str, Any]: ...
    def cancel(self) -> None:
        """Stops this program's compile, run, verify or perf_report in progress on another thread (or,
        when none is, the next one) with CancelledError, before its next instruction or Loop iteration."""
    def input_names(self) -> list[str]: ...
    def output_names(self) -> list[str]: ...
    def input_shapes(self) -> dict[str, Shape]: ...
    def output_shapes(self) -> dict[str, Shape]: ...
    def perf_report(self, inputs: Mapping[str, Any] | None = None, iterations: int = 10,
                    seed: int = 0) -> PerfReport:
        """Times the compiled program: a warm-up run, `iterations` whole runs, then `iterations`
        runs timing each instruction. Inputs not given are seeded random values."""
    def save(self, path: str | os.PathLike[str]) -> None: ...
    def print(self) -> None: ...

def parse_onnx(path_or_bytes: str | os.PathLike[str] | bytes, *,
               input_dims: Mapping[str, Sequence[int]] | None = None,
               dim_params: Mapping[str, int | tuple[int, int]] | None = None,
               default_dim: int | None = None, skip_unknown_operators: bool = False) -> Program: ...
def parse_text(text: str) -> Program: ...
def load(path: str | os.PathLike[str]) -> Program: ...
def verify(program: Program, inputs: Mapping[str, Any] | None = None, target: str = "",
           rtol: float | None = None, atol: float | None = None, rms_tol: float | None = None,
           options: CompileOptions | None = None, seed: int = 0) -> VerifyReport:
    """Compiles a copy of the (uncompiled) program for the target and compares its outputs with the
    program run on ref without passes, as `kiln verify` does: RMS and allclose must both hold.
    Tolerances not given default by dtype and precision (1e-3 each for float32, 8e-2/4e-2/4e-2
    for fp16/bf16, 0 for integers). Inputs not given are seeded random values."""
def from_dlpack(tensor: Any) -> Argument: ...
def ops() -> list[str]: ...
def onnx_ops() -> list[str]: ...
def built_targets() -> list[str]: ...
