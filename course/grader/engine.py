"""The grader's one doorway into the check engine (`course.runner`).

Each exercise runs in a `CheckSession` of its own, because the sandbox prefix
and working folder belong to that exercise's throw-away copy. The worker
imports pytest and the libraries once, so a session costs little. An
instructor's extra checks (`test_<exercise>*.py` in a `--checks` folder) run
after the course's check, against the same copy, with the same fixtures; their
checks are named `<file stem>::<test>` so they never clash with the course's.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

MAX_OUTPUT = 4000


class Engine:
    def __init__(self, *, extra_check_dirs: list[Path], memory_mb: int | None) -> None:
        from course.catalog import load_catalog

        self.catalog = load_catalog()
        self.by_name = {e.name: e for e in self.catalog.exercises}
        self.extra_check_dirs = extra_check_dirs
        self.memory_mb = memory_mb
        _warm_imports()

    def extra_checks(self, name: str) -> list[Path]:
        pattern = re.compile(rf"^test_{re.escape(name)}(_.*)?\.py$")
        return [f for d in self.extra_check_dirs for f in sorted(d.glob("test_*.py")) if pattern.match(f.name)]

    def run(self, name: str, *, learner_file: Path, seed: int, argv_prefix: list[str], env: dict[str, str],
            cwd: Path) -> dict:
        """Check one exercise; returns the fields `results.exercise_entry` takes."""
        from course.runner import CheckSession
        from course.sandbox import DEFAULT_MEMORY_MB

        exercise = self.by_name[name]
        runs = [(exercise, None)] + [(dataclasses.replace(exercise, check=f.stem), f) for f in self.extra_checks(name)]
        checks: list[dict] = []
        passed, cause, message, duration, output = True, None, "", 0.0, ""
        for ex, extra in runs:
            with CheckSession(warm=False, child_argv_prefix=argv_prefix, child_env=env, cwd=cwd,
                              memory_mb=self.memory_mb or DEFAULT_MEMORY_MB) as session:
                result = session.run(ex, learner_file=learner_file, seed=seed,
                                     extra_check_dirs=() if extra is None else (extra.parent,))
            prefix = "" if extra is None else f"{extra.stem}::"
            for c in result.checks:
                checks.append(dict(name=prefix + c.name, outcome=c.outcome, cause=c.cause, message=c.message,
                                   duration=round(c.duration, 3)))
            duration += result.duration
            output = output or result.output
            if not result.passed and passed:
                passed, cause, message = False, result.cause, result.message
            if result.cause in ("syntax_error", "import_error"):
                break  # the file cannot load: the extra checks would only repeat that
        return dict(passed=passed, cause=cause, message=message, duration=duration, checks=checks,
                    output=output[-MAX_OUTPUT:])


def _warm_imports() -> None:
    """What every check needs in the parent, imported once per worker, not per exercise."""
    import jax
    import jax.numpy as jnp
    import optax  # noqa: F401
    import pytest  # noqa: F401
    from flax import nnx  # noqa: F401

    jax.block_until_ready(jnp.zeros(1) + 1)
