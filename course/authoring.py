"""What a check module may use: the public evidence API for course authors.

A check is a pytest module, `checks/test_<exercise>.py` in a course's folder, run by
the course engine **in the trusted process**. The learner's file is imported only in
an isolated child process, where its code can patch any library and read any frame.
The rule every check follows (docs/authoring.md):

    The child returns evidence; this process judges.

Evidence is what the learner's code returned on inputs drawn here, or a program it
lowered under `jax.jit` that the evaluator runs here on inputs the child never saw.
A value the child *reports about itself* (a flag it read, a count it kept, state it
read through a library it could patch) is not evidence until something here checks it.

This module is the whole API a check needs; everything else in `course.engine` is
private and may change between releases. Its guarantees:

- Fixtures (no import needed): `learner` and `reference` (`.call(name, *args)`,
  `.probe(fn, *args)`, `.has(name)`), `seed` (this run's seed, printed with every
  failure so a learner can rerun it) and `rng` (a NumPy generator from that seed).
  `learner.call` runs the learner's function on the arguments, in the child, and
  returns its result as plain data (arrays, numbers, strings, lists, dicts);
  `reference` is the course's solution, run here.
- `fail(message)` fails the check with `message`, shown to the learner as it is.
- `assert_close`, `assert_tree_close` and `assert_equal` compare with a tolerance
  (or exactly), naming what differs, where, and by how much.
- `run_jitted(learner, name, *args, what=...)` has the child lower `name` under
  `jax.jit` for the shapes and dtypes of `args` only, then runs that program in the
  evaluator, a disposable process with time and memory limits, on `args` themselves:
  the outputs were never computed in the learner's process. A program that cannot be
  read, is too costly, crashes or hangs the evaluator fails the check with a message
  that says so; it never stops the check itself.
- `lowered(learner, name, *args)` and `run_lowered(text, args, what=...)` are its two
  halves, for a check that runs one program on several inputs.
- `mask_is_random(mask, keep, rng, what=...)` tests a boolean mask that should keep
  each entry with probability `keep`, independently: its keep rate and the overlap of
  its rows and of its columns, each against its exact law. All tests of one call
  together fail a correct mask with probability at most 1e-10.
- `evidence.recomputed / program / reported` declare what each test judges and from
  what. `jaxlings dev check` refuses a test that declares nothing, and a `reported`
  judgment without a `cross_check`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from course.engine.checking import LearnerFailure, assert_close, assert_equal, assert_tree_close, fail, side_by_side
from course.engine.evidence import run_lowered as _run_lowered
from course.engine.words import _

__all__ = ["Evidence", "assert_close", "assert_equal", "assert_tree_close", "declared", "evidence", "fail",
           "lowered", "mask_is_random", "run_jitted", "run_lowered", "side_by_side"]

SOURCES = ("recomputed", "program", "reported")
ATTRIBUTE = "__jaxlings_evidence__"


# -- declaring evidence ---------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """One judgment of a test and where its evidence comes from (one row of the course's ledger).

    source: "recomputed" (what the learner's functions returned on inputs drawn here, compared
    with values computed here), "program" (a program the learner's code lowered, run by the
    evaluator on inputs drawn here) or "reported" (a value the learner's process produced
    through a library it can patch; it needs a `cross_check` here).
    """

    source: str
    judgment: str
    evidence: str
    cross_check: str | None = None


class _Declare:
    """`@evidence.recomputed(...)`, `@evidence.program(...)`, `@evidence.reported(...)` on a test."""

    @staticmethod
    def _mark(row: Evidence) -> Callable:
        def mark(test: Callable) -> Callable:
            setattr(test, ATTRIBUTE, (*getattr(test, ATTRIBUTE, ()), row))
            return test

        return mark

    def recomputed(self, judgment: str, *, evidence: str) -> Callable:
        """The test compares what the learner's code returned on inputs drawn here with values
        computed here (NumPy, or the `reference`)."""
        return self._mark(Evidence("recomputed", judgment, evidence))

    def program(self, judgment: str, *, evidence: str) -> Callable:
        """The test runs a program the learner's code lowered (`run_jitted`, `run_lowered`) on
        inputs drawn here, and judges its outputs."""
        return self._mark(Evidence("program", judgment, evidence))

    def reported(self, judgment: str, *, evidence: str, cross_check: str | None = None) -> Callable:
        """The test judges from a value the learner's process reports (state read through a library,
        a flag, a count). `cross_check` says what here makes that value trustworthy; without one,
        `jaxlings dev check` refuses the test."""
        return self._mark(Evidence("reported", judgment, evidence, cross_check))


evidence = _Declare()


def declared(test: Callable) -> tuple[Evidence, ...]:
    """The evidence a test declares, in the order its decorators were written."""
    return tuple(reversed(getattr(test, ATTRIBUTE, ())))


# -- programs ----------------------------------------------------------------------


def probe_lowered(module, name, specs, static):  # noqa: ANN001 - runs in the learner's process
    """The learner's `name` lowered under jax.jit for these shapes and dtypes (nothing is run)."""
    import jax

    fn = getattr(module, name)
    structs = [jax.ShapeDtypeStruct(tuple(shape), dtype) for shape, dtype in specs]
    return jax.jit(fn, static_argnums=tuple(range(len(structs), len(structs) + len(static)))).lower(
        *structs, *static).as_text()


