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
import hashlib
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

from pluggy import HookimplMarker

from course import paths
from course.engine import checking
from course.catalog import Exercise, checks_dir
from course.engine.checking import CheckFailure, LearnerFailure, has_seed_line, seed_line
from course.engine.words import N_, _, render
from course.engine.wire import from_wire, to_plain, to_wire
from course.engine import compile_flags
from course.engine.caches import (CACHE_MAX_BYTES, CompileCache, cache_env as _cache_env,  # noqa: F401 - kept names
                                  trim as _trim_cache, usable_cache as _usable_cache,
                                  use_trusted_cache as _use_trusted_cache, workspace_compile_cache)
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

# In English; `headline()` gives them in the language in use.
HEADLINES = {
    "syntax_error": N_("Python cannot read your file (syntax error)"),
    "import_error": N_("Your file could not be imported"),
    "missing_name": N_("Something the exercise asks for is missing"),
    "signature": N_("A function has the wrong signature"),
    "exception": N_("Your code raised an exception"),
    "timeout": N_("Your code took too long"),
    "out_of_memory": N_("Your code ran out of memory"),
    "crash": N_("The process running your code crashed"),
    "exit": N_("Your code ended its own process"),
    "not_plain_data": N_("Your code returned something the check cannot read"),
    "wrong_result": N_("Wrong result"),
    "no_result": N_("Your code returned nothing"),
    "check_error": N_("The check could not run"),
}


def headline(cause: str | None, default: str = N_("Failed")) -> str:
    """The headline of a failure cause, in the language in use."""
    return _(HEADLINES.get(cause or "check_error", default))


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
    # What each test asked of the learner's process and of the evaluator: {test: {"call": n, "probe": n,
    # "has": n, "programs": n}} (`jaxlings dev check` compares it with the evidence a check declares).
    trace: dict = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("trace")
        return d

    @property
    def headline(self) -> str:
        if self.passed:
            return _("All checks passed")
        return headline(self.cause)


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
    # Friendly messages by exception name (e.g. "KeyReuseError"), for errors the
    # check provokes on purpose in the learner's code.
    messages: dict[str, str] = field(default_factory=dict)
    # False for a check whose reference results depend on more than their inputs
    # (a clock, files): the reference then runs every time.
    cache_reference: bool = True
    # How many times the check calls `learner.restart()`: the session keeps a process
    # ready for it, as it does for the first.
    fresh_learners: int = 0


_SETTINGS_CACHE: dict[tuple[str, int], CheckSettings] = {}


