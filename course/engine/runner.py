"""Running an exercise's hidden check: the one API the CLI, the app and the grader use.

Trust model (DESIGN.md): pytest runs the check module here, in the trusted
parent; the reference solution is imported here too; the learner's module is
imported only in a child process (`course.engine.sandbox`) that answers with plain
data. The verdict is built from pytest's own outcomes, collected by a plugin
object in this process, never from anything the child prints or writes.

pytest runs in-process (`pytest.main` with a collecting plugin, no terminal
reporter, output captured), so a long-lived `CheckSession` keeps pytest, JAX
and the reference modules warm and answers in well under a second.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import os
import secrets
import sys
import textwrap
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from course.engine import checking
from course.catalog import Exercise, checks_dir
from course.engine.checking import CheckFailure, LearnerFailure
from course.engine.wire import from_wire, to_plain, to_wire
from course.engine.isolation import Isolation, for_checks
from course.engine.sandbox import DEFAULT_MEMORY_MB, LearnerProcess, WarmPool, child_environment, encode_args

CAUSES = (
    "syntax_error", "import_error", "missing_name", "signature", "exception", "timeout",
    "out_of_memory", "crash", "exit", "not_plain_data", "wrong_result", "no_result", "check_error",
)
DEFAULT_TIMEOUT = 30.0
READY_TIMEOUT = 180.0  # starting Python and importing JAX on a busy machine; not the learner's time
RUN_PLUGIN = "jaxlings-run"

# pytest keeps global state (plugins, assertion rewriting, warnings): one run at a time per process.
_PYTEST_LOCK = threading.Lock()

HEADLINES = {
    "syntax_error": "Python cannot read your file (syntax error)",
    "import_error": "Your file could not be imported",
    "missing_name": "Something the exercise asks for is missing",
    "signature": "A function has the wrong signature",
    "exception": "Your code raised an exception",
    "timeout": "Your code took too long",
    "out_of_memory": "Your code ran out of memory",
    "crash": "The process running your code crashed",
    "exit": "Your code ended its own process",
    "not_plain_data": "Your code returned something the check cannot read",
    "wrong_result": "Wrong result",
    "no_result": "Your code returned nothing",
    "check_error": "The check could not run",
}


@dataclass
class CheckOutcome:
    name: str
    outcome: str  # "passed" | "failed" | "error" | "skipped"
    cause: str | None
    message: str
    duration: float


@dataclass
class ExerciseResult:
    exercise: str
    passed: bool
    cause: str | None  # the first failing check's cause
    message: str  # a friendly summary for the learner
    checks: list[CheckOutcome]
    duration: float
    seed: int
    output: str = ""  # the tail of what the learner's code printed

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def headline(self) -> str:
        if self.passed:
            return "All checks passed"
        return HEADLINES.get(self.cause or "check_error", "Failed")


def draw_seed(seed: int | None = None) -> int:
    if seed is not None:
        return int(seed)
    env = os.environ.get("JAXLINGS_SEED", "").strip()
    if env:
        try:
            return int(env)
        except ValueError:
            raise ValueError(f"JAXLINGS_SEED must be an integer, got {env!r}") from None
    return secrets.randbelow(2**31)


# -- settings in a check module ------------------------------------------------


@dataclass(frozen=True)
class CheckSettings:
    timeout: float | None = None
    child_env: dict[str, str] = field(default_factory=dict)


_SETTINGS_CACHE: dict[tuple[str, int], CheckSettings] = {}


def check_settings(path: Path) -> CheckSettings:
    """TIMEOUT and CHILD_ENV, read as literals from the module's source.

    Read before pytest imports the module because the child's environment must
    be chosen before the learner's process starts.
    """
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns)
    if key not in _SETTINGS_CACHE:
        timeout, env = None, {}
        for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                if name == "TIMEOUT":
                    timeout = float(ast.literal_eval(node.value))
                elif name == "CHILD_ENV":
                    env = {str(k): str(v) for k, v in ast.literal_eval(node.value).items()}
        _SETTINGS_CACHE[key] = CheckSettings(timeout, env)
    return _SETTINGS_CACHE[key]


def time_budget(exercise: Exercise, check_path: Path | None = None) -> float:
    """Seconds the learner's code may use in one check run: the manifest's timeout, else
    the check module's TIMEOUT, else DEFAULT_TIMEOUT (the rule CheckSession.run applies).
    Raises OSError, SyntaxError or ValueError for a missing or unreadable check module."""
    if exercise.timeout:
        return float(exercise.timeout)
    return check_settings(check_path or exercise.check_path()).timeout or DEFAULT_TIMEOUT


# -- the two sides a check talks to ---------------------------------------------


class LearnerProxy:
    """`learner` in checks: the learner's module in a child process."""

    def __init__(self, run: "_Run") -> None:
        self._run = run
        self._proc: LearnerProcess | None = None
        self._failure: LearnerFailure | None = None

    def _process(self) -> LearnerProcess:
        if self._failure is not None:
            raise self._failure
        if self._proc is None:
            run = self._run
            self._proc = run.session._take_child(run.child_env)
            t0 = time.monotonic()
            self._proc.wait_ready(t0 + READY_TIMEOUT)
            try:
                self._request({"op": "load", "path": self._proc.stage(run.learner_file), "display": run.display,
                               "module": run.learner_file.stem}, "while importing your file")
            except LearnerFailure as f:
                self._failure = f
                raise
        return self._proc

    def _request(self, msg: dict, during: str) -> Any:
        run = self._run
        remaining = run.budget - run.learner_time
        if remaining <= 0:
            raise LearnerFailure("timeout", f"your code used up the {run.budget:g} s allowed for this exercise.")
        assert self._proc is not None
        t0 = time.monotonic()
        try:
            return self._proc.request(msg, t0 + remaining, during=during)
        except LearnerFailure as f:
            if f.cause == "timeout":
                f.message = f"your code took longer than the {run.budget:g} s allowed {during}."
            if not self._proc.alive():
                self._failure = f  # the process is gone: every later call fails the same way
            raise
        finally:
            run.learner_time += time.monotonic() - t0

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self._process()
        return self._request({"op": "call", "name": name, **encode_args(args, kwargs)}, f"in `{name}`")

    def probe(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        self._process()
        msg = {"op": "probe", "fn": fn.__name__, "source": _probe_source(fn), **encode_args(args, kwargs)}
        return self._request(msg, f"while the check ran `{fn.__name__}` on your code")

    def has(self, name: str) -> bool:
        self._process()
        return bool(self._request({"op": "has", "name": name}, "while looking up names"))

    def output(self) -> str:
        return self._proc.output() if self._proc is not None else ""

    def close(self) -> None:
        if self._proc is not None:
            self._proc.close()


class ReferenceError_(Exception):
    """The reference solution itself failed: a problem with the course, not the learner."""


class ReferenceProxy:
    """`reference` in checks: the reference solution, imported in this (trusted) process."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = _same_inputs(args, kwargs)
        return to_plain(getattr(self._module, name)(*args, **kwargs), where=f"the reference `{name}`")

    def probe(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = _same_inputs(args, kwargs)
        return to_plain(fn(self._module, *args, **kwargs), where=f"the reference `{fn.__name__}`")

    def has(self, name: str) -> bool:
        return hasattr(self._module, name)


class ChildReferenceProxy:
    """The reference in its own (trusted) child, for checks that set CHILD_ENV:
    the environment (e.g. a forced device count) must be set before JAX starts,
    and this process's JAX has started already."""

    def __init__(self, run: "_Run") -> None:
        self._run = run
        self._proc: LearnerProcess | None = None

    def _send(self, msg: dict) -> Any:
        deadline = time.monotonic() + READY_TIMEOUT
        try:
            if self._proc is None:
                self._proc = self._run.session._new_child(self._run.child_env, trusted=True)
                self._proc.request({"op": "load", "path": str(self._run.solution_file),
                                    "module": self._run.solution_file.stem}, deadline, during="loading")
            return self._proc.request(msg, deadline, during="in the reference solution")
        except LearnerFailure as f:
            raise ReferenceError_(f"the reference solution failed ({f.cause}): {f.message}") from None

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._send({"op": "call", "name": name, **encode_args(args, kwargs)})

    def probe(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return self._send({"op": "probe", "fn": fn.__name__, "source": _probe_source(fn), **encode_args(args, kwargs)})

    def has(self, name: str) -> bool:
        return bool(self._send({"op": "has", "name": name}))

    def close(self) -> None:
        if self._proc is not None:
            self._proc.close()


def _same_inputs(args: tuple, kwargs: dict) -> tuple[list, dict]:
    """The reference gets exactly what the learner gets: plain data, decoded afresh."""
    wire = encode_args(args, kwargs)
    return from_wire(wire["args"]), from_wire(wire["kwargs"])


_PROBE_SOURCES: dict[Any, str] = {}


def _probe_source(fn: Any) -> str:
    if fn not in _PROBE_SOURCES:
        if not inspect.isfunction(fn) or fn.__qualname__ != fn.__name__:
            raise TypeError(f"a probe must be a top-level function of the check module, not {fn!r}")
        _PROBE_SOURCES[fn] = textwrap.dedent(inspect.getsource(fn))
    return _PROBE_SOURCES[fn]


# -- one run ---------------------------------------------------------------------


class _Run:
    """The plugin named `jaxlings-run`: what the fixtures in conftest.py hand to checks."""

    def __init__(self, session: "CheckSession", exercise: Exercise, learner_file: Path, solution_file: Path,
                 seed: int, budget: float, child_env: dict[str, str], display: str) -> None:
        self.session = session
        self.exercise = exercise
        self.learner_file = learner_file
        self.solution_file = solution_file
        self.seed = seed
        self.budget = budget
        self.learner_time = 0.0
        self.child_env = child_env
        self.display = display
        self.learner = LearnerProxy(self)
        self._reference: Any = None

    @property
    def reference(self) -> Any:
        if self._reference is None:
            if self.child_env:
                self._reference = ChildReferenceProxy(self)
            else:
                self._reference = ReferenceProxy(self.session._reference_module(self.solution_file))
        return self._reference

    def close(self) -> None:
        self.learner.close()
        if isinstance(self._reference, ChildReferenceProxy):
            self._reference.close()


class _Collector:
    """Collects each test's outcome from pytest's own reports, in this process."""

    def __init__(self) -> None:
        self.outcomes: dict[str, CheckOutcome] = {}
        self.order: list[str] = []
        self.collect_errors: list[CheckOutcome] = []
        self.interrupted = False
        self._causes: dict[tuple[str, str], tuple[str | None, str]] = {}

    def pytest_runtest_makereport(self, item, call):  # noqa: ANN001 - pytest hook
        if call.excinfo is not None and not call.excinfo.errisinstance(_skip_exception()):
            self._causes[(item.nodeid, call.when)] = _classify(call.excinfo)

    def pytest_runtest_logreport(self, report) -> None:  # noqa: ANN001
        name = report.nodeid.split("::", 1)[-1]
        if name not in self.outcomes:
            self.order.append(name)
            self.outcomes[name] = CheckOutcome(name, "passed", None, "", 0.0)
        current = self.outcomes[name]
        current.duration += report.duration
        if report.skipped and current.outcome == "passed":
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            current.outcome, current.message = "skipped", str(reason).removeprefix("Skipped: ")
        elif report.failed and current.outcome in ("passed", "skipped"):
            cause, message = self._causes.get((report.nodeid, report.when), ("check_error", _longrepr(report)))
            current.outcome = "failed" if report.when == "call" else "error"
            current.cause, current.message = cause, message

    def pytest_keyboard_interrupt(self, excinfo) -> None:  # noqa: ANN001
        # pytest also reports collection errors as `Session.Interrupted`, a subclass.
        self.interrupted = excinfo.type is KeyboardInterrupt

    def pytest_collectreport(self, report) -> None:  # noqa: ANN001
        if report.failed:
            self.collect_errors.append(
                CheckOutcome(report.nodeid or "collection", "error", "check_error",
                             "the check module could not be loaded:\n" + _longrepr(report), 0.0)
            )


def _skip_exception() -> type:
    import pytest

    return pytest.skip.Exception


def _classify(excinfo) -> tuple[str, str]:  # noqa: ANN001
    import pytest

    exc = excinfo.value
    if isinstance(exc, LearnerFailure):
        return exc.cause, exc.message
    if isinstance(exc, CheckFailure):
        return exc.cause, exc.message
    if isinstance(exc, ReferenceError_):
        return "check_error", str(exc)
    if isinstance(exc, (AssertionError, pytest.fail.Exception)):
        return "wrong_result", str(exc) or excinfo.exconly()
    return "check_error", (
        "the check could not use what your code returned "
        f"({type(exc).__name__}: {str(exc)[:500]}). Compare what you return with what the exercise asks for."
    )


def _longrepr(report) -> str:  # noqa: ANN001
    text = str(report.longrepr)
    return text if len(text) < 3000 else "..." + text[-3000:]


# -- the session -------------------------------------------------------------------


class CheckSession:
    """Runs checks; owns the warm child. Long-lived in `watch`, the app and the grader.

    `isolation` is the sandbox learner children run in (`course.engine.isolation`):
    "auto" (the default) takes the strongest that works here, once per process;
    None starts a plain child shaped only by `child_argv_prefix` (wraps the
    command), `child_env` (replaces the inherited environment) and `cwd` (its
    working directory; default a fresh temporary folder per child).
    `sandbox_slot` and `sandbox_copy` serve the grader's `uid` tier.
    """

    def __init__(
        self,
        *,
        warm: bool = True,
        child_argv_prefix: list[str] | tuple[str, ...] = (),
        child_env: dict[str, str] | None = None,
        cwd: str | os.PathLike | None = None,
        memory_mb: int = DEFAULT_MEMORY_MB,
        extra_check_dirs: tuple[Path, ...] | list[Path] = (),
        isolation: Isolation | str | None = "auto",
        sandbox_slot: int = 0,
        sandbox_copy: Path | None = None,
    ) -> None:
        # One probe per process ("auto"), shared by every session in it.
        self.isolation: Isolation | None = for_checks() if isolation == "auto" else isolation  # type: ignore
        self.sandbox_slot = sandbox_slot
        self.sandbox_copy = sandbox_copy
        self.child_argv_prefix = tuple(child_argv_prefix)
        self.child_env = child_env
        self.cwd = cwd
        self.memory_mb = memory_mb
        self.extra_check_dirs = tuple(Path(p) for p in extra_check_dirs)
        self._references: dict[tuple[str, int], Any] = {}
        self._pool = WarmPool(lambda: self._new_child({})) if warm else None
        self._closed = False
        if warm:
            self._pool.prestart()
            _warm_parent()

    def wait_warm(self, timeout: float = READY_TIMEOUT) -> bool:
        """Block until the next check will get a ready child (False without a warm pool)."""
        return self._pool.wait_ready(timeout) if self._pool is not None else False

    # -- children --------------------------------------------------------------
    def _new_child(self, extra_env: dict[str, str], trusted: bool = False) -> LearnerProcess:
        if not trusted and self.isolation is not None:
            box = self.isolation.sandbox(slot=self.sandbox_slot, copy=self.sandbox_copy)
            try:
                return LearnerProcess(env=box.env(extra_env, base=self.child_env), sandbox=box,
                                      argv_prefix=self.child_argv_prefix, memory_mb=self.memory_mb)
            except BaseException:
                box.close()
                raise
        return LearnerProcess(
            env=child_environment(self.child_env, extra_env),
            argv_prefix=() if trusted else self.child_argv_prefix,
            cwd=None if trusted else self.cwd,
            memory_mb=self.memory_mb,
        )

    def _take_child(self, extra_env: dict[str, str]) -> LearnerProcess:
        if self._pool is not None and not extra_env:
            return self._pool.take()
        return self._new_child(extra_env)

    def _reference_module(self, path: Path) -> Any:
        key = (str(path), path.stat().st_mtime_ns)
        if key not in self._references:
            name = f"jaxlings_reference_{path.stem}_{len(self._references)}"
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise ReferenceError_(f"cannot import the reference solution {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except Exception as e:
                sys.modules.pop(name, None)
                raise ReferenceError_(f"the reference solution {path} failed to import: {e!r}") from e
            self._references[key] = module
        return self._references[key]

    def _find_check(self, exercise: Exercise, extra_dirs: tuple[Path, ...]) -> Path:
        for d in (*extra_dirs, *self.extra_check_dirs):
            candidate = Path(d) / f"{exercise.check}.py"
            if candidate.is_file():
                return candidate
        return exercise.check_path()

    # -- running -----------------------------------------------------------------
    def run(
        self,
        exercise: Exercise,
        *,
        learner_file: str | os.PathLike | None = None,
        seed: int | None = None,
        extra_check_dirs: tuple | list = (),
        env: dict[str, str] | None = None,
    ) -> ExerciseResult:
        if self._closed:
            raise RuntimeError("this CheckSession is closed")
        start = time.monotonic()
        seed = draw_seed(seed)
        learner_path = Path(learner_file) if learner_file is not None else exercise.exercise_path()
        learner_path = learner_path.resolve()

        def early(cause: str, message: str) -> ExerciseResult:
            message = f"{message}\n(seed {seed})"
            outcome = CheckOutcome("setup", "error", cause, message, 0.0)
            return ExerciseResult(exercise.name, False, cause, message, [outcome], time.monotonic() - start, seed)

        check_path = self._find_check(exercise, tuple(Path(p) for p in extra_check_dirs))
        if not learner_path.is_file():
            return early("import_error", f"{_display(learner_path, exercise)} does not exist. "
                         f"`jaxlings reset {exercise.name}` restores the starter file.")
        if not check_path.is_file():
            return early("check_error", f"the check module {check_path.name} is missing from this course.")
        try:
            settings = check_settings(check_path)
        except (SyntaxError, ValueError, TypeError) as e:
            return early("check_error", f"the check module {check_path.name} has unreadable settings: {e}")
        budget = exercise.timeout or settings.timeout or DEFAULT_TIMEOUT
        child_env = {**settings.child_env, **(env or {})}
        run = _Run(self, exercise, learner_path, exercise.solution_path(), seed, budget, child_env,
                   _display(learner_path, exercise))
        collector = _Collector()
        try:
            with _PYTEST_LOCK:
                exit_code = _run_pytest(check_path, run, collector, seed)
        finally:
            output = run.learner.output()
            run.close()
        return _result(exercise, collector, exit_code, seed, time.monotonic() - start, output)

    def close(self) -> None:
        self._closed = True
        if self._pool is not None:
            self._pool.close()

    def __enter__(self) -> "CheckSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _display(path: Path, exercise: Exercise) -> str:
    """The learner's file as they know it: relative to the workspace when inside it."""
    from course.catalog import default_workspace

    try:
        return str(path.relative_to(default_workspace(exercise.root).resolve()))
    except ValueError:
        return path.name


def _warm_parent() -> None:
    import pytest  # noqa: F401
    import numpy  # noqa: F401
    import jax
    import jax.numpy as jnp
    import optax  # noqa: F401
    from flax import nnx  # noqa: F401

    jax.block_until_ready(jnp.zeros(1) + 1)


def _run_pytest(check_path: Path, run: _Run, collector: _Collector, seed: int) -> int:
    import pytest

    from course.checks import conftest

    # A check module of the same name from another folder must not be reused.
    stale = sys.modules.get(check_path.stem)
    if stale is not None and Path(getattr(stale, "__file__", "") or "").resolve() != check_path.resolve():
        del sys.modules[check_path.stem]
    args = [
        str(check_path),
        "-p", "no:cacheprovider", "-p", "no:terminal", "-p", "no:stepwise", "-p", "no:pastebin",
        # These two run gc.collect() five times per session: seconds with JAX loaded.
        "-p", "no:unraisableexception", "-p", "no:threadexception",
        "--noconftest",  # fixtures come from course.checks.conftest, registered below; nothing else
        "-c", os.devnull,  # no ini file: the project's pytest settings must not apply to checks
        "--rootdir", str(check_path.parent),
        "--import-mode=importlib",
        "--capture=sys",
        "--disable-plugin-autoload",
        "-o", "python_files=test_*.py",
    ]
    checking._current_seed = seed
    try:
        code = pytest.main(args, plugins=[collector, conftest, _RunRegistrar(run)])
    finally:
        checking._current_seed = None
    if collector.interrupted:  # Ctrl-C, not pytest's "interrupted" for collection errors
        raise KeyboardInterrupt
    return int(code)


class _RunRegistrar:
    """Registers the run under the name conftest.py looks up."""

    def __init__(self, run: _Run) -> None:
        self.run = run

    def pytest_configure(self, config) -> None:  # noqa: ANN001 - pytest hook
        config.pluginmanager.register(self.run, RUN_PLUGIN)


def _result(exercise: Exercise, collector: _Collector, exit_code: int, seed: int, duration: float,
            output: str) -> ExerciseResult:
    checks = [*collector.collect_errors, *(collector.outcomes[n] for n in collector.order)]
    failing = [c for c in checks if c.outcome in ("failed", "error")]
    ran = [c for c in checks if c.outcome == "passed"]
    if not failing and not ran:
        failing.append(CheckOutcome("collection", "error", "check_error",
                                    "the check module ran no checks, so nothing was verified.", 0.0))
        checks.append(failing[0])
    if not failing and exit_code != 0:
        # pytest itself says something went wrong that no test report shows.
        failing.append(CheckOutcome("session", "error", "check_error",
                                    f"the check run ended abnormally (pytest exit code {exit_code}).", 0.0))
        checks.append(failing[0])
    _point_to_first_report(failing)
    passed = not failing
    seed_line = f"(seed {seed}: rerun with JAXLINGS_SEED={seed})"
    if passed:
        message = f"All {len(ran)} checks passed."
    else:
        first = failing[0]
        text = first.message if "(seed " in first.message else f"{first.message}\n{seed_line}"
        count = f"{len(failing)} of {len(checks)} checks failed; first: {first.name}"
        message = f"{HEADLINES.get(first.cause or 'check_error', 'Failed')}: {count}\n{text}"
    return ExerciseResult(
        exercise=exercise.name,
        passed=passed,
        cause=None if passed else failing[0].cause,
        message=message,
        checks=checks,
        duration=duration,
        seed=seed,
        output=output,
    )


def _point_to_first_report(failing: list[CheckOutcome]) -> None:
    """A file that does not load, a loop that used up the time, a process that died:
    every later check meets the same failure. Say it once, in full, and let the
    later checks point back to it instead of repeating a traceback six times."""
    first_with: dict[tuple[str | None, str], str] = {}
    for check in failing:
        key = (check.cause, check.message)
        if key in first_with and check.message:
            headline = HEADLINES.get(check.cause or "check_error", "the same failure")
            check.message = f"{headline}: the same failure as in {first_with[key]}, above."
        else:
            first_with.setdefault(key, check.name)


def run_exercise(exercise: Exercise, **kw: Any) -> ExerciseResult:
    """Check one exercise in a short-lived session (a cold child; no warm-up)."""
    with CheckSession(warm=False) as session:
        return session.run(exercise, **kw)