_NARROW = {"float64": "float32", "int64": "int32", "uint64": "uint32", "complex128": "complex64"}


def _canonical(a: Any) -> np.ndarray:
    """An argument as JAX sees it with 64-bit types off (its default): float64 becomes float32."""
    a = np.asarray(a)
    return a.astype(_NARROW[a.dtype.name]) if a.dtype.name in _NARROW else a


def lowered(learner: Any, name: str, *args: Any, static: tuple = ()) -> str:
    """The program the learner's `name` lowers to under `jax.jit`, for the shapes and dtypes of
    `args` (NumPy arrays; 64-bit ones are taken as 32-bit). `static` are trailing arguments passed
    as Python values (`static_argnums`). Only shapes cross to the child: the values stay here."""
    specs = [(list(a.shape), a.dtype.name) for a in map(_canonical, args)]
    try:
        return learner.probe(probe_lowered, name, specs, list(static))
    except LearnerFailure as f:
        if f.cause == "exception":  # the learner's code, traced: say which step it was
            shapes = ", ".join(f"{s[1]}{tuple(s[0])}" for s in specs)
            f.message = _("`{name}` could not be traced by jax.jit for arguments {shapes}: {error}").format(
                name=name, shapes=shapes, error=f.message)
        raise


def run_lowered(text: Any, args: list, *, what: str) -> list[np.ndarray]:
    """Run a lowered program on `args` in the evaluator; its outputs, flattened, as NumPy arrays.
    A text that is not a program this process will run fails the check, with `what` in the message."""
    return _run_lowered(text, [_canonical(a) for a in args], what=what)


def run_jitted(learner: Any, name: str, *args: Any, what: str, static: tuple = ()) -> list[np.ndarray]:
    """The outputs of the learner's `name` under `jax.jit` on `args`, computed by the evaluator from the
    program the child lowered for their shapes alone (`lowered`, then `run_lowered`)."""
    return run_lowered(lowered(learner, name, *args, static=static), list(args), what=what)


# -- randomness -------------------------------------------------------------------


def mask_is_random(mask: Any, keep: float, rng: np.random.Generator, *, what: str) -> None:
    """Fail unless the boolean `mask` (two or more axes) looks like independent draws that keep each
    entry with probability `keep`: its keep rate against the exact binomial law, and the overlaps of
    pairs of its rows and of its columns against their exact law (course.checks.randomness). The
    tests of one call share a false-failure rate of 1e-10."""
    from course.checks.randomness import departures, keep_rate, mask_tests

    mask = np.asarray(mask)
    if mask.dtype != bool or mask.ndim < 2:
        fail(_("{what}: expected a boolean mask with two or more axes, got {dtype} of shape {shape}.").format(
            what=what, dtype=mask.dtype, shape=mask.shape))
    bad = departures([keep_rate(mask, keep), *mask_tests(mask, rng)])
    if bad:
        worst = min(bad, key=lambda t: t.p)
        fail(_("{what}: the mask does not look like independent draws that keep each entry with probability "
               "{keep:g}: {test} gave {observed} where {expected:.1f} was expected (p = {p:.2g}).").format(
            what=what, keep=keep, test=worst.label(), observed=worst.observed, expected=worst.expected, p=worst.p))
