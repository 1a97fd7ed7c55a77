"""Trusted-side helpers that turn the learner's evidence into verdicts.

Checks follow one rule (README.md in course/checks): the learner's process
returns evidence, this process judges. Two kinds of evidence need more than a
comparison, and live here:

- A *lowered program*: the probe returns `jax.jit(fn).lower(*specs).as_text()`
  for shapes the check chose, and `run_lowered` compiles and runs that StableHLO
  here on values the child never saw. A program's text is cheap to forge; a
  program that gives the right numbers on fresh inputs is not, so "it works
  under jit" no longer rests on a `jax.jit` the learner's code could replace.
  The text is hostile: its size, the sizes of its tensors and its operations
  are bounded before XLA sees it (no loops, no custom calls, no callbacks), so
  it can neither hang nor exhaust this process.
- *Parameters of a known architecture*: `mlp_forward` evaluates the course's
  MLP (Linear, ReLU, Linear) from returned arrays in NumPy, in float64, so a
  check compares the learner's outputs with numbers no library in the child
  could have touched.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from typing import Any

import numpy as np

from course.engine.checking import fail

MAX_PROGRAM_CHARS = 2_000_000
MAX_TENSOR_ELEMENTS = 4_000_000

_MAIN = re.compile(r"func\.func\s+public\s+@main\((.*?)\)\s*->\s*\((.*?)\)\s*(?:attributes\s*\{[^{}]*\}\s*)?\{",
                   re.DOTALL)
_SINGLE_RESULT = re.compile(r"func\.func\s+public\s+@main\((.*?)\)\s*->\s*(tensor<[^>]*>)", re.DOTALL)
_TENSOR = re.compile(r"tensor<([^<>]*)>")
_OP = re.compile(r"\b((?:stablehlo|chlo|mhlo|func|sdy|shardy)\.[a-z_]+)\b")
_ALLOWED_OPS = frozenset("""
abs add and atan2 bitcast_convert broadcast broadcast_in_dim cbrt ceil clamp compare complex
concatenate constant convert cosine count_leading_zeros divide dot dot_general dynamic_slice
dynamic_update_slice exponential exponential_minus_one floor gather get_tuple_element imag iota
is_finite log log_plus_one logistic maximum minimum multiply negate not or pad popcnt power real
reduce reduce_precision remainder reshape return reverse round_nearest_afz round_nearest_even rsqrt
scatter select shift_left shift_right_arithmetic shift_right_logical sign sine slice sort sqrt
subtract tan tanh transpose tuple xor optimization_barrier select_and_scatter reduce_window
case if
""".split())
_ALLOWED_OTHER = frozenset({"func.func", "func.return", "func.call", "mhlo.num_partitions", "mhlo.num_replicas",
                            "mhlo.sharding", "mhlo.frontend_attributes", "mhlo.layout_mode",
                            "mhlo.memory_kind", "mhlo.input_output_alias", "mhlo.is_same_data_across_replicas"})
_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "i1": "bool", "i8": "int8", "i16": "int16",
           "i32": "int32", "i64": "int64", "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
           "bf16": "bfloat16"}


class ProgramError(ValueError):
    """Text that is not a lowered program this module will run; the message says why."""


def _tensor_type(spec: str) -> tuple[tuple[int, ...], str]:
    parts = spec.strip().split("x")
    dtype = _DTYPES.get(parts[-1].strip())
    if dtype is None:
        raise ProgramError(f"a tensor of element type {parts[-1][:20]!r}")
    try:
        shape = tuple(int(p) for p in parts[:-1])
    except ValueError:
        raise ProgramError(f"a tensor of unknown shape <{spec[:40]}>") from None
    return shape, dtype


def _types(text: str) -> list[tuple[tuple[int, ...], str]]:
    return [_tensor_type(m.group(1)) for m in _TENSOR.finditer(text)]


def main_signature(text: Any) -> tuple[list, list]:
    """(arguments, results) of the program's entry point, each a (shape, dtype) pair."""
    if not isinstance(text, str):
        raise ProgramError(f"expected the program's text, got {type(text).__name__}")
    if len(text) > MAX_PROGRAM_CHARS:
        raise ProgramError(f"the program is {len(text)} characters long")
    m = _MAIN.search(text) or _SINGLE_RESULT.search(text)
    if m is None:
        raise ProgramError("no public @main function in the program")
    return _types(m.group(1)), _types(m.group(2))


