"""Every exercise in the real course: the untouched starter fails, in English
(exercises/) or in Japanese (starters/ja/, every other exercise), with a verdict and
never a check error (no check depends on a starter's docstring or messages); the reference
solution passes, and every alternative solution in tests/alternatives/ passes
(`<exercise>.py` and `<exercise>__<variant>.py`).

While content is being written, `JAXLINGS_ALLOW_MISSING_CONTENT=1` skips
exercises whose files don't exist yet; without it a missing file is a failure.
One warm CheckSession serves this module and tests/test_attacks.py (conftest.py).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from course.catalog import load_catalog
from course.engine.runner import CheckSession
from conftest import case_seed

ALTERNATIVES = Path(__file__).parent / "alternatives"
CATALOG = load_catalog()


def _alternatives(name: str) -> list[Path]:
    """`<name>.py`, every `<name>__<variant>.py`, and the files of a folder `<name>/`."""
    single = ALTERNATIVES / f"{name}.py"
    variants = sorted(ALTERNATIVES.glob(f"{name}__*.py"))
    folder = ALTERNATIVES / name
    return ([single] if single.is_file() else []) + variants + (sorted(folder.glob("*.py")) if folder.is_dir() else [])


def _cases() -> list:
    cases = []
    for i, ex in enumerate(CATALOG.exercises):
        # The Japanese starters hold the English starters' code (tests/test_starters_ja.py compares
        # their syntax trees), so each exercise's check runs on one of the two: every other
        # exercise on the Japanese one, which shows that no check reads a docstring, a comment or
        # a NotImplementedError message, without running every starter twice.
        if i % 2:
            cases.append(pytest.param(ex.name, "starter", CATALOG.root / "starters" / "ja" / ex.file,
                                      id=f"{ex.name}-starter-ja"))
        else:
            cases.append(pytest.param(ex.name, "starter", None, id=f"{ex.name}-starter"))
        cases.append(pytest.param(ex.name, "solution", None, id=f"{ex.name}-solution"))
        for alt in _alternatives(ex.name):
            cases.append(pytest.param(ex.name, "alternative", alt, id=f"{ex.name}-alt-{alt.stem}"))
    return cases


@pytest.fixture
def session(course_check_session):
    return course_check_session


def _require(*files: Path) -> None:
    missing = [str(f) for f in files if not f.is_file()]
    if not missing:
        return
    message = "missing: " + ", ".join(missing)
    if os.environ.get("JAXLINGS_ALLOW_MISSING_CONTENT") == "1":
        pytest.skip(message)
    pytest.fail(message + " (set JAXLINGS_ALLOW_MISSING_CONTENT=1 while content is being written)")




@pytest.mark.parametrize("name, kind, path", _cases())
def test_exercise(session: CheckSession, name: str, kind: str, path: Path | None) -> None:
    ex = CATALOG.exercise(name)
    starter = path if kind == "starter" and path is not None else CATALOG.root / "exercises" / ex.file
    _require(starter, ex.solution_path(), ex.check_path())
    if kind == "starter":
        result = session.run(ex, learner_file=starter, seed=case_seed(name, starter.name), first_failure=True)
        assert not result.passed, f"the untouched starter of {name} passes its check"
        assert result.cause != "check_error", f"the check errors on the starter instead of failing it:\n{result.message}"
    else:
        learner_file = ex.solution_path() if kind == "solution" else path
        result = session.run(ex, learner_file=learner_file, seed=case_seed(name, kind, Path(learner_file).name))
        assert result.passed, f"{kind} {learner_file} fails:\n{result.message}\n{result.output[-2000:]}"
        if kind == "solution":
            _trace_matches_the_ledger(name, result)


def _trace_matches_the_ledger(name: str, result) -> None:
    """What each test did on the solution, against its evidence ledger rows (course/checks/README.md):
    every test asks something of the learner's code, and a test whose rows all say `program` has the
    evaluator read or run at least one program (what `jaxlings dev check` requires of an author's checks).
    Only tests that take `learner` themselves: a module-wide fixture asks while the first test runs."""
    from course.devkit.verify import _test_params
    from test_evidence_ledger import ledger

    takes_learner = {t for t, params in _test_params(CATALOG.exercise(name).check_path()).items()
                     if "learner" in params}

    sources: dict[str, set[str]] = {}
    for row in ledger()[name]:
        for test in re.findall(r"`?(test_[a-z0-9_]+)`?", row["test"]):
            sources.setdefault(test, set()).add(row["source"])
    done: dict[str, dict[str, int]] = {}
    for test, counts in result.trace.items():
        if any(c.name == test and c.outcome == "passed" for c in result.checks):
            merged = done.setdefault(test.split("[", 1)[0], {})
            for key, n in counts.items():
                merged[key] = merged.get(key, 0) + n
    assert done, f"no trace of the tests of {name}"
    for test, counts in done.items():
        if test not in takes_learner:
            continue
        assert counts["call"] + counts["probe"] + counts["has"] > 0, f"{name}: {test} asked nothing of the learner"
        if sources.get(test) == {"program"}:
            assert counts["programs"] > 0, f"{name}: {test} is `program` in the ledger but ran no program"
