"""The grader's one doorway into the check engine (`course.engine.runner`).

Each check run gets a `CheckSession` of its own, because the sandbox prefix
and the working folder belong to one throw-away copy. Starting a learner child
costs seconds (Python plus JAX imports, mostly waiting on the disk), so the
worker prepares the next run — copy and sandboxed child — while the current
one is checked; `Prepared` holds such a run.

An instructor's extra checks (`test_<exercise>*.py` in a `--checks` folder)
run after the course's check, each against a fresh copy and child, with the
same fixtures; their checks are named `<file stem>::<test>`.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from course.engine.runner import CheckSession

from course.engine.results import ExerciseResult
from course.engine.sandbox import DEFAULT_MEMORY_MB, LearnerProcess

MAX_OUTPUT = 4000


@dataclasses.dataclass(frozen=True)
class Unit:
    """One check module run for one exercise."""

    exercise: object  # course.catalog.Exercise, with `check` set to the module to run
    extra: Path | None  # the instructor's check file, or None for the course's own check

    @property
    def prefix(self) -> str:
        return "" if self.extra is None else f"{self.extra.stem}::"


class _PrestartedSession(CheckSession):
    """A session whose one learner child is started at construction, in its sandbox."""

    def __init__(self, **kw) -> None:
        super().__init__(warm=False, **kw)
        self._ready: LearnerProcess | None = self._new_child({})

    def _take_child(self, extra_env: dict[str, str]) -> LearnerProcess:
        if self._ready is not None and not extra_env:
            proc, self._ready = self._ready, None
            return proc
        return super()._take_child(extra_env)

    def close(self) -> None:
        if self._ready is not None:
            self._ready.close()
            self._ready = None
        super().close()


class Prepared:
    def __init__(self, unit: Unit, session: CheckSession) -> None:
        self.unit = unit
        self.session = session

    def run(self, learner_file: Path, seed: int) -> ExerciseResult:
        extra_dirs = () if self.unit.extra is None else (self.unit.extra.parent,)
        return self.session.run(self.unit.exercise, learner_file=learner_file, seed=seed,
                                extra_check_dirs=extra_dirs)

    def close(self) -> None:
        self.session.close()


class Engine:
    def __init__(self, *, extra_check_dirs: list[Path], memory_mb: int | None,
                 exercises: list[str] | None = None) -> None:
        from course.catalog import load_catalog

        self.catalog = load_catalog()
        self.by_name = {e.name: e for e in self.catalog.exercises}
        self.extra_check_dirs = extra_check_dirs
        self.memory_mb = memory_mb or DEFAULT_MEMORY_MB
        names = [n for n in (exercises if exercises is not None else self.by_name) if n in self.by_name]
        checks = [u.exercise.check_path() if u.extra is None else u.extra for n in names for u in self.units(n)]
        _warm_imports(checks)

    def units(self, name: str) -> list[Unit]:
        exercise = self.by_name[name]
        pattern = re.compile(rf"^test_{re.escape(name)}(_.*)?\.py$")
        extra = [f for d in self.extra_check_dirs for f in sorted(d.glob("test_*.py")) if pattern.match(f.name)]
        return [Unit(exercise, None)] + [Unit(dataclasses.replace(exercise, check=f.stem), f) for f in extra]

    def prepare(self, unit: Unit, *, isolation, slot: int, copy: Path, compile_cache=None) -> Prepared:
        """A session whose child starts now, sandboxed by `isolation` (`course.engine.isolation`).

        `compile_cache` (a `CompileCache` with a trusted folder only) keeps what the trusted
        side compiles, this process and the reference's children, for the next submissions:
        their checks draw their shapes from small sets, so the references' programs repeat.
        No learner's child reads or writes it (`usable_cache` drops it where children are not
        sandboxed), and no learner's compiled programs are kept for another learner."""
        session = _PrestartedSession(isolation=isolation, sandbox_slot=slot, sandbox_copy=copy,
                                     memory_mb=self.memory_mb, compile_cache=compile_cache)
        return Prepared(unit, session)


def merge(units: list[Unit], results: list[ExerciseResult]) -> dict:
    """One exercise's outcome from its check runs; the fields `results.exercise_entry` takes."""
    checks: list[dict] = []
    passed, cause, message, duration, output = True, None, "", 0.0, ""
    for unit, result in zip(units, results):
        for c in result.checks:
            checks.append(dict(name=unit.prefix + c.name, outcome=c.outcome, cause=c.cause, message=c.message,
                               duration=round(c.duration, 3)))
        duration += result.duration
        output = output or result.output
        if not result.passed and passed:
            passed, cause, message = False, result.cause, result.message
    return dict(passed=passed, cause=cause, message=message, duration=duration, checks=checks,
                output=output[-MAX_OUTPUT:])


def _warm_imports(checks: list[Path] = ()) -> None:
    """What every check needs in the parent, imported once per worker, not per exercise:
    JAX, Flax, Optax, pytest, and the heavy libraries (`child.PRELOADABLE`: torch, ...)
    that the `checks` to be run import (the course's and the instructor's, both trusted).

    Then everything alive is moved out of the garbage collector's sight
    (`gc.freeze`): the worker collects after every exercise (see
    `worker._forget_compiled`), and a full collection walking JAX's, Flax's and
    pytest's hundred thousand objects each time cost a third of a second.
    What is frozen is what the worker keeps for its life anyway (modules and
    their objects); what checks create later stays collectable.
    """
    import gc
    import importlib

    import jax
    import jax.numpy as jnp
    import optax  # noqa: F401
    import pytest  # noqa: F401
    from flax import nnx  # noqa: F401

    import course.checks.conftest  # noqa: F401 - every check run registers it as a plugin
    import course.engine.evaluator  # noqa: F401
    import course.engine.programs  # noqa: F401

    from course.engine.runner import _preload_env

    heavy = {m for path in checks for m in _preload_env(path).get("JAXLINGS_PRELOAD", "").split(",") if m}
    for module in sorted(heavy):
        importlib.import_module(module)
    jax.block_until_ready(jnp.zeros(1) + 1)
    gc.collect()
    gc.freeze()
