"""How the child is started: CHILD_ENV gives a fresh child (and reference) with that
environment; the grader's wrapper prefix and environment reach the child."""

from __future__ import annotations

from pathlib import Path

from course.catalog import load_catalog
from course.engine.runner import CheckSession

FIXTURE = Path(__file__).parent / "fixtures" / "course"


def test_child_env_sets_the_device_count_before_jax_starts(monkeypatch):
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    ex = load_catalog(FIXTURE).exercise("fx_devices")
    with CheckSession(warm=False) as session:
        starter = session.run(ex)
        solved = session.run(ex, learner_file=ex.solution_path())
    assert not starter.passed and starter.cause == "wrong_result", starter.message
    assert solved.passed, solved.message


def test_wrapper_prefix_and_env_reach_the_child(tmp_path, monkeypatch):
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    ex = load_catalog(FIXTURE).exercise("fx_scale")
    learner = tmp_path / "scale.py"
    learner.write_text(
        "import os\nimport jax.numpy as jnp\n"
        "def scale(x, alpha):\n"
        "    ok = os.environ.get('MARK_PREFIX') == 'wrapped' and os.environ.get('MARK_ENV') == 'scrubbed'\n"
        "    ok = ok and 'HOME_SECRET' not in os.environ and os.getcwd() == os.environ['EXPECTED_CWD']\n"
        "    return jnp.asarray(x) * alpha + 1 if ok else x\n"
    )
    monkeypatch.setenv("HOME_SECRET", "not for learners")
    env = {"PATH": "/usr/bin:/bin", "MARK_ENV": "scrubbed", "EXPECTED_CWD": str(tmp_path)}
    with CheckSession(warm=False, child_argv_prefix=["env", "MARK_PREFIX=wrapped"], child_env=env,
                      cwd=tmp_path, isolation=None) as session:
        result = session.run(ex, learner_file=learner)
    assert result.passed, result.message


QUIET = """
import sys
from pathlib import Path
from course.catalog import load_catalog
from course.engine.runner import CheckSession

catalog = load_catalog(Path(sys.argv[1]))
broken = Path(sys.argv[2])
with CheckSession() as session:
    failed = session.run(catalog.exercise("fx_stats"))
    ex = catalog.exercise("fx_scale")
    passed = session.run(ex, learner_file=ex.solution_path())
    noisy = session.run(ex, learner_file=ex.solution_path(), extra_check_dirs=[broken])
assert failed.cause == "no_result" and passed.passed, (failed.message, passed.message)
assert noisy.cause == "check_error" and "could not be loaded" in noisy.message, noisy.message
"""


def test_runs_print_nothing_to_the_terminal(tmp_path):
    import subprocess
    import sys

    broken = tmp_path / "checks"
    broken.mkdir()
    (broken / "test_fx_scale.py").write_text("print('collected!')\nimport sys\nsys.stderr.write('noise')\nraise RuntimeError('broken check')\n")
    proc = subprocess.run([sys.executable, "-c", QUIET, str(FIXTURE), str(broken)],
                          cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""
