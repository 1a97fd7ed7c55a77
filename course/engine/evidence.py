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

import functools
import re
from typing import Any

import numpy as np

from course.engine.checking import fail
from course.engine.programs import Program, ProgramError, parse, run
from course.engine.words import _

__all__ = ["ProgramError", "adam_state_role", "bce_with_logits", "main_signature", "mlp_forward", "read_program",
           "run_lowered"]


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


# -- the inputs of a lowered train step over (model state, nnx.Optimizer state) ------


@functools.lru_cache(maxsize=16)
def _adam_state_patterns(layers: tuple[str, ...], bare_params: bool) -> tuple[re.Pattern, ...]:
    names = "|".join(re.escape(layer) for layer in layers)
    model = r"(?:\[0\])?" if bare_params else r"\[0\]"
    # Adam's state, at any depth of the optimizer's state: [0] for optax.adam (a chain),
    # ['inner_state'][0] under inject_hyperparams, ['inner_states'][<label>]['inner_state'][0]
    # under multi_transform.
    adam = r"^\[1\]\['opt_state'\](?:\[[^\]]*\])*?"
    return (re.compile(rf"^{model}\['({names})'\]\['(kernel|bias)'\]"),
            re.compile(rf"{adam}\['(mu|nu)'\]\['({names})'\]\['(kernel|bias)'\](?:\.\w+)?$"),
            re.compile(rf"{adam}\['count'\](?:\.\w+)?$"),
            re.compile(r"^\[1\]\['step'\]"),
            re.compile(rf"{adam}\['hyperparams'\]\['(\w+)'\](?:\.\w+)?$"))


def adam_state_role(path: str, layers: tuple[str, ...], *, bare_params: bool = False,
                    hyperparams: bool = False) -> tuple[str, ...] | None:
    """What one input of a lowered step over `(model state, optimizer state)` is, from its key path.

    The paths are `jax.tree_util.keystr` of the flattened pair, as a probe reports them for an
    nnx.Optimizer over optax.adam: ('param', layer, 'kernel'|'bias') for `[0]['layer']['kernel']`,
    ('mu'|'nu', layer, name) for Adam's moments, ('count',) and ('step',), or None for anything else
    (the check words that refusal). `bare_params` also accepts a model's parameters flattened alone
    (`['layer']['kernel']`). Adam's state may sit deeper in the optimizer's state, as optax's wrappers
    keep it (`optax.chain`, `optax.multi_transform`, `optax.inject_hyperparams`); with `hyperparams`,
    the numbers inject_hyperparams keeps are ('hyper', name). The paths are the child's word: they
    say which input is which, and a check still judges the values the evaluator computes from them.
    """
    param, moment, count, step, hyper = _adam_state_patterns(tuple(layers), bare_params)
    if m := param.match(path):
        return ("param", m.group(1), m.group(2))
    if m := moment.match(path):
        return (m.group(1), m.group(2), m.group(3))
    if count.match(path):
        return ("count",)
    if step.match(path):
        return ("step",)
    if hyperparams and (m := hyper.match(path)):
        return ("hyper", m.group(1))
    return None
