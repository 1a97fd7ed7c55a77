"""The next check of an exercise, run ahead while the learner edits (course.engine.ahead)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from course.catalog import load_catalog
from course.engine.runner import CheckSession

FIXTURE = Path(__file__).parent / "fixtures" / "course"

CORRECT = "import jax.numpy as jnp\n\ndef scale(x, alpha):\n    return jnp.asarray(x) * alpha + 1\n"
WRONG = "def scale(x, alpha):\n    return x\n"


@pytest.fixture
def course(tmp_path, monkeypatch):
    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root)
    monkeypatch.delenv("JAXLINGS_SEED", raising=False)
    learner = tmp_path / "scale.py"
    learner.write_text(CORRECT)
    return load_catalog(root).exercise("fx_scale"), learner


def test_the_next_check_uses_the_seed_and_the_answers_prepared_ahead(course):
    """After a check, the next one is run ahead: the real check then uses the seed drawn for it,
    the reference's answers for its inputs are already there, and its verdict is the file's own."""
    exercise, learner = course
    with CheckSession(compile_cache=None, run_ahead=True) as session:
        first = session.run(exercise, learner_file=learner)
        assert first.passed, first.message
        session.wait_warm()  # as while the learner edits
        ahead_seed = dict(session.ahead._seeds)[(exercise.name, str(learner.resolve()))]
        hits = session._reference_results.hits
        learner.write_text(WRONG)  # the learner edits: the check judges the file as saved
        second = session.run(exercise, learner_file=learner)
        assert second.seed == ahead_seed and second.seed != first.seed
        assert session._reference_results.hits >= hits + 2  # both tests' reference answers, ready
        assert not second.passed and second.cause == "wrong_result"
    with CheckSession(compile_cache=None, warm=False) as plain:
        again = plain.run(exercise, learner_file=learner, seed=ahead_seed)
    assert [(c.name, c.outcome, c.message) for c in again.checks] == \
        [(c.name, c.outcome, c.message) for c in second.checks]


def test_a_check_asked_for_stops_the_one_running_ahead(course, tmp_path):
    """A save while the run ahead is still going: its learner process is ended at once and the
    real check runs on the file as saved."""
    exercise, learner = course
    started, finished = tmp_path / "started", tmp_path / "finished"
    learner.write_text(
        "import time\nfrom pathlib import Path\nimport jax.numpy as jnp\n\n"
        "def scale(x, alpha):\n"
        f"    Path({str(started)!r}).touch()\n"
        "    time.sleep(25)\n"
        f"    Path({str(finished)!r}).touch()\n"
        "    return jnp.asarray(x) * alpha + 1\n")
    # A plain child (no sandbox) so that the learner's file can leave the markers above.
    with CheckSession(compile_cache=None, run_ahead=True, isolation=None) as session:
        session.prepare(exercise, learner)
        deadline = time.monotonic() + 300
        while not started.exists():  # the run ahead is inside the learner's code
            assert time.monotonic() < deadline, "the run ahead never called the learner's code"
            assert session.ahead._thread is not None and session.ahead._thread.is_alive()
            time.sleep(0.05)
        learner.write_text(CORRECT)
        result = session.run(exercise, learner_file=learner)
        assert result.passed, result.message
        assert not finished.exists()  # its process was ended in the middle of the learner's call
        session.ahead.stop()


def test_the_grader_and_one_off_checks_never_run_ahead(course):
    exercise, learner = course
    with CheckSession(compile_cache=None, warm=False, run_ahead=True) as session:
        assert session.ahead is None  # nothing runs ahead without a warm session
    with CheckSession(compile_cache=None) as session:
        assert session.ahead is None
        session.prepare(exercise, learner)  # does nothing


def test_no_cache_a_learner_can_read_holds_what_the_reference_compiled(tmp_path, monkeypatch):
    """Checks, and the checks run ahead, leave compiled programs in two caches: the learner's (written
    by learner children) and the trusted one (this process and the reference's children). A program
    that only the reference compiles is in the trusted one and never in the learner's; another
    learner's workspace has a learner cache of its own."""
    from course.engine.isolation import for_checks
    from course.engine.runner import workspace_compile_cache

    if not for_checks().sandboxed:
        pytest.skip("no sandbox here: the trusted cache is not used where learner children could write it")
    monkeypatch.delenv("JAXLINGS_SEED", raising=False)
    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root)
    (root / "solutions" / "01_basics" / "scale.py").write_text(
        "import jax\nimport jax.numpy as jnp\n\n\n"
        "def reference_only_program(x, alpha):\n    return jnp.asarray(x) * alpha + 1\n\n\n"
        "def scale(x, alpha):\n    return jax.jit(reference_only_program)(x, alpha)\n")
    exercise = load_catalog(root).exercise("fx_scale")
    caches = []
    for name in ("ann", "bob"):
        learner = tmp_path / name / "scale.py"
        learner.parent.mkdir()
        learner.write_text("import jax\nimport jax.numpy as jnp\n\n\n"
                           f"def {name}_program(x, alpha):\n    return jnp.asarray(x) * alpha + 1\n\n\n"
                           f"def scale(x, alpha):\n    return jax.jit({name}_program)(x, alpha)\n")
        (tmp_path / name / ".jaxlings").mkdir()
        cache = workspace_compile_cache(tmp_path / name / ".jaxlings")
        with CheckSession(compile_cache=cache, run_ahead=True) as session:
            assert session.compile_cache.trusted is not None
            assert session.run(exercise, learner_file=learner).passed
            session.wait_warm()  # the run ahead too
            assert session.run(exercise, learner_file=learner).passed
        caches.append(cache)

    def names(folder):
        return {p.name for p in folder.rglob("*") if p.is_file()}

    ann, bob = caches
    for name, other, cache in (("ann", "bob", ann), ("bob", "ann", bob)):
        learner_names = names(cache.learner)
        # A program is found by its name: the learner's own are there (where this process keeps the
        # trusted side's depends on which session first set its cache, so it is not looked for).
        assert any(n.startswith(f"jit_{name}_program") for n in learner_names)
        assert not any(n.startswith("jit_reference_only_program") for n in learner_names)
        assert not any(n.startswith(f"jit_{other}_program") for n in learner_names)
    assert ann.learner != bob.learner
    for cache in caches:
        shutil.rmtree(cache.learner, ignore_errors=True)
