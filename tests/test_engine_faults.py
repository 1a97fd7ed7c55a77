"""Learner code that cheats or breaks: every case is a fail with its own cause, never a pass.

Uses the fixture course in tests/fixtures/course, copied to a temporary folder
so that learner code which writes into the course cannot touch the repository.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import textwrap
from pathlib import Path

import numpy as np

import pytest

from course.catalog import load_catalog
from course.engine.runner import CheckSession

FIXTURE = Path(__file__).parent / "fixtures" / "course"

CORRECT = """
import jax.numpy as jnp

def scale(x, alpha):
    return jnp.asarray(x) * alpha + 1
"""


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="module")
def session():
    with CheckSession(memory_mb=2048) as s:
        yield s


@pytest.fixture
def check(course, session, monkeypatch):
    """check(source, **kw) -> ExerciseResult for the exercise `fx_scale`."""
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    catalog = load_catalog(course)
    counter = iter(range(1000))

    def run(source: str, *, exercise: str = "fx_scale", timeout: float | None = None, seed: int | None = None,
            check_source: str | None = None, first_failure: bool = False):
        ex = catalog.exercise(exercise)
        if timeout is not None:
            ex = dataclasses.replace(ex, timeout=timeout)
        n = next(counter)
        path = course / "exercises" / "01_basics" / f"attempt_{n}_{exercise}.py"
        path.write_text(textwrap.dedent(source))
        extra = ()
        if check_source is not None:  # a check module of the test's own, in place of the course's
            folder = Path(tempfile.mkdtemp(prefix="checks_", dir=course))
            (folder / f"{ex.check}.py").write_text(textwrap.dedent(check_source))
            extra = (folder,)
        return session.run(ex, learner_file=path, seed=seed, extra_check_dirs=extra, first_failure=first_failure)

    return run


def _fails(result, cause: str) -> None:
    assert not result.passed
    assert result.cause == cause, f"expected cause {cause}, got {result.cause}:\n{result.message}"
    assert f"seed {result.seed}" in result.message


def test_correct_solution_passes(check):
    result = check(CORRECT)
    assert result.passed, result.message
    assert [c.outcome for c in result.checks] == ["passed", "passed"]


def test_first_failure_stops_at_the_first_failing_test_with_the_same_verdict(check):
    wrong = "def scale(x, alpha):\n    return x * alpha\n"
    every = check(wrong, seed=7)
    first = check(wrong, seed=7, first_failure=True)
    assert [c.outcome for c in every.checks] == ["failed", "failed"]
    assert [c.outcome for c in first.checks] == ["failed"]
    assert (first.passed, first.cause) == (every.passed, every.cause) == (False, "wrong_result")
    assert first.checks[0].message == every.checks[0].message
    assert check(CORRECT, first_failure=True).passed


def test_the_callers_pytest_settings_do_not_reach_the_check(check, monkeypatch, tmp_path):
    # A user's shell, or CI, may set PYTEST_ADDOPTS for their own tests; a check must run as written.
    report = tmp_path / "report.xml"
    monkeypatch.setenv("PYTEST_ADDOPTS", f"-v --collect-only -k nothing --junitxml={report}")
    monkeypatch.setenv("PYTEST_PLUGINS", "no_such_plugin_module")
    result = check(CORRECT)
    assert result.passed, result.message
    assert [c.outcome for c in result.checks] == ["passed", "passed"]
    assert not report.exists()
    assert os.environ["PYTEST_ADDOPTS"].startswith("-v --collect-only")  # given back afterwards
    assert os.environ["PYTEST_PLUGINS"] == "no_such_plugin_module"


@pytest.mark.parametrize(
    "source, cause",
    [
        ("import os\nos._exit(0)\n", "exit"),
        ("import sys\nsys.exit(0)\n", "exit"),
        ("import os\ndef scale(x, alpha):\n    os._exit(0)\n", "exit"),
        ("import sys\ndef scale(x, alpha):\n    sys.exit(0)\n", "exit"),
    ],
    ids=["os._exit-at-import", "sys.exit-at-import", "os._exit-in-call", "sys.exit-in-call"],
)
def test_exiting_is_a_fail_with_the_exit_code(check, source, cause):
    result = check(source)
    _fails(result, cause)
    assert "exit code 0" in result.message or "sys.exit(0)" in result.message


def test_object_equal_to_everything_is_not_plain_data(check):
    result = check("""
        class Anything:
            def __eq__(self, other):
                return True
            __hash__ = object.__hash__

        def scale(x, alpha):
            return Anything()
    """)
    _fails(result, "not_plain_data")
    assert "Anything" in result.message


def test_array_subclass_with_rigged_eq_is_not_plain_data(check):
    result = check("""
        import numpy as np

        class Sneaky(np.ndarray):
            def __eq__(self, other):
                return True

        def scale(x, alpha):
            return np.zeros_like(x).view(Sneaky)
    """)
    _fails(result, "not_plain_data")
    assert "Sneaky" in result.message


def test_monkeypatching_test_machinery_in_the_child_changes_nothing(check):
    result = check("""
        import builtins, unittest, pytest, numpy.testing, numpy as np
        pytest.main = lambda *a, **k: 0
        pytest.fail = lambda *a, **k: None
        unittest.TestCase.assertEqual = lambda *a, **k: None
        numpy.testing.assert_allclose = lambda *a, **k: None
        np.allclose = lambda *a, **k: True
        builtins.AssertionError = type("Never", (Exception,), {})

        def scale(x, alpha):
            return np.zeros(np.shape(x), np.float32)
    """)
    _fails(result, "wrong_result")


def test_writing_into_the_checks_folder_does_not_change_the_verdict(check, course, session):
    """Without a sandbox the write happens and the verdict must still hold; in one, it cannot."""
    target = course / "checks" / "test_fx_scale.py"
    original = target.read_text()
    try:
        result = check(f"""
            from pathlib import Path
            checks = Path({str(course / "checks")!r})
            try:
                (checks / "test_fx_scale.py").write_text("def test_nothing():\\n    pass\\n")
                (checks / "conftest.py").write_text("import pytest\\n@pytest.fixture\\ndef learner():\\n    return None\\n")
            except OSError:
                pass
            def scale(x, alpha):
                return x
        """)
        if session.isolation is not None and session.isolation.sandboxed:
            assert target.read_text() == original
        else:
            assert target.read_text().startswith("def test_nothing"), "the write itself should have happened"
        _fails(result, "wrong_result")
        assert {c.name for c in result.checks} == {"test_scale_matches", "test_scale_under_jit"}
    finally:
        target.write_text(original)
        (course / "checks" / "conftest.py").unlink(missing_ok=True)


def test_hard_coded_literal_matches_one_seed_only(check):
    seed = 12345
    rng = np.random.default_rng(seed)  # the draws test_scale_matches makes
    x = rng.normal(size=(int(rng.integers(2, 6)), 3)).astype(np.float32)
    alpha = float(rng.uniform(0.5, 2.0))
    literal = (x * alpha + 1).tolist()
    source = f"import numpy as np\ndef scale(x, alpha):\n    return np.array({literal!r}, np.float32)\n"
    lucky = check(source, seed=seed)
    assert not lucky.passed  # the jit check uses other inputs
    assert next(c for c in lucky.checks if c.name == "test_scale_matches").outcome == "passed"
    _fails(check(source, seed=seed + 1), "wrong_result")


def test_infinite_loop_times_out(check):
    result = check("def scale(x, alpha):\n    while True:\n        pass\n", timeout=3)
    _fails(result, "timeout")
    assert result.duration < 30


def test_allocating_50_gib_is_out_of_memory(check):
    result = check("import numpy as np\ndef scale(x, alpha):\n    return np.ones(50 * 2**30, np.uint8)\n")
    _fails(result, "out_of_memory")


def test_growing_memory_is_stopped(check):
    result = check("""
        def scale(x, alpha):
            hoard = []
            while True:
                hoard.append(bytearray(64 * 2**20))
    """, timeout=20)
    _fails(result, "out_of_memory")


def test_syntax_error_shows_line_and_caret(check):
    result = check("def scale(x, alpha):\n    return x *\n")
    _fails(result, "syntax_error")
    assert "line 2" in result.message and "^" in result.message
    # Every check meets the same error: it is shown once, the later checks point back to it.
    first, *later = result.checks
    assert "^" in first.message and later
    assert all(c.cause == "syntax_error" and "^" not in c.message and first.name in c.message for c in later)


def test_missing_module_is_named(check):
    result = check("import jaxx_does_not_exist\n")
    _fails(result, "import_error")
    assert "jaxx_does_not_exist" in result.message


def test_missing_function(check):
    result = check("def scaled(x, alpha):\n    return x\n")
    _fails(result, "missing_name")
    assert "`scale`" in result.message


def test_wrong_signature(check):
    result = check("def scale(x):\n    return x\n")
    _fails(result, "signature")
    assert "scale(x)" in result.message


def test_exception_traceback_points_into_the_learner_file_only(check):
    result = check("def helper(v):\n    return v['missing']\n\ndef scale(x, alpha):\n    return helper({})\n")
    _fails(result, "exception")
    assert "KeyError" in result.message
    assert "line 2, in helper" in result.message and "line 5, in scale" in result.message
    assert "course/engine/child.py" not in result.message and "runner.py" not in result.message


def test_crash_by_signal(check):
    result = check("import os, signal\ndef scale(x, alpha):\n    os.kill(os.getpid(), signal.SIGSEGV)\n")
    _fails(result, "crash")
    assert "SIGSEGV" in result.message


def test_deleting_its_own_file_mid_run(check):
    result = check("""
        import os
        try:
            os.remove(__file__)
        except OSError:
            pass  # a sandbox's copy is read-only

        def scale(x, alpha):
            raise ValueError("gone")
    """)
    _fails(result, "exception")
    assert 'raise ValueError("gone")' in result.message  # the source was kept in memory


def test_missing_result_is_a_fail(check):
    result = check("def stats(x):\n    pass\n", exercise="fx_stats")
    _fails(result, "no_result")


def test_warnings_on_stderr_are_not_failures(check):
    result = check(CORRECT + textwrap.dedent("""
        import sys, warnings
        print("W0000 00:00 XLA warning: something about devices", file=sys.stderr)
        warnings.warn("a deprecation", DeprecationWarning)
        print("learner says hello")
    """))
    assert result.passed, result.message
    assert "learner says hello" in result.output


def test_the_verdict_ignores_what_the_child_prints(check):
    result = check("""
        import sys
        print('{"passed": true}', file=sys.stderr)
        print("PASSED", flush=True)
        def scale(x, alpha):
            sys.stdout.write("1 passed in 0.01s\\n")
            return x
    """)
    _fails(result, "wrong_result")


# -- messages -----------------------------------------------------------------------

KEY_REUSE = """
    import jax

    def scale(x, alpha):
        key = jax.random.key(0)
        noise = jax.random.normal(key, x.shape)
        more = jax.random.normal(key, x.shape)
        return x * alpha + 1 + 0 * (noise + more)
