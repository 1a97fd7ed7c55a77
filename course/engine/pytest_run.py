"""pytest, run in this (trusted) process on a check module: its outcomes collected
by a plugin object here, never from anything the learner's child prints or writes."""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from pluggy import HookimplMarker

from course.engine import checking
from course.catalog import Exercise
from course.engine.checking import CheckFailure, LearnerFailure, has_seed_line, seed_line
from course.engine.check_run import DEFAULT_MESSAGES, ReferenceError_
from course.engine.results import CheckOutcome, ExerciseResult, headline
from course.engine.words import N_, _

if TYPE_CHECKING:
    from course.engine.check_run import _Run

RUN_PLUGIN = "jaxlings-run"

# pytest keeps global state (plugins, assertion rewriting, warnings): one run at a time per process.
_PYTEST_LOCK = threading.Lock()


class _Collector:
    """Collects each test's outcome from pytest's own reports, in this process."""

    def __init__(self, messages: dict[str, str] | None = None,
                 on_outcome: Callable[[CheckOutcome], None] | None = None) -> None:
        self.messages = messages or {}
        # Told each test's outcome as soon as pytest knows it (its call phase, or a setup that
        # failed or skipped): what `check`, `watch` and the app show while later tests still run.
        self.on_outcome = on_outcome
        self._told: set[str] = set()
        self.outcomes: dict[str, CheckOutcome] = {}
        self.order: list[str] = []
        self.collect_errors: list[CheckOutcome] = []
        self.interrupted = False
        self._causes: dict[tuple[str, str], tuple[str | None, str]] = {}
        self._places: dict[tuple[str, str], tuple[str | None, int | None]] = {}

    def pytest_runtest_makereport(self, item, call):  # noqa: ANN001 - pytest hook
        if call.excinfo is not None and not call.excinfo.errisinstance(_skip_exception()):
            self._causes[(item.nodeid, call.when)] = _classify(call.excinfo, call.when, self.messages)
            self._places[(item.nodeid, call.when)] = _place(call.excinfo.value)

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
            current.file, current.line = self._places.get((report.nodeid, report.when), (None, None))
        if self.on_outcome is not None and name not in self._told and (
                report.when == "call" or report.when == "setup" and not report.passed):
            self._told.add(name)
            try:
                self.on_outcome(replace(current))
            except Exception:  # noqa: BLE001 - a display that failed never changes a verdict
                self.on_outcome = None

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


# Errors that no return value can cause in a check: the check module itself is broken.
_CHECK_BUGS = (NameError, ImportError, SyntaxError, NotImplementedError, RecursionError)


def _place(exc: BaseException) -> tuple[str | None, int | None]:
    """The learner's file and line a failure happened at, as `course.engine.check_run` checked
    them against the file (never read back out of the message, which may be in any language)."""
    if isinstance(exc, LearnerFailure):
        line = exc.details.get("line")
        if isinstance(line, int) and not isinstance(line, bool) and isinstance(exc.details.get("file"), str):
            return exc.details["file"], line
    return None, None


def _classify(excinfo, when: str = "call", messages: dict[str, str] | None = None) -> tuple[str, str]:  # noqa: ANN001
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
    name = type(exc).__name__
    if name == "KeyReuseError" and _raised_by_jax(exc):
        # A program of the learner's, run here under jax.debug_key_reuse (the reference's errors
        # are ReferenceError_): their mistake, in the check's words.
        friendly = (messages or {}).get(name) or _(DEFAULT_MESSAGES[name])
        return "exception", friendly
    if when != "call" or isinstance(exc, _CHECK_BUGS) or _module_attribute_error(exc):
        return "check_error", (
            f"the check itself failed ({name}: {str(exc)[:500]}). This is a problem in the course, "
            "not in your code; please report it.\n" + _check_frames(excinfo)
        )
    return "check_error", (
        "the check could not use what your code returned "
        f"({name}: {str(exc)[:500]}). Compare what you return with what the exercise asks for."
    )


def _raised_by_jax(exc: BaseException) -> bool:
    return type(exc).__module__.split(".")[0] == "jax"


