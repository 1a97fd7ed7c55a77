"""Hostile and near-miss learner files: every one must FAIL its exercise's check.

tests/attacks/<exercise>/<case>.py are learner files. Cases named `near_*.py` are
plausible mistakes; the others are cheats (delegation to the reference, library
patching, frame walking). The first line of each file's docstring says what it
attempts. A case fails its exercise with a learner's cause, never `check_error`
(that would be a bug of the course), and leaves the course's files as they were.

Cases named `delegate_*.py` read the reference from the course's folders; they
can only fail where the child cannot see those folders. Where the machine gives
no sandbox (the session's isolation is a plain process), one that passes is an
expected failure, and one that fails must still fail for a learner's cause.

A near miss declares `MESSAGE = r"..."` (a literal, read from the source: case
files are never imported here): a regular expression the failure message must
match, so that the learner is told what the mistake is.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from course.catalog import load_catalog
from course.devkit.verify import literal as _literal
from course.devkit.verify import unnamed_mistake
from course.engine.runner import CheckSession
from conftest import case_seed

ATTACKS = Path(__file__).parent / "attacks"
CATALOG = load_catalog()
GUARDED = ("solutions", "course/checks", "exercises", "lessons")


def _cases() -> list:
    cases = []
    for path in sorted(ATTACKS.glob("*/*.py")):
        cases.append(pytest.param(path.parent.name, path, id=f"{path.parent.name}-{path.stem}"))
    return cases


def _snapshot() -> dict[str, tuple[int, int]]:
    files = {}
    for folder in GUARDED:
        for p in (CATALOG.root / folder).rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts:
                st = p.stat()
                files[str(p)] = (st.st_size, st.st_mtime_ns)
    return files


@pytest.fixture
def session(course_check_session):
    return course_check_session


def test_every_exercise_named_by_a_case_exists():
    names = {ex.name for ex in CATALOG.exercises}
    unknown = sorted({p.parent.name for p in ATTACKS.glob("*/*.py")} - names)
    assert not unknown, f"attack folders for exercises that do not exist: {unknown}"


def test_every_case_says_what_it_attempts():
    for path in ATTACKS.glob("*/*.py"):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert doc and doc.strip().splitlines()[0].strip(), f"{path} has no docstring saying what it attempts"
        if path.stem.startswith("near_"):
            assert _literal(path, "MESSAGE"), f"{path} is a near miss without MESSAGE"


def _sandboxed(session: CheckSession) -> bool:
    return bool(getattr(session.isolation, "sandboxed", False))


@pytest.mark.parametrize("name, path", _cases())
def test_case_fails(session: CheckSession, name: str, path: Path) -> None:
    ex = CATALOG.exercise(name)
    before = _snapshot()
    seed = case_seed(name, path.name)
    # The check stops at its first failing test (the verdict is the same); only when that test's
    # message does not name the mistake are the others run too, since any of them may name it.
    result = session.run(ex, learner_file=path, seed=seed, first_failure=True)
    shown = [result.message, *(c.message for c in result.checks if c.outcome != "passed")]
    if not result.passed and unnamed_mistake(path, shown) is not None:
        result = session.run(ex, learner_file=path, seed=result.seed)
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))).splitlines()[0]
    if result.passed and path.stem.startswith("delegate_") and not _sandboxed(session):
        pytest.xfail("the child can still read the course's folders")
    assert not result.passed, f"{path.name} ({doc}) passes the check of {name}"
    assert result.cause != "check_error", f"{path.name}: the check errors instead of failing it:\n{result.message}"
    missing = unnamed_mistake(path, [result.message, *(c.message for c in result.checks if c.outcome != "passed")])
    assert missing is None, (f"{path.name} ({doc}) fails, but the message does not name the mistake "
                             f"(expected /{missing}/):\n{result.message}")
    assert _snapshot() == before, f"{path.name} changed the course's files"
