"""Trusted-side helpers that turn the learner's evidence into verdicts.

Checks follow one rule (README.md in course/checks): the learner's process
returns evidence, this process judges. Two kinds of evidence need more than a
comparison, and live here:

- A *lowered program*: the probe returns `jax.jit(fn).lower(*specs).as_text()`
  for shapes the check chose, and `run_lowered` has the evaluator compile and run
  that StableHLO on values the child never saw (`course.engine.programs.run`). A
  program's text is cheap to forge; a program that gives the right numbers on
  fresh inputs is not, so "it works under jit" no longer rests on a `jax.jit`
  the learner's code could replace. The text is hostile: MLIR verifies it, and
  its size, nesting, tensors, operations and estimated cost are bounded before
  XLA compiles it (no custom calls, no callbacks), and only the evaluator, a
  disposable process under a time limit, parses and runs it: a program that
  crashes or hangs it costs one check, never this process.
- *Parameters of a known architecture*: `mlp_forward` evaluates the course's
  MLP (Linear, ReLU, Linear) from returned arrays in NumPy, in float64, so a
  check compares the learner's outputs with numbers no library in the child
  could have touched.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from course.engine.checking import fail
from course.engine.programs import Program, ProgramError, parse, run
from course.engine.words import _

__all__ = ["ProgramError", "bce_with_logits", "main_signature", "mlp_forward", "read_program", "run_lowered"]


def main_signature(text: Any) -> tuple[list, list]:
    """(arguments, results) of the program's entry point, each a (shape, dtype) pair."""
    program = parse(text)
    return [(a.shape, a.dtype) for a in program.args], [(r.shape, r.dtype) for r in program.results]


def read_program(text: Any, *, what: str) -> Program:
    """The learner's lowered program, parsed and verified here (`course.engine.programs.parse`);
    a text that is not one fails the check, with `what` in the message."""
    try:
        return parse(text)
    except ProgramError as e:
        fail(_("{what}: the check could not read the program JAX lowered: {e}.").format(what=what, e=e))
    raise AssertionError("unreachable")


def run_lowered(text: Any, args: list, *, what: str) -> list[np.ndarray]:
    """Run the learner's lowered program on `args` (NumPy arrays) here, on the CPU
    (`course.engine.programs.run`: in the evaluator, verified, bounded, no custom calls, under a time limit).

    Fails the check, with `what` in the message, when the evidence is not a
    program this process will run or its signature does not fit `args`.
    """
    try:
        return run(text, *args)
    except ProgramError as e:
        fail(_("{what}: the program your function lowers to under jax.jit cannot be run by the check: {e}.").format(
            what=what, e=e))
    raise AssertionError("unreachable")


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