def check_settings(path: Path) -> CheckSettings:
    """TIMEOUT, CHILD_ENV, MESSAGES, CACHE_REFERENCE and FRESH_LEARNERS, read as literals from the module's source.

    Read before pytest imports the module because the child's environment must
    be chosen before the learner's process starts.
    """
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns)
    if key not in _SETTINGS_CACHE:
        timeout, env, messages, cache_reference, fresh = None, {}, {}, True, 0
        for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                if name == "TIMEOUT":
                    timeout = float(ast.literal_eval(node.value))
                elif name == "CHILD_ENV":
                    env = {str(k): str(v) for k, v in ast.literal_eval(node.value).items()}
                elif name == "MESSAGES":
                    messages = {str(k): str(v) for k, v in ast.literal_eval(node.value).items()}
                elif name == "CACHE_REFERENCE":
                    cache_reference = bool(ast.literal_eval(node.value))
                elif name == "FRESH_LEARNERS":
                    fresh = int(ast.literal_eval(node.value))
        _SETTINGS_CACHE[key] = CheckSettings(timeout, env, messages, cache_reference, fresh)
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
        self._loaded_path = ""
        # A request may run on another thread (`checking.side_by_side`) and still be
        # starting the child when the run is closed (Ctrl-C): no child may outlive it.
        self._lock = threading.Lock()
        self._closed = False
        self._restarts = 0
        self._earlier_output = ""

    def _process(self) -> LearnerProcess:
        if self._failure is not None:
            raise self._failure
        if self._proc is None:
            run = self._run
            if self._restarts:
                proc = run.session._fresh_child(run.learner_file, run.child_env)
            else:
                proc = run.session._take_child(run.child_env)
            with self._lock:
                if self._closed:
                    proc.close()
                    raise LearnerFailure("check_error", _("the check run was stopped."))
                self._proc = proc
            t0 = time.monotonic()
            self._proc.wait_ready(t0 + READY_TIMEOUT)
            self._loaded_path = self._proc.stage(run.learner_file)
            try:
                self._request({"op": "load", "path": self._loaded_path, "display": run.display,
                               "module": run.learner_file.stem}, _("while importing your file"))
            except LearnerFailure as f:
                self._failure = f
                raise
        return self._proc

    def _request(self, msg: dict, during: str, pauses: dict[str, float] | None = None) -> Any:
        run = self._run
        remaining = run.budget - run.learner_time
        if remaining <= 0:
            raise LearnerFailure("timeout", _("your code used up the {budget} s allowed for this exercise.").format(
                budget=f"{run.budget:g}"))
        assert self._proc is not None
        t0 = time.monotonic()
        # The child writes its stacks a little before the limit, so a timeout can name the running line.
        msg = {**msg, "dump_after": max(0.1, remaining - min(1.0, remaining * 0.1))}
        try:
            return self._proc.request(msg, t0 + remaining, during=during, pauses=pauses)
        except LearnerFailure as f:
            # The child says it in English; the same lines are built here in the learner's language.
            said = render(f.details.pop("words", None))
            said = said[:20000] if said else said
            if said:
                f.message = said
            if f.cause == "timeout":
                f.message = _("your code took longer than the {budget:g} s allowed {during}.").format(
                    budget=run.budget, during=during)
                running = _running_line(f.details.get("stack"), self._loaded_path, run.learner_file, run.display)
                if running:
                    f.message += "\n" + _("It was running {where}").format(where=running)
            elif f.cause == "exception":
                _befriend(f, run)
            if not self._proc.alive():
                self._failure = f  # the process is gone: every later call fails the same way
            raise
        finally:
            run.learner_time += time.monotonic() - t0

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self._process()
        self._run.note("call")
        return self._request({"op": "call", "name": name, **encode_args(args, kwargs)}, _("in `{name}`").format(
            name=name))

    def probe(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        self._process()
        self._run.note("probe")
        msg = {"op": "probe", "fn": fn.__name__, "source": _probe_source(fn), **encode_args(args, kwargs)}
        return self._request(msg, _("while the check ran `{name}` on your code").format(name=fn.__name__))

    def probe_with_pauses(self, pauses: dict[str, float], fn: Any, *args: Any, **kwargs: Any) -> Any:
        """`probe`, with waits whose lengths stay on this side: the probe's code calls
        `course.engine.child.pause(name)` and returns after `pauses[name]` seconds."""
        self._process()
        self._run.note("probe")
        msg = {"op": "probe", "fn": fn.__name__, "source": _probe_source(fn), **encode_args(args, kwargs)}
        return self._request(msg, _("while the check ran `{name}` on your code").format(name=fn.__name__),
                             pauses=pauses)

    def has(self, name: str) -> bool:
        self._process()
        self._run.note("has")
        return bool(self._request({"op": "has", "name": name}, _("while looking up names")))

    def restart(self) -> None:
        """End the learner's process; the next request imports the learner's file in a new one.

        For evidence that must come from a process that never saw what the check
        sent before (a checkpoint restored from its files alone, an order that
        depends on nothing computed earlier). The new process shares nothing
        writable with the old one: in a sandbox its /tmp and home are its own, and
        it runs without the learner's compilation cache, the one folder learner
        processes share.
        """
        with self._lock:
            proc, self._proc = self._proc, None
            self._restarts += 1
        if proc is not None:
            proc.close()
            self._earlier_output += proc.output()

    def output(self) -> str:
        return self._earlier_output + (self._proc.output() if self._proc is not None else "")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            proc = self._proc
        if proc is not None:
            proc.close()


# What an error the checks provoke on purpose means, when the check module says nothing (MESSAGES).
DEFAULT_MESSAGES = {
    "KeyReuseError": N_(
        "your code used a PRNG key that had already been used (the check runs it with "
        "jax.debug_key_reuse on). In JAX every key is used once: split it with jax.random.split "
        "(or derive one with jax.random.fold_in) and give each random call a new key."
    ),
}


def _befriend(f: LearnerFailure, run: "_Run") -> None:
    """An error the check provoked on purpose gets the check's own words, and the learner's line."""
    error = f.details.get("error")
    friendly = run.settings.messages.get(error) if isinstance(error, str) else None
    friendly = friendly or (DEFAULT_MESSAGES.get(error) if isinstance(error, str) else None)
    if not friendly:
        return
    line = f.details.get("line")
    where = _source_line(run.learner_file, run.display, line) if isinstance(line, int) else ""
    f.message = _(friendly) + ("\n" + _("It happened at {where}").format(where=where) if where else "")


def _source_line(path: Path, display: str, line: int) -> str:
    """`line N of <file>: <source>`, the source read here (the child's word is only the number)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    source = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return _("line {line} of {file}").format(line=line, file=display) + (f": {source}" if source else "")


def _running_line(stack: Any, loaded: str, path: Path, display: str) -> str:
    """The innermost line of the learner's file in a faulthandler dump of the child."""
    if not isinstance(stack, str) or not loaded:
        return ""
    prefix = f'File "{loaded}", line '
    for row in stack.splitlines():  # most recent call first
        row = row.strip()
        if row.startswith(prefix):
            number = row[len(prefix):].split(" ", 1)[0]
            if number.isdigit():
                return _source_line(path, display, int(number))
    return ""


class ReferenceError_(Exception):
    """The reference solution itself failed: a problem with the course, not the learner."""


class ReferenceProxy:
    """`reference` in checks: the reference solution, imported in this (trusted) process.

    Results are kept by exact input (`_ResultCache`), so a check that asks the
    same question again (a fixed case, a replayed seed) does not pay twice.
    Anything the reference raises is the course's fault, never the learner's.
    """

    def __init__(self, module: Any, identity: str = "", cache: "_ResultCache | None" = None) -> None:
        self._module = module
        self._identity = identity
        self._cache = cache

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._answer(("call", name), lambda a, k: getattr(self._module, name)(*a, **k), args, kwargs,
                            f"the reference `{name}`")

    def probe(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return self._answer(("probe", fn.__name__, _probe_source(fn)), lambda a, k: fn(self._module, *a, **k),
                            args, kwargs, f"the reference `{fn.__name__}`")

    def has(self, name: str) -> bool:
        return hasattr(self._module, name)

    def _answer(self, what: tuple, compute: Any, args: tuple, kwargs: dict, where: str) -> Any:
        # The reference gets exactly what the learner gets: plain data, decoded afresh.
        wire = encode_args(args, kwargs)
        key = None
        if self._cache is not None:
            key = _result_key(self._identity, what, wire)
            hit = self._cache.get(key)
            if hit is not None:
                return from_wire(hit)
        try:
            value = compute(from_wire(wire["args"]), from_wire(wire["kwargs"]))
            plain = to_plain(value, where=where)
        except Exception as e:  # noqa: BLE001 - skips (BaseException) pass through
            raise ReferenceError_(_reference_failure(e, where)) from e
        if key is not None:
            self._cache.put(key, to_wire(plain))
        return plain


def _reference_failure(e: BaseException, where: str) -> str:
    import traceback

    tail = traceback.format_exception(type(e), e, e.__traceback__)
    text = "".join(tail[-6:]).strip()
    return (f"{where} raised {type(e).__name__}: {str(e)[:500]}. This is a problem in the course itself, "
            f"not in your code; please report it.\n{text[-2000:]}")


def _result_key(identity: str, what: tuple, wire: dict) -> str:
    import json

    import jax

    h = hashlib.sha256()
    for part in (identity, *what, str(jax.config.jax_enable_x64)):
        h.update(str(part).encode("utf-8", "surrogateescape") + b"\0")
    h.update(json.dumps(wire, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


class _ResultCache:
    """Reference results as wire data, by key; the oldest go first past `max_bytes`."""

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        from collections import OrderedDict

        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self.hits = 0

    def get(self, key: str) -> Any:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry[0]

    def put(self, key: str, wire: Any) -> None:
        import json

        size = len(json.dumps(wire, separators=(",", ":")))
        if size > self.max_bytes // 4:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = (wire, size)
            self._size += size
            while self._size > self.max_bytes:
                _key, (_wire, old) = self._entries.popitem(last=False)
                self._size -= old


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
                self._proc = self._run.session._take_trusted_child(self._run.child_env)
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
                 seed: int, budget: float, child_env: dict[str, str], display: str,
                 settings: CheckSettings = CheckSettings()) -> None:
        self.session = session
        self.settings = settings
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
        self.trace: dict[str, dict[str, int]] = {}
        self._test = ""
        self._programs_before = 0

    def note(self, what: str) -> None:
        """Count one request of the test now running (ExerciseResult.trace)."""
        counts = self.trace.setdefault(self._test, {"call": 0, "probe": 0, "has": 0, "programs": 0})
        counts[what] = counts.get(what, 0) + 1

    def begin_test(self, name: str) -> None:
        from course.engine import programs

        self._test = name
        self.trace.setdefault(name, {"call": 0, "probe": 0, "has": 0, "programs": 0})
        self._programs_before = programs.REQUESTS_DONE

    def end_test(self) -> None:
        from course.engine import programs

        self.trace[self._test]["programs"] += programs.REQUESTS_DONE - self._programs_before
        self._programs_before = programs.REQUESTS_DONE

    @property
    def reference(self) -> Any:
        if self._reference is None:
            if self.child_env:
                self._reference = ChildReferenceProxy(self)
            else:
                module, identity = self.session._reference_module(self.solution_file)
                cache = self.session._reference_results if self.settings.cache_reference else None
                self._reference = ReferenceProxy(module, identity, cache)
        return self._reference

    def close(self) -> None:
        self.learner.close()
        if isinstance(self._reference, ChildReferenceProxy):
            self._reference.close()


class _Collector:
    """Collects each test's outcome from pytest's own reports, in this process."""

    def __init__(self, messages: dict[str, str] | None = None) -> None:
        self.messages = messages or {}
        self.outcomes: dict[str, CheckOutcome] = {}
        self.order: list[str] = []
        self.collect_errors: list[CheckOutcome] = []
        self.interrupted = False
        self._causes: dict[tuple[str, str], tuple[str | None, str]] = {}

    def pytest_runtest_makereport(self, item, call):  # noqa: ANN001 - pytest hook
        if call.excinfo is not None and not call.excinfo.errisinstance(_skip_exception()):
            self._causes[(item.nodeid, call.when)] = _classify(call.excinfo, call.when, self.messages)

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


# Errors that no return value can cause in a check: the check module itself is broken.
_CHECK_BUGS = (NameError, ImportError, SyntaxError, NotImplementedError, RecursionError)


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


# -- the session -------------------------------------------------------------------


class CheckSession:
    """Runs checks; owns the warm child. Long-lived in `watch`, the app and the grader.

    `isolation` is the sandbox learner children run in (`course.engine.isolation`):
    "auto" (the default) takes the strongest that works here, once per process;
    None starts a plain child shaped only by `child_argv_prefix` (wraps the
    command), `child_env` (replaces the inherited environment) and `cwd` (its
    working directory; default a fresh temporary folder per child).
    `sandbox_slot` and `sandbox_copy` serve the grader's `uid` tier. `fork_children` forks
    the learner children from a zygote of the session's own (`course.engine.zygote`; the
    unshare tier only): about 2 CPU-seconds less per child, about 170 MiB more while it lasts.
    `compile_cache`
    keeps compiled programs between processes (`workspace_compile_cache()`;
    default none). `warm` keeps a child ready for every run, one per child
    environment a check asks for (CHILD_ENV; the latest such one only), and
    for those checks the reference's own child too. `prestart` (an exercise)
    starts, now, the children that one check of it will need, for a session
    that runs only that check.
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
        compile_cache: CompileCache | None = None,
        prestart: Exercise | None = None,
        prestart_file: str | os.PathLike | None = None,
        isolation: Isolation | str | None = "auto",
        sandbox_slot: int = 0,
        sandbox_copy: Path | None = None,
        fork_children: bool = False,
    ) -> None:
        # Compiling faster, on every side of the check or on none (before any child's environment is made).
        compile_flags.adopt()
        # One probe per process ("auto"), shared by every session in it.
        self.isolation: Isolation | None = for_checks() if isolation == "auto" else isolation  # type: ignore
        self.sandbox_slot = sandbox_slot
        self.sandbox_copy = sandbox_copy
        self.child_argv_prefix = tuple(child_argv_prefix)
        self.child_env = child_env
        self.cwd = cwd
        self.memory_mb = memory_mb
        self.extra_check_dirs = tuple(Path(p) for p in extra_check_dirs)
        self.compile_cache = _usable_cache(compile_cache, self._children_isolated(),
                                           getattr(self.isolation, "learner_cache_owner", None))
        self.zygote = self._start_zygote() if fork_children else None
        self._references: dict[tuple[str, int], Any] = {}
        self._reference_results: _ResultCache = _ResultCache()
        self._preload: dict[str, str] = {}  # what the next warm child imports ahead of time
        self._warm = warm
        self._pools: dict[tuple, WarmPool] = {}
        self._pool = self._pool_for({}, trusted=False)
        self._prestarted: dict[tuple, LearnerProcess] = {}
        self._closed = False
        if self._pool is not None:
            self._pool.prestart()
        if prestart is not None:
            self._prestart_for(prestart, prestart_file)
        if self.compile_cache is not None and self.compile_cache.trusted is not None:
            _use_trusted_cache(self.compile_cache.trusted)
        # Learner programs are read and run by the evaluator (course.engine.evaluator), in the
        # learner's sandbox where that is one; a warm session starts it ahead, like its children.
        from course.engine import evaluator

        evaluator.use_isolation(self.isolation if self._children_isolated() else None)
        if warm or prestart is not None:
            evaluator.shared().prestart()
            _warm_parent()

    def wait_warm(self, timeout: float = READY_TIMEOUT) -> bool:
        """Block until the next check will get a ready child (False without a warm pool)."""
        return self._pool.wait_ready(timeout) if self._pool is not None else False

    # -- children --------------------------------------------------------------
    def _children_isolated(self) -> bool:
        """Whether learner children run where the workspace's .jaxlings/ does not exist (a sandbox)."""
        return bool(getattr(getattr(self, "isolation", None), "sandboxed", False))

    def _start_zygote(self):
        """A zygote of this session's own (`course.engine.zygote`), where its children are
        sandboxed by the unshare tier: started with the environment they get, it ends with it."""
        if getattr(self.isolation, "tier", None) != "unshare":
            return None
        # Importing JAX sets variables in this process's environment, which children inherit:
        # settled first, so that the children started after it match the zygote's environment.
        import jax  # noqa: F401

        from course.engine.caches import cache_env
        from course.engine.isolation import INSIDE_CACHE, INSIDE_HOME, child_env
        from course.engine.zygote import Zygote

        learner_cache = self.compile_cache is not None and self.compile_cache.learner is not None
        return Zygote(child_env(home=INSIDE_HOME, tmp="/tmp", base=self.child_env,
                                extra=cache_env(Path(INSIDE_CACHE)) if learner_cache else None))

    def _new_child(self, extra_env: dict[str, str], trusted: bool = False, cache: bool = True) -> LearnerProcess:
        if not trusted and self.isolation is not None:
            learner_cache = self.compile_cache.learner if self.compile_cache is not None and cache else None
            box = self.isolation.sandbox(slot=self.sandbox_slot, copy=self.sandbox_copy, cache=learner_cache)
            try:
                return LearnerProcess(env=box.env(extra_env, base=self.child_env), sandbox=box,
                                      argv_prefix=self.child_argv_prefix, memory_mb=self.memory_mb,
                                      zygote=self.zygote)
            except BaseException:
                box.close()
                raise
        cache_env = ({} if self.compile_cache is None or not (cache or trusted) else
                     self.compile_cache.trusted_env() if trusted else self.compile_cache.learner_env())
        return LearnerProcess(
            env=child_environment(self.child_env, {**cache_env, **extra_env}),
            argv_prefix=() if trusted else self.child_argv_prefix,
            cwd=None if trusted else self.cwd,
            memory_mb=self.memory_mb,
        )

    def _pool_for(self, env: dict[str, str], *, trusted: bool, fresh: bool = False) -> WarmPool | None:
        if not self._warm:
            return None
        key = _child_key(env, "fresh" if fresh else trusted)
        pool = self._pools.get(key)
        if pool is None:
            # Warm children cost memory: besides the default, only the latest environment keeps its own.
            for old in [k for k in self._pools if k[0] and k[0] != key[0]]:
                self._pools.pop(old).close()
            env = dict(env)
            if trusted:
                pool = WarmPool(lambda: self._new_child(env, trusted=True))
            elif fresh:
                pool = WarmPool(lambda: self._new_child({**self._preload, **env}, cache=False))
            else:
                pool = WarmPool(lambda: self._new_child({**self._preload, **env}))
            self._pools[key] = pool
        return pool

    def _prestart_for(self, exercise: Exercise, learner_file: str | os.PathLike | None) -> None:
        try:
            settings = check_settings(self._find_check(exercise, ()))
            env = settings.child_env
        except (OSError, SyntaxError, ValueError, TypeError):
            return  # run() reports it
        path = Path(learner_file) if learner_file is not None else exercise.exercise_path()
        self._prestarted[_child_key(env, False)] = self._new_child({**_preload_env(path), **env})
        if env:
            self._prestarted[_child_key(env, True)] = self._new_child(env, trusted=True)
        if settings.fresh_learners:
            self._prestarted[_child_key(env, "fresh")] = self._new_child({**_preload_env(path), **env}, cache=False)

    def _take_child(self, extra_env: dict[str, str]) -> LearnerProcess:
        proc = self._prestarted.pop(_child_key(extra_env, False), None)
        if proc is not None:
            return proc
        pool = self._pool_for(extra_env, trusted=False)
        return pool.take() if pool is not None else self._new_child({**self._preload, **extra_env})

    def _fresh_child(self, learner_file: Path, extra_env: dict[str, str]) -> LearnerProcess:
        """A learner child that shares no cache with earlier ones (`LearnerProxy.restart`)."""
        proc = self._prestarted.pop(_child_key(extra_env, "fresh"), None)
        if proc is not None:
            return proc
        pool = self._pool_for(extra_env, trusted=False, fresh=True)
        return pool.take() if pool is not None else self._new_child({**_preload_env(learner_file), **extra_env},
                                                                    cache=False)

    def _take_trusted_child(self, env: dict[str, str]) -> LearnerProcess:
        proc = self._prestarted.pop(_child_key(env, True), None)
        if proc is not None:
            return proc
        pool = self._pool_for(env, trusted=True)
        return pool.take() if pool is not None else self._new_child(env, trusted=True)

    def _reference_module(self, path: Path) -> tuple[Any, str]:
        """The imported reference and its identity (path, mtime and a hash of its source)."""
        key = (str(path), path.stat().st_mtime_ns)
        if key not in self._references:
            try:
                source = path.read_bytes()
            except OSError as e:
                raise ReferenceError_(f"cannot read the reference solution {path}: {e}") from e
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
            identity = f"{path}\0{key[1]}\0{hashlib.sha256(source).hexdigest()}"
            self._references[key] = (module, identity)
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
        first_failure: bool = False,
    ) -> ExerciseResult:
        """Run the exercise's check on `learner_file`. With `first_failure`, the check's tests
        stop at the first one that fails (the verdict is the same; later tests are not run)."""
        if self._closed:
            raise RuntimeError("this CheckSession is closed")
        start = time.monotonic()
        seed = draw_seed(seed)
        learner_path = Path(learner_file) if learner_file is not None else exercise.exercise_path()
        learner_path = learner_path.resolve()

        def early(cause: str, message: str) -> ExerciseResult:
            message = f"{message}\n{seed_line(seed)}"
            outcome = CheckOutcome("setup", "error", cause, message, 0.0)
            return ExerciseResult(exercise.name, False, cause, message, [outcome], time.monotonic() - start, seed)

        check_path = self._find_check(exercise, tuple(Path(p) for p in extra_check_dirs))
        self._preload = _preload_env(learner_path)  # for the next child: the learner checks again soon
        if not learner_path.is_file():
            return early("import_error", _("{file} does not exist. `jaxlings reset {exercise}` restores the starter "
                                           "file.").format(file=_display(learner_path, exercise),
                                                           exercise=exercise.name))
        if not check_path.is_file():
            return early("check_error", f"the check module {check_path.name} is missing from this course.")
        try:
            settings = check_settings(check_path)
        except (SyntaxError, ValueError, TypeError) as e:
            return early("check_error", f"the check module {check_path.name} has unreadable settings: {e}")
        budget = exercise.timeout or settings.timeout or DEFAULT_TIMEOUT
        child_env = {**settings.child_env, **(env or {})}
        run = _Run(self, exercise, learner_path, exercise.solution_path(), seed, budget, child_env,
                   _display(learner_path, exercise), settings)
        collector = _Collector(settings.messages)
        if settings.fresh_learners:
            self._pool_for(child_env, trusted=False, fresh=True)  # ready for the next run (`_refill`)
        try:
            with _PYTEST_LOCK:
                exit_code = _run_pytest(check_path, run, collector, seed, first_failure)
        finally:
            run.close()
            output = run.learner.output()  # after close: everything the learner printed has been read
            self._refill()
            _bound_compiled_code()
        return _result(exercise, collector, exit_code, seed, time.monotonic() - start, output, run.trace)

    def _refill(self) -> None:
        """Start the children the next check will take, now that this one is over."""
        if not self._closed:
            for pool in self._pools.values():
                pool.prestart()

    def close(self) -> None:
        self._closed = True
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()
        for proc in self._prestarted.values():
            proc.close()
        self._prestarted.clear()
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None

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


def _child_key(env: dict[str, str], trusted: bool | str) -> tuple:
    return (tuple(sorted(env.items())), trusted)


def _preload_env(path: Path) -> dict[str, str]:
    """Which heavy libraries (`child.PRELOADABLE`) the learner's file imports, for a child to import early."""
    from course.engine.child import PRELOADABLE

    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return {}
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    wanted = sorted({m for m in PRELOADABLE for n in names if n == m or n.startswith(m + ".")})
    return {"JAXLINGS_PRELOAD": ",".join(wanted)} if wanted else {}


def _memory_maps() -> int | None:
    """How many memory mappings this process holds (Linux), None where that cannot be read."""
    try:
        with open("/proc/self/maps", "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return None


def _map_limit() -> int:
    try:
        with open("/proc/sys/vm/max_map_count", "rb") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return 65530  # Linux's default


def _bound_compiled_code(limit: int | None = None) -> bool:
    """Drop JAX's compiled programs once they hold half the mappings the kernel allows.

    Every program XLA compiles here stays mapped while JAX's caches hold it. A
    reference that runs eagerly through code that makes new functions on every
    call (optax.MultiSteps' conditionals, say) compiles anew on every check, and
    a long-lived session (the app, the check server, a grading worker) would
    reach the kernel's limit after about a hundred checks and crash inside
    XLA. Dropping the caches costs the next check a few compilations. True if
    they were dropped."""
    maps = _memory_maps()
    if maps is None or maps < (limit if limit is not None else _map_limit() // 2):
        return False
    import gc

    import jax

    # Learners' programs are compiled in the evaluator process (program_reader), never here.
    jax.clear_caches()
    gc.collect()
    return True


def _warm_parent() -> None:
    import pytest  # noqa: F401
    import numpy  # noqa: F401
    import jax
    import jax.numpy as jnp
    import optax  # noqa: F401
    from flax import nnx  # noqa: F401

    jax.block_until_ready(jnp.zeros(1) + 1)


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


def run_exercise(exercise: Exercise, *, compile_cache: CompileCache | None | str = "workspace",
                 **kw: Any) -> ExerciseResult:
    """Check one exercise in a short-lived session, as a one-off `jaxlings check` does.

    Its one child starts at once, while this process imports pytest and JAX;
    compiled programs come from the workspace's caches unless `compile_cache`
    says otherwise (None: no cache).
    """
    if compile_cache == "workspace":
        compile_cache = workspace_compile_cache()
    with CheckSession(warm=False, prestart=exercise, prestart_file=kw.get("learner_file"),
                      compile_cache=compile_cache) as session:
        return session.run(exercise, **kw)