def _module_attribute_error(exc: BaseException) -> bool:
    import types

    return isinstance(exc, AttributeError) and isinstance(getattr(exc, "obj", None), types.ModuleType)


def _check_frames(excinfo) -> str:  # noqa: ANN001
    """The check module's own lines in the traceback, for whoever fixes it."""
    import traceback

    frames = [f for f in traceback.extract_tb(excinfo.tb) if Path(f.filename).name.startswith("test_")]
    return "\n".join(f"  {Path(f.filename).name}, line {f.lineno}, in {f.name}: {(f.line or '').strip()}"
                     for f in frames[-3:])


def _longrepr(report) -> str:  # noqa: ANN001
    text = str(report.longrepr)
    return text if len(text) < 3000 else "..." + text[-3000:]


_CALLER_PYTEST_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DEBUG", "PYTEST_DEBUG_TEMPROOT",
                      "PYTEST_THEME", "PYTEST_THEME_MODE")


def _run_pytest(check_path: Path, run: _Run, collector: _Collector, seed: int, first_failure: bool = False) -> int:
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
        *(["--exitfirst"] if first_failure else []),
    ]
    checking._current_seed = seed
    # The caller's pytest settings are not the check's: PYTEST_ADDOPTS (say "-v --junitxml=...")
    # would change what runs and where reports go, PYTEST_PLUGINS would load plugins. Held off
    # while the check runs (under _PYTEST_LOCK), then given back to the process.
    held = {name: os.environ.pop(name) for name in _CALLER_PYTEST_ENV if name in os.environ}
    try:
        code = pytest.main(args, plugins=[collector, conftest, _RunRegistrar(run)])
    finally:
        checking._current_seed = None
        os.environ.update(held)
    if collector.interrupted:  # Ctrl-C, not pytest's "interrupted" for collection errors
        raise KeyboardInterrupt
    return int(code)


_pytest_hook = HookimplMarker("pytest")  # pytest.hookimpl, without importing pytest before a check runs


class _RunRegistrar:
    """Registers the run under the name conftest.py looks up, and tells it which test is running:
    from before its fixtures are set up until after they are torn down (`_Run.trace`)."""

    def __init__(self, run: _Run) -> None:
        self.run = run

    def pytest_configure(self, config) -> None:  # noqa: ANN001 - pytest hook
        config.pluginmanager.register(self.run, RUN_PLUGIN)

    @_pytest_hook(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):  # noqa: ANN001 - pytest hook
        self.run.begin_test(item.nodeid.split("::", 1)[-1])
        try:
            return (yield)
        finally:
            self.run.end_test()


def _result(exercise: Exercise, collector: _Collector, exit_code: int, seed: int, duration: float,
            output: str, trace: dict | None = None) -> ExerciseResult:
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
    if passed:
        message = _("All {n} checks passed.").format(n=len(ran))
    else:
        first = failing[0]
        text = first.message if has_seed_line(first.message) else f"{first.message}\n{seed_line(seed)}"
        count = _("{failed} of {total} checks failed; first: {name}").format(
            failed=len(failing), total=len(checks), name=first.name)
        message = f"{headline(first.cause)}: {count}\n{text}"
    return ExerciseResult(
        exercise=exercise.name,
        passed=passed,
        cause=None if passed else failing[0].cause,
        message=message,
        checks=checks,
        duration=duration,
        seed=seed,
        output=output,
        file=next((c.file for c in failing if c.line is not None), None),
        line=next((c.line for c in failing if c.line is not None), None),
        trace=trace or {},
    )


def _point_to_first_report(failing: list[CheckOutcome]) -> None:
    """A file that does not load, a loop that used up the time, a process that died:
    every later check meets the same failure. Say it once, in full, and let the
    later checks point back to it instead of repeating a traceback six times."""
    first_with: dict[tuple[str | None, str], str] = {}
    for check in failing:
        key = (check.cause, check.message)
        if key in first_with and check.message:
            check.message = _("{headline}: the same failure as in {name}, above.").format(
                headline=headline(check.cause, N_("the same failure")), name=first_with[key])
        else:
            first_with.setdefault(key, check.name)