"""

KEY_REUSE_CHECK = """
    import numpy as np
    {messages}

    def _under_key_reuse(module, x):
        import jax

        with jax.debug_key_reuse(True):
            return module.scale(x, 2.0)

    def test_keys_are_used_once(learner, rng):
        learner.probe(_under_key_reuse, rng.normal(size=(3,)).astype(np.float32))
"""


@pytest.mark.parametrize("messages, expected", [
    ('MESSAGES = {"KeyReuseError": "Each dropout layer needs its own key: split the key you are given."}',
     "Each dropout layer needs its own key: split the key you are given."),
    ("", "split it with jax.random.split"),
], ids=["the-checks-message", "the-default-message"])
def test_key_reuse_gets_the_checks_message_and_the_line(check, messages, expected):
    result = check(KEY_REUSE, check_source=KEY_REUSE_CHECK.format(messages=messages))
    _fails(result, "exception")
    assert expected in result.message
    assert "line 7 of" in result.message and "more = jax.random.normal(key, x.shape)" in result.message
    assert "Previously-consumed key" not in result.message and "Traceback" not in result.message


def test_error_in_a_custom_vjp_rule_names_the_learners_rule(check):
    result = check("""
        import jax
        import jax.numpy as jnp

        @jax.custom_vjp
        def double(x):
            return x * 2

        def double_fwd(x):
            return double(x), None

        def double_bwd(res, g):
            return g * 2

        double.defvjp(double_fwd, double_bwd)

        def scale(x, alpha):
            return jax.grad(lambda v: double(v).sum())(jnp.asarray(x)) * 0 + x * alpha + 1
    """)
    _fails(result, "exception")
    assert "line 12: the bwd rule `double_bwd`" in result.message
    assert "line 18, in scale" in result.message
    assert "JAX_TRACEBACK_FILTERING" not in result.message and "\n-----" not in result.message
    assert "jax/_src" not in result.message


def test_error_in_a_scan_body_points_at_the_learners_line(check):
    result = check("""
        import jax
        import jax.numpy as jnp

        def body(carry, row):
            return carry + jnp.ones(carry.shape[0] + 1), row

        def scale(x, alpha):
            carry, _ = jax.lax.scan(body, jnp.zeros(3), jnp.asarray(x))
            return x * alpha + 1
    """)
    _fails(result, "exception")
    assert "line 6, in body" in result.message and "line 9, in scale" in result.message
    assert "JAX_TRACEBACK_FILTERING" not in result.message and "jax/_src" not in result.message


def test_reference_that_raises_is_the_courses_fault(check):
    result = check(CORRECT, check_source="""
        import numpy as np

        def _broken(module, x):
            return module.scale(x, 2.0)["no such key"]

        def test_uses_the_reference(learner, reference, rng):
            x = rng.normal(size=(3,)).astype(np.float32)
            learner.call("scale", x, 2.0)
            reference.probe(_broken, x)
    """)
    _fails(result, "check_error")
    assert "problem in the course" in result.message
    assert "your code returned" not in result.message and "Compare what you return" not in result.message


def test_a_bug_in_the_check_module_is_the_courses_fault(check):
    result = check(CORRECT, check_source="""
        import numpy as np

        def test_has_a_typo(learner, rng):
            got = learner.call("scale", rng.normal(size=(3,)).astype(np.float32), 2.0)
            assert_clsoe(got, got)
    """)
    _fails(result, "check_error")
    assert "problem in the course" in result.message and "assert_clsoe" in result.message
    assert "Compare what you return" not in result.message


def test_timeout_names_the_line_that_was_running(check):
    result = check("""
        def spin():
            while True: pass

        def scale(x, alpha):
            spin()
    """, timeout=3)
    _fails(result, "timeout")
    assert "It was running line 3 of" in result.message and "while True: pass" in result.message
    assert "most recent call first" not in result.output


# -- the learner and the reference asked side by side (checking.side_by_side) ----------


def test_side_by_side_answers_both_sides_at_once():
    import threading

    from course.engine.checking import side_by_side

    # Each side waits for the other to have started: asked one after the other, they would not finish.
    started = {"learner": threading.Event(), "reference": threading.Event()}

    class Side:
        def __init__(self, me, other):
            self.me, self.other = me, other

        def probe(self, fn, *args):
            started[self.me].set()
            assert started[self.other].wait(60), f"the {self.other} was not asked while the {self.me} worked"
            return (self.me, fn(*args))

    got, want = side_by_side(Side("learner", "reference"), Side("reference", "learner")).probe(lambda v: v + 1, 1)
    assert got == ("learner", 2) and want == ("reference", 2)


def test_side_by_side_probe_each_gives_each_side_its_own_probe():
    from course.engine.checking import side_by_side

    class Side:
        def probe(self, fn, *args, **kwargs):
            return fn(self, *args, **kwargs)

    learner, reference = Side(), Side()

    def learners(module, a, *, b):
        return ("learner's probe", module is learner, a + b)

    def references(module, a, *, b):
        return ("reference's probe", module is reference, a * b)

    got, want = side_by_side(learner, reference).probe_each(learners, references, 3, b=4)
    assert got == ("learner's probe", True, 7) and want == ("reference's probe", True, 12)


def test_side_by_side_reports_the_learners_failure_before_the_references(check):
    result = check("""
        def scale(x, alpha):
            raise ValueError("the learner's own mistake")
    """, check_source="""
        import numpy as np
        from course.engine.checking import side_by_side

        class Broken:
            def call(self, name, *args):
                raise RuntimeError("the reference is broken too")

        def test_both(learner, rng):
            side_by_side(learner, Broken()).call("scale", rng.normal(size=(3,)).astype(np.float32), 2.0)
    """)
    _fails(result, "exception")
    assert "the learner's own mistake" in result.message


def test_side_by_side_reference_failure_is_the_courses_fault(check):
    result = check(CORRECT, check_source="""
        import numpy as np
        from course.engine.checking import side_by_side

        def _probe(module, x):
            if module.__name__.startswith("jaxlings_reference"):
                raise RuntimeError("the reference is broken")
            return module.scale(x, 2.0)

        def test_both(learner, reference, rng):
            side_by_side(learner, reference).probe(_probe, rng.normal(size=(3,)).astype(np.float32))
    """)
    _fails(result, "check_error")
    assert "problem in the course" in result.message and "the reference is broken" in result.message


def test_ctrl_c_during_side_by_side_ends_the_learners_request(check):
    import threading

    with pytest.raises(KeyboardInterrupt):
        check("""
            def scale(x, alpha):
                while True:
                    pass
        """, timeout=120, check_source="""
            import numpy as np
            from course.engine.checking import side_by_side

            class Interrupted:
                def call(self, name, *args):
                    raise KeyboardInterrupt

            def test_both(learner, rng):
                side_by_side(learner, Interrupted()).call("scale", rng.normal(size=(3,)).astype(np.float32), 2.0)
        """)
    # Closing the run ends the learner's child, and with it the request its thread waited on,
    # long before the 120 s the learner's loop would otherwise be allowed.
    for thread in threading.enumerate():
        if thread.name == "jaxlings-learner-request":
            thread.join(60)
            assert not thread.is_alive(), "the learner's request outlived the interrupted check"


def test_a_child_taken_after_the_run_closed_is_closed_at_once():
    import threading
    import types

    from course.engine.checking import LearnerFailure
    from course.engine.check_run import LearnerProxy

    closed_proxy = threading.Event()
    taken = []

    class Proc:
        closed = False

        def close(self):
            self.closed = True

    def take_child(env):
        # The request's thread is still getting its child when the run is closed (Ctrl-C).
        assert closed_proxy.wait(60)
        taken.append(Proc())
        return taken[-1]

    run = types.SimpleNamespace(session=types.SimpleNamespace(_take_child=take_child), child_env={})
    proxy = LearnerProxy(run)
    errors = []
    thread = threading.Thread(target=lambda: errors.append(pytest.raises(LearnerFailure, proxy._process)))
    thread.start()
    proxy.close()
    closed_proxy.set()
    thread.join(60)
    assert not thread.is_alive() and taken and taken[0].closed, "a child started after close() was left running"


def test_compiled_programs_are_dropped_before_the_process_runs_out_of_mappings():
    import jax
    import jax.numpy as jnp

    from course.engine.runner import _bound_compiled_code, _memory_maps

    for n in range(1, 30):  # programs of 29 shapes, each compiled and kept by JAX
        jax.jit(lambda v: v * 2 + 1)(jnp.ones(n)).block_until_ready()
    before = _memory_maps()
    assert before is not None
    assert not _bound_compiled_code(limit=before + 10_000)  # well under the limit: nothing dropped
    assert _bound_compiled_code(limit=before // 2)
    assert _memory_maps() < before


# -- a fresh learner process within one check ----------------------------------------

REMEMBERS = """
    import os

    CALLS = []

    def scale(x, alpha):
        CALLS.append(alpha)
        places = [os.environ.get("JAX_COMPILATION_CACHE_DIR"), os.path.expanduser("~"), "/tmp", os.getcwd()]
        for place in places:
            if place and os.path.isdir(place):
                try:
                    with open(os.path.join(place, "remembered"), "w") as f:
                        f.write(str(alpha))
                except OSError:
                    pass
        print("called with", alpha)
        return x * alpha + 1