def _screen(text: str) -> None:
    if "custom_call" in text or "callback" in text:
        raise ProgramError("the program calls back into Python or into custom code")
    for op in sorted(set(_OP.findall(text))):
        dialect, _, name = op.partition(".")
        if op in _ALLOWED_OTHER or (dialect in ("stablehlo", "chlo") and name in _ALLOWED_OPS):
            continue
        raise ProgramError(f"the program uses `{op}`, which this exercise does not need")
    for spec in _TENSOR.findall(text):
        shape, _ = _tensor_type(spec)
        if math.prod(shape) > MAX_TENSOR_ELEMENTS:
            raise ProgramError(f"a tensor of shape {shape} is larger than any this exercise needs")


_COMPILED: dict[str, Any] = {}
_LOCK = threading.Lock()


def _compile(text: str) -> Any:
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    with _LOCK:
        if key in _COMPILED:
            return _COMPILED[key]
    # JAX has no public API that compiles StableHLO text; these are the calls
    # jax.jit itself makes, pinned with the JAX version in constraints.txt.
    from jax._src import compiler, xla_bridge
    from jax._src.interpreters import mlir
    from jax._src.lib import xla_client as xc

    backend = xla_bridge.get_backend("cpu")
    try:
        with mlir.make_ir_context():
            module = mlir.ir.Module.parse(text)
            bytecode = mlir.module_to_bytecode(module)
        options = compiler.get_compile_options(num_replicas=1, num_partitions=1)
        exe = backend.compile_and_load(bytecode, xc.DeviceList(tuple(backend.local_devices()[:1])), options)
    except Exception as e:  # the MLIR parser and XLA raise their own types
        raise ProgramError(f"XLA cannot compile it: {str(e).splitlines()[0][:200] if str(e) else type(e).__name__}") \
            from None
    with _LOCK:
        if len(_COMPILED) > 256:
            _COMPILED.clear()
        _COMPILED[key] = exe
    return exe


def run_lowered(text: Any, args: list, *, what: str) -> list[np.ndarray]:
    """Run the learner's lowered program on `args` (NumPy arrays) here, on the CPU.

    Fails the check, with `what` in the message, when the evidence is not a
    program this module will run or its signature does not fit `args`.
    """
    import jax

    args = [np.asarray(a) for a in args]
    try:
        arg_types, _ = main_signature(text)
        _screen(text)
        want = [(a.shape, str(a.dtype)) for a in args]
        if arg_types != want:
            raise ProgramError(f"its inputs are {_show(arg_types)}, but the check calls it with {_show(want)}")
        exe = _compile(text)
        cpu = jax.devices("cpu")[0]
        out = exe.execute_sharded([jax.device_put(a, cpu) for a in args])
        return [np.asarray(r[0]) for r in out.disassemble_into_single_device_arrays()]
    except ProgramError as e:
        fail(f"{what}: the program your function lowers to under jax.jit cannot be run by the check: {e}.")
    raise AssertionError("unreachable")


def _show(types: list) -> str:
    return "(" + ", ".join(f"{dtype}{list(shape)}" for shape, dtype in types) + ")"


# -- the course's MLP, evaluated from returned parameters --------------------------


def mlp_forward(params: dict, x: np.ndarray, *, first: str = "linear1", second: str = "linear2") -> np.ndarray:
    """Linear -> ReLU -> Linear in float64, from a pure dict {layer: {kernel, bias}}."""
    x = np.asarray(x, np.float64)
    l1, l2 = params[first], params[second]
    h = np.maximum(x @ np.asarray(l1["kernel"], np.float64) + np.asarray(l1["bias"], np.float64), 0.0)
    return h @ np.asarray(l2["kernel"], np.float64) + np.asarray(l2["bias"], np.float64)


def bce_with_logits(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Elementwise binary cross-entropy on logits, stable for large |z| (float64)."""
    z, y = np.asarray(z, np.float64), np.asarray(y, np.float64)
    return np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))
