"""Fixture courses under tests/ hold check modules named test_*.py; they are run by
the engine and the grader inside the tests, never collected as tests themselves.

`jaxlings check` hands checks to a per-workspace server it starts on demand; the
suite's many throw-away workspaces would each leave one behind for minutes, so
it is off unless a test turns it on (tests/test_check_server.py). Each of those
workspaces also gets a compilation cache for learner code in the user cache
folder: the suite's go to a folder of its own, removed at the end.

The suite reads English whatever the machine's locale; tests of the Japanese
edition ask for it (`--lang ja`, JAXLINGS_LANG=ja or `i18n.set_language`).

Tests of Ctrl-C need a Ctrl-C that arrives: a suite started in the background
by a non-interactive shell (`cmd &`, nohup) inherits SIGINT ignored, and so
would every process it starts, and Python then installs no KeyboardInterrupt.
The suite takes SIGINT back, so its children start with the default.

The real course's exercise and attack cases each run their check on a seed of their own that
stays the same from run to run (`case_seed`): a verdict that differs between two runs of the
suite is then a change in the code, never the luck of the draw. `JAXLINGS_SEED=N` runs every
case on N; `JAXLINGS_TEST_SEEDS=random` draws a fresh seed for each, as a learner's check does.
`benchmarks/check_seeds.py` runs every case on many seeds, to find checks that a draw can fool.

The suite's processes compile with the checks' XLA options (`course.engine.compile_flags`), as
every process that checks does; JAXLINGS_FAST_COMPILE=0 runs it with XLA's defaults."""

import atexit
import os
import shutil
import signal
import tempfile
import zlib

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

collect_ignore = ["fixtures", "grader_fixtures", "alternatives", "attacks"]

os.environ.setdefault("JAXLINGS_SERVER", "0")
os.environ["JAXLINGS_LANG"] = "en"
if "XDG_CACHE_HOME" not in os.environ:
    _cache_home = tempfile.mkdtemp(prefix="jaxlings-test-cache-")
    os.environ["XDG_CACHE_HOME"] = _cache_home
    atexit.register(shutil.rmtree, _cache_home, ignore_errors=True)

# Checks compile with XLA options of their own (course.engine.compile_flags) where the checking
# process's backend has not started yet, as in the check server, the app and a grading worker.
# Adopted here, before any test runs JAX, so the suite's own check sessions judge as theirs do.
from course.engine import compile_flags  # noqa: E402

compile_flags.adopt()

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _english_unless_asked():
    """A test that switches the language cannot leave it switched for the next one."""
    from course import i18n

    yield
    if i18n.language() != i18n.DEFAULT:
        i18n.set_language(i18n.DEFAULT)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The real course's exercise and attack cases run grouped by exercise (`make test` runs with
    `--dist loadgroup`): a worker that ran one case of an exercise has its programs in its
    compilation cache, and its other cases read them there; split between the two workers,
    each worker would compile them again."""
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.path.stem in EXERCISE_MODULES and "name" in params:
            item.add_marker(pytest.mark.xdist_group(f"exercise-{params['name']}"))


EXERCISE_MODULES = ("test_exercises", "test_attacks")


def case_seed(*case: str) -> int | None:
    """The seed a case of the real course runs its check on (see the module's docstring): None
    draws a fresh one."""
    if os.environ.get("JAXLINGS_SEED"):
        return int(os.environ["JAXLINGS_SEED"])
    if os.environ.get("JAXLINGS_TEST_SEEDS") == "random":
        return None
    return zlib.crc32("/".join(case).encode()) % 2**31


@pytest.fixture(scope="session")
def course_check_session(course_compile_cache):
    """One warm CheckSession for the real course's exercises and attacks: their cases come grouped by
    exercise, from both modules in turn, and a session per module would start afresh at each turn.
    Its children are forked from a zygote, as a grading worker's are (where the unshare tier is in
    force): the verdicts under test are the grader's, and each case skips importing JAX again."""
    from course.engine.runner import CheckSession

    with CheckSession(compile_cache=course_compile_cache, fork_children=True) as s:
        yield s


@pytest.fixture(scope="session")
def course_compile_cache(tmp_path_factory):
    """The compilation caches a learner's workspace gives its checks (`workspace_compile_cache`),
    for the suite's runs of the real course's checks: an eager step that builds new functions on
    every call (optax.MultiSteps' conditionals) compiles the same programs again and again, and a
    learner's checks read them from the cache after the first time; so do these."""
    from course.engine.caches import workspace_compile_cache

    return workspace_compile_cache(tmp_path_factory.mktemp("workspace") / ".jaxlings")