"""

RESTART_CHECK = """
    import numpy as np

    def _what_it_remembers(module):
        import os

        found = []
        for place in [os.environ.get("JAX_COMPILATION_CACHE_DIR"), os.path.expanduser("~"), "/tmp", os.getcwd()]:
            if place and os.path.exists(os.path.join(place, "remembered")):
                found.append(place)
        return {"pid": os.getpid(), "calls": list(module.CALLS), "found": found,
                "cache": os.environ.get("JAX_COMPILATION_CACHE_DIR", "")}

    def test_a_restarted_learner_remembers_nothing(learner):
        learner.call("scale", np.ones(2, np.float32), 3.0)
        before = learner.probe(_what_it_remembers)
        assert before["calls"] == [3.0]
        learner.restart()
        after = learner.probe(_what_it_remembers)
        assert after["pid"] != before["pid"] or {SANDBOXED}, "the same process answered after the restart"
        assert after["calls"] == [], after
        assert after["found"] == [], after
        assert after["cache"] == "", after
        learner.call("scale", np.ones(2, np.float32), 5.0)
"""


def test_restart_gives_a_process_that_shares_nothing_writable(course, tmp_path, monkeypatch):
    """`learner.restart()`: a new process, without the old one's memory, files or compilation cache;
    what both printed is kept."""
    from course.engine import runner
    from course.engine.caches import CompileCache

    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    monkeypatch.setattr(runner, "use_trusted_cache", lambda folder: None)  # this process's JAX stays as it is
    cache = tmp_path / "learner-cache"
    cache.mkdir(mode=0o700)
    with CheckSession(memory_mb=2048, compile_cache=CompileCache(trusted=tmp_path / "trusted-cache", learner=cache)) as s:
        assert s.compile_cache is not None and s.compile_cache.learner == cache
        # Inside a pid namespace both children may be pid 2; the other assertions still tell them apart.
        sandboxed = s._children_isolated()
        ex = load_catalog(course).exercise("fx_scale")
        path = course / "exercises" / "01_basics" / "remembers.py"
        path.write_text(textwrap.dedent(REMEMBERS))
        folder = Path(tempfile.mkdtemp(prefix="checks_", dir=course))
        (folder / f"{ex.check}.py").write_text(textwrap.dedent(RESTART_CHECK).replace("{SANDBOXED}", str(sandboxed)))
        result = s.run(ex, learner_file=path, extra_check_dirs=(folder,))
    assert result.passed, result.message
    assert "called with 3.0" in result.output and "called with 5.0" in result.output
    if sandboxed:
        # The first child could write the learner's cache (it is shared between checks), the second not.
        assert (cache / "remembered").read_text() == "3.0"
